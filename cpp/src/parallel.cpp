#include "privlearn/parallel.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <condition_variable>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace privlearn::parallel {

namespace {
std::atomic<int> g_default_threads{0};
// Largest thread count already known to be creatable (1 needs no extra thread).
std::atomic<int> g_checked_threads{1};
std::mutex g_check_mutex;
std::atomic<bool> g_forked_child{false};

extern "C" void on_fork_child() { g_forked_child.store(true); }

// Registered once when the shared library is loaded (see parallel.hpp, "fork()").
const bool g_atfork_registered = [] {
  return pthread_atfork(nullptr, nullptr, &on_fork_child) == 0;
}();

// Starts `extra` threads that exist at the same time, then releases and joins them. Returns
// false when the operating system refuses one of them.
bool can_start_threads(int extra) {
  std::mutex m;
  std::condition_variable cv;
  bool go = false;
  bool ok = true;
  std::vector<std::thread> started;
  started.reserve(static_cast<std::size_t>(extra));
  try {
    for (int k = 0; k < extra; ++k)
      started.emplace_back([&] {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return go; });
      });
  } catch (const std::system_error&) {
    ok = false;
  } catch (const std::bad_alloc&) {
    ok = false;
  }
  {
    std::lock_guard<std::mutex> lock(m);
    go = true;
  }
  cv.notify_all();
  for (auto& t : started) t.join();
  return ok;
}

// True when the environment makes libgomp's idle threads sleep at once: OMP_WAIT_POLICY is
// PASSIVE (any case, surrounding blanks ignored, as libgomp parses it) and GOMP_SPINCOUNT, which
// would override the spin count, is unset or 0.
bool passive_waiting_from_environment() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if (policy == nullptr) return false;
  std::string word;
  for (const char* c = policy; *c != '\0'; ++c)
    if (!std::isspace(static_cast<unsigned char>(*c)))
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  if (word != "passive") return false;
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (spin == nullptr || *spin == '\0') return true;
  char* end = nullptr;
  const double v = std::strtod(spin, &end);
  return end != spin && v == 0.0;
}

// PRIVLEARN_MIN_THREAD_WORK_NS, when set to a finite number >= 0 (nothing else on the line);
// otherwise the measured threshold for the wait policy in force (parallel.hpp). An unparsable
// value is ignored rather than failing every kernel.
double min_work_from_environment() {
  const double measured = passive_waiting_from_environment() ? kMinThreadWorkNs
                                                             : kMinThreadWorkSpinNs;
  const char* text = std::getenv("PRIVLEARN_MIN_THREAD_WORK_NS");
  if (text == nullptr || *text == '\0') return measured;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  while (std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (end == text || *end != '\0' || !std::isfinite(v) || v < 0.0) return measured;
  return v;
}
}  // namespace

bool has_openmp() noexcept { return PRIVLEARN_HAS_OPENMP != 0; }

bool in_forked_child() noexcept { return g_forked_child.load(std::memory_order_relaxed); }

int max_threads() noexcept {
  // Computed once: hardware_concurrency() asks the system, and this runs on every parallel call.
  static const int limit = [] {
    const unsigned hw = std::thread::hardware_concurrency();
    const long four_hw = 4L * static_cast<long>(hw == 0 ? 1 : hw);
    return static_cast<int>(std::max(256L, std::min(four_hw, 1L << 20)));
  }();
  return limit;
}

int default_threads() noexcept {
  const int configured = g_default_threads.load();
  if (configured > 0) return std::min(configured, max_threads());
#if PRIVLEARN_HAS_OPENMP
  return std::clamp(omp_get_max_threads(), 1, max_threads());
#else
  return 1;
#endif
}

void set_default_threads(int n) noexcept { g_default_threads.store(n > 0 ? n : 0); }

void check_threads(int n_threads) {
  if (n_threads > max_threads())
    checks::fail("n_threads must be at most " + std::to_string(max_threads()) +
                 " (4 x the hardware threads, at least 256), got " + std::to_string(n_threads));
}

int resolve_threads(int n_threads) {
  (void)g_atfork_registered;
  check_threads(n_threads);
#if PRIVLEARN_HAS_OPENMP
  if (in_forked_child()) return 1;
  const int threads = n_threads > 0 ? n_threads : default_threads();
  if (threads > g_checked_threads.load()) {
    std::lock_guard<std::mutex> lock(g_check_mutex);
    if (threads > g_checked_threads.load()) {
      if (!can_start_threads(threads - 1))
        checks::fail("could not create " + std::to_string(threads) +
                     " threads (the operating system refused); ask for fewer n_threads");
      g_checked_threads.store(threads);
    }
  }
  return threads;
#else
  (void)n_threads;
  return 1;
#endif
}

double min_thread_work_ns() noexcept {
  // Read once: the environment is not thread-safe to read while Python may change it.
  static const double v = min_work_from_environment();
  return v;
}

int usable_cores() noexcept {
#if PRIVLEARN_HAS_OPENMP
  // The processors of this process's affinity mask when the OpenMP runtime started.
  static const int cores = std::max(1, omp_get_num_procs());
  return cores;
#else
  return 1;
#endif
}

int threads_for(int n_threads, double work_ns) {
  check_threads(n_threads);
#if PRIVLEARN_HAS_OPENMP
  if (in_forked_child()) return 1;
  const int requested = n_threads > 0 ? n_threads : default_threads();
  if (requested <= 1) return 1;
  const double per_thread = min_thread_work_ns();
  if (per_thread == 0.0) return resolve_threads(requested);  // policy off (measurements)
  // More threads than cores always share a core, i.e. the case the policy avoids.
  int limit = std::min(requested, usable_cores());
  // floor(work / per_thread), computed without overflow (NaN or negative work: 1 thread).
  const double fit = work_ns >= per_thread ? std::floor(work_ns / per_thread) : 1.0;
  if (fit < static_cast<double>(limit)) limit = static_cast<int>(fit);
  if (limit <= 1) return 1;
  return resolve_threads(limit);
#else
  (void)work_ns;
  return 1;
#endif
}

void blocked_column_sum(const MatRef& X, int n_threads, VecMut out) {
  checks::require(out.size() == X.cols(), "blocked_column_sum: output has the wrong length");
  checks::all_finite(X, "X");
  deterministic_sum(
      X.rows(), X.cols(), n_threads,
      [&X](Index i, VecMut acc) { acc += X.row(i).transpose(); }, out);
}

}  // namespace privlearn::parallel
