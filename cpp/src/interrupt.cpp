#include "privlearn/interrupt.hpp"

#include <atomic>
#include <chrono>

#if PRIVLEARN_HAS_OPENMP
#include <omp.h>
#endif

namespace privlearn::interrupt {

namespace {
std::atomic<Checker> g_checker{nullptr};

using Clock = std::chrono::steady_clock;
// Per thread: when the checker last ran (or the clock started); zero: not started.
thread_local Clock::time_point t_last{};
}  // namespace

void set_checker(Checker c) noexcept { g_checker.store(c); }

Checker checker() noexcept { return g_checker.load(); }

void check_now() {
  const Checker c = g_checker.load(std::memory_order_acquire);
  if (c != nullptr && c()) throw Interrupted();
}

namespace {
// True when kPollIntervalMs have passed since this thread's last check (and records the check);
// the first call of a thread only starts its clock.
bool check_due() noexcept {
  const Clock::time_point now = Clock::now();
  if (t_last == Clock::time_point{}) {
    t_last = now;
    return false;
  }
  if (now - t_last < std::chrono::milliseconds(kPollIntervalMs)) return false;
  t_last = now;
  return true;
}
}  // namespace

void poll() {
  const Checker c = g_checker.load(std::memory_order_relaxed);
  if (c == nullptr) return;
#if PRIVLEARN_HAS_OPENMP
  if (omp_in_parallel()) return;
#endif
  if (check_due() && c()) throw Interrupted();
}

bool stop_in_region(std::atomic<bool>& flag) noexcept {
  if (flag.load(std::memory_order_relaxed)) return true;
#if PRIVLEARN_HAS_OPENMP
  if (omp_get_thread_num() != 0) return false;
#endif
  const Checker c = g_checker.load(std::memory_order_relaxed);
  if (c != nullptr && check_due() && c()) flag.store(true, std::memory_order_relaxed);
  return flag.load(std::memory_order_relaxed);
}

void throw_if(const std::atomic<bool>& flag) {
  if (flag.load()) throw Interrupted();
}

}  // namespace privlearn::interrupt
