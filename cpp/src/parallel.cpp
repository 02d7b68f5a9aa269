#include "privlearn/parallel.hpp"

#include <atomic>

namespace privlearn::parallel {

namespace {
std::atomic<int> g_default_threads{0};
}

bool has_openmp() noexcept { return PRIVLEARN_HAS_OPENMP != 0; }

int default_threads() noexcept {
  const int configured = g_default_threads.load();
  if (configured > 0) return configured;
#if PRIVLEARN_HAS_OPENMP
  return std::max(1, omp_get_max_threads());
#else
  return 1;
#endif
}

void set_default_threads(int n) noexcept { g_default_threads.store(n > 0 ? n : 0); }

int resolve_threads(int n_threads) noexcept {
#if PRIVLEARN_HAS_OPENMP
  return n_threads > 0 ? n_threads : default_threads();
#else
  (void)n_threads;
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
