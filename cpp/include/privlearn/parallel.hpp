#pragma once
// Thread-count control and a deterministic blocked parallel reduction.
//
// Determinism contract (DESIGN.md, "Randomness"): a parallel sum over rows is computed in fixed
// blocks of kReduceBlock rows whose layout depends only on the number of rows; each block is
// summed sequentially, then the block sums are added in block order. The result is therefore
// bit-identical for any number of threads.

#include <algorithm>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/types.hpp"

#if PRIVLEARN_HAS_OPENMP
#include <omp.h>
#endif

namespace privlearn::parallel {

// Rows per reduction block. A constant, so the block layout depends on the problem size only.
inline constexpr Index kReduceBlock = 256;
// Blocks whose partial sums are held at once (bounds memory to kWave * dim doubles).
inline constexpr Index kReduceWave = 64;
// Minimum number of independent work items before a parallel region is opened: below it the
// work (microseconds) is smaller than the cost of waking threads, which on a loaded machine is
// a scheduler time slice (milliseconds). Results never depend on it.
inline constexpr Index kMinParallelItems = 4;

// True when the core was compiled with OpenMP.
bool has_openmp() noexcept;
// Largest thread count a kernel accepts: max(4 * hardware threads, 256). Larger requests are
// an error (std::invalid_argument): GNU OpenMP allocates per-thread team state on the stack
// and aborts or crashes the process when it cannot create the threads.
int max_threads() noexcept;
// Default thread count used when a kernel gets n_threads <= 0 (OMP_NUM_THREADS or all cores,
// unless changed with set_default_threads), capped at max_threads().
int default_threads() noexcept;
// Changes the default thread count; n <= 0 restores the OpenMP default.
void set_default_threads(int n) noexcept;
// Maps a user request to a thread count: n > 0 is used as given, n <= 0 means the default.
// Throws std::invalid_argument when n > max_threads(), or when the operating system refuses to
// create that many threads: the first request for k > 1 threads (per process) starts k - 1
// short-lived threads at once to check, so a failure becomes an exception here instead of a
// fatal error inside the OpenMP runtime. Call it before a parallel region, never inside one.
//
// fork(): GNU OpenMP's thread pool does not survive fork(); a child that opens a parallel
// region with more than one thread after its parent used OpenMP deadlocks. A pthread_atfork
// child handler (registered when the library is loaded) therefore marks the child, and in a
// forked child every request resolves to one thread: multiprocessing's 'fork' start method and
// joblib's multiprocessing backend work, single-threaded, with identical results (results never
// depend on the thread count).
int resolve_threads(int n_threads);
// Throws std::invalid_argument when n_threads > max_threads() (kernels call it in their
// validation, so a bad request fails even when the problem is too small to open a region).
void check_threads(int n_threads);
// True in a process created by fork() from a process that had loaded the core.
bool in_forked_child() noexcept;

// Sum over rows i in [0, n_rows) of add_row(i, acc), into out (length dim), deterministically.
// add_row(Index i, Eigen::Ref<VectorXd> acc) must add row i's contribution to acc and must not
// throw (validate inputs before calling).
template <class AddRow>
void deterministic_sum(Index n_rows, Index dim, int n_threads, AddRow&& add_row, VecMut out) {
  checks::non_negative(n_rows, "n_rows");
  checks::require(out.size() == dim, "deterministic_sum: output has the wrong length");
  out.setZero();
  if (n_rows == 0) return;
  const Index n_blocks = (n_rows + kReduceBlock - 1) / kReduceBlock;
  if (n_blocks == 1) {  // one block: the same sequential sum, without temporaries
    for (Index i = 0; i < n_rows; ++i) add_row(i, out);
    return;
  }
  const int threads = resolve_threads(n_threads);
  RowMatrixXd partial(std::min(n_blocks, kReduceWave), dim);
  for (Index wave_start = 0; wave_start < n_blocks; wave_start += kReduceWave) {
    const Index wave = std::min(kReduceWave, n_blocks - wave_start);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && wave >= kMinParallelItems)
#endif
    for (Index b = 0; b < wave; ++b) {
      VectorXd acc = VectorXd::Zero(dim);
      const Index lo = (wave_start + b) * kReduceBlock;
      const Index hi = std::min(n_rows, lo + kReduceBlock);
      for (Index i = lo; i < hi; ++i) add_row(i, VecMut(acc));
      partial.row(b) = acc.transpose();
    }
    for (Index b = 0; b < wave; ++b) out += partial.row(b).transpose();
  }
  (void)threads;
}

// Column sums of X through deterministic_sum (exposed for tests and as the simplest example).
void blocked_column_sum(const MatRef& X, int n_threads, VecMut out);

}  // namespace privlearn::parallel
