#pragma once
// Thread-count control and a deterministic blocked parallel reduction.
//
// Determinism contract (DESIGN.md, "Randomness"): a parallel sum over rows is computed in fixed
// blocks of kReduceBlock rows whose layout depends only on the number of rows; each block is
// summed sequentially, then the block sums are added in block order. The result is therefore
// bit-identical for any number of threads.

#include <algorithm>
#include <utility>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/interrupt.hpp"  // step loops of the kernels poll it (Ctrl-C)
#include "privlearn/types.hpp"

#if PRIVLEARN_HAS_OPENMP
#include <omp.h>
#endif

namespace privlearn::parallel {

// Rows per reduction block. A constant, so the block layout depends on the problem size only.
inline constexpr Index kReduceBlock = 256;
// Blocks whose partial sums are held at once, at least (see kPartialBudget).
inline constexpr Index kReduceWave = 64;
// Minimum number of independent work items before a parallel region is opened (a region also
// needs enough work: see threads_for). Results never depend on it.
inline constexpr Index kMinParallelItems = 4;
// Memory budget (doubles) of the block partial sums deterministic_sum holds at once: a wave of
// max(kReduceWave, kPartialBudget / dim) blocks is one parallel region, so a large sum opens a
// few regions (one barrier each), not one per 64 blocks. Memory only, never the result.
inline constexpr Index kPartialBudget = Index{1} << 18;

// ---- How many threads a parallel region gets (issue 14: threads never make a call slower) ----
//
// Every parallel region of the core asks threads_for(n_threads, work) for its team size, where
// `work` estimates the region's cost in NANOSECONDS OF ONE THREAD, from its size and the
// per-item costs below. A region ends in a barrier. On a loaded machine (another process busy
// on one of the cores) a thread of the team can be descheduled for a scheduler time slice
// (milliseconds) while the others wait for it there; with GNU OpenMP's default wait policy an
// idle thread also spins between regions, uses up its share of the loaded core and is then
// descheduled exactly when the next region needs it: a DP-SCD step (1000 rows x 90 features,
// ~30 us) took 18x longer on 2 threads than on one. So a second thread is used only where each
// thread's share of the work is large next to that wait:
//
//   threads = min(n_threads (or the default), cores, floor(work / min_thread_work_ns())), >= 1.
//
// Measured with bench/python/bench_threads.py --calibrate (policy off; 40-320 interleaved
// repetitions per size; bench/results/threads.json): one region of W ms of 1-thread work
// (normals, dynamic chunks) on 2 threads vs 1, quiet and with a busy loop pinned to one of the
// 2 cores (Intel Xeon, 2 vCPUs, KVM, Linux 6.18, 2026-11-25, other users' jobs on the machine);
// ratios of medians (of means in brackets):
//
//   W (ms)                       0.02  0.04  0.09  0.2   0.45  0.9   1.8   3.7   7.4   15    30
//   PASSIVE, busy loop           0.84  0.90  0.95  0.98  0.99  0.99  1.03  0.99  0.99  1.00  1.00
//                               (0.87)(0.88)(0.92)(0.92)(0.96)(0.97)(1.09)(1.04)(0.97)(1.04)(1.06)
//   PASSIVE, quiet               0.31  0.90  0.87  1.23  1.53  1.72  1.82  1.88  1.90  1.91  1.94
//   spinning, busy loop          0.97  1.60  1.91  1.84  1.85  1.62  1.83  1.87  1.09  1.59  1.44
//                               (0.28)(0.44)(0.18)(0.21)(0.22)(0.31)(0.95)(0.93)(1.04)(1.45)(1.47)
//
// With passive waiting (OMP_WAIT_POLICY=PASSIVE, which `import privlearn` sets before loading
// the core) a woken thread that gets no CPU simply finds no work left, and 2 threads stay at
// >= 0.95x under load (median and mean) from W* = 0.45 ms on (0.1 ms in an earlier run); with
// spinning threads (GNU's default: the wait policy not PASSIVE because the user chose
// otherwise or libgomp was loaded before privlearn set it) the median looks good but the mean
// collapses (a region waits a whole time slice for a spinning thread that used up its share)
// up to W* = 7.4 ms (13 ms in the earlier run). Thresholds per thread (each of 2 threads gets
// W / 2), rounded up: kMinThreadWorkNs = 0.25 ms, kMinThreadWorkSpinNs = 6.5 ms. These are
// durations on this machine: one much slower or faster moves the break-even point by its speed
// ratio; near W* a wrong guess costs ~1.0x either way.
inline constexpr double kMinThreadWorkNs = 2.5e5;
inline constexpr double kMinThreadWorkSpinNs = 6.5e6;
//
// Big regions use dynamic scheduling with small chunks (tens of microseconds): a thread on the
// quiet core takes over the chunks of a descheduled one, so the barrier waits for one chunk at
// most (static halves would wait for half the work). No region is kept open around a loop of
// steps (SGD / SCD steps, quadratic-gradient iterations, max-cover picks): each step reads the
// previous step's sum, so a persistent region needs one barrier per step all the same, and the
// barrier, not the fork, is what a loaded machine makes expensive; with passive waiting a
// pooled libgomp fork/join costs ~10-50 us, which only steps above the threshold pay.
//
// Per-item costs (ns, 1 thread, same machine; bench_random / bench_quadgrad / bench_threads
// runs). They only need to be right within ~2x: they decide on which side of the threshold a
// region falls. Where a region's per-item cost varies, the estimate takes the cheap end, so that
// a region too small for threads is never given them.
inline constexpr double kNsPerEntry = 0.25;        // one entry of a row pass (dot and/or axpy)
inline constexpr double kNsPerChachaBlock = 28.0;  // one ChaCha20 block (64 bytes) of output

// Team size for a region of `work_ns` nanoseconds of single-thread work (the formula above).
// Validates n_threads like resolve_threads (std::invalid_argument when n_threads >
// max_threads(), even when the region will run on one thread), keeps its fork() rule (1 thread
// in a forked child) and its thread-creation check (for the count actually used). n_threads is
// a ceiling, never an order: the result is in [1, max(1, n_threads)]. Call it before a parallel
// region, never inside one. Results never depend on it (every region's arithmetic is fixed by
// the problem, not the team).
//
// PRIVLEARN_MIN_THREAD_WORK_NS (environment, read once per process) replaces the threshold, for
// measuring it: 0 switches the policy off (every region gets the requested count, as before
// issue 14, even above the number of cores).
int threads_for(int n_threads, double work_ns);
// The minimum work per thread in force, fixed at the first call: PRIVLEARN_MIN_THREAD_WORK_NS
// when set; else kMinThreadWorkNs when the environment says OpenMP threads wait passively
// (OMP_WAIT_POLICY=PASSIVE, any case, and GOMP_SPINCOUNT unset or 0: libgomp read the same
// variables when it was loaded), kMinThreadWorkSpinNs otherwise.
double min_thread_work_ns() noexcept;
// Processors this process may run on (omp_get_num_procs(); 1 without OpenMP).
int usable_cores() noexcept;

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
// throw (validate inputs before calling). work_per_row_ns estimates one row's cost for the
// thread policy (threads_for); the overload without it assumes dim dense multiply-adds
// (kNsPerEntry each), the cheap end for a dot product plus an axpy. Sparse callers pass their
// own (e.g. the average non-zeros per row times kNsPerEntry). Results never depend on it.
template <class AddRow>
void deterministic_sum(Index n_rows, Index dim, int n_threads, double work_per_row_ns,
                       AddRow&& add_row, VecMut out) {
  checks::non_negative(n_rows, "n_rows");
  checks::require(out.size() == dim, "deterministic_sum: output has the wrong length");
  check_threads(n_threads);
  out.setZero();
  if (n_rows == 0) return;
  const Index n_blocks = (n_rows + kReduceBlock - 1) / kReduceBlock;
  if (n_blocks == 1) {  // one block: the same sequential sum, without temporaries
    for (Index i = 0; i < n_rows; ++i) add_row(i, out);
    return;
  }
  const int threads = threads_for(n_threads, static_cast<double>(n_rows) * work_per_row_ns);
  if (threads == 1) {  // the same block sums added in the same order, without the partials
    VectorXd acc(dim);
    for (Index lo = 0; lo < n_rows; lo += kReduceBlock) {
      acc.setZero();
      const Index hi = std::min(n_rows, lo + kReduceBlock);
      for (Index i = lo; i < hi; ++i) add_row(i, VecMut(acc));
      out += acc;
    }
    return;
  }
  const Index wave_max = std::max<Index>(kReduceWave, kPartialBudget / std::max<Index>(1, dim));
  RowMatrixXd partial(std::min(n_blocks, wave_max), dim);
  for (Index wave_start = 0; wave_start < n_blocks; wave_start += wave_max) {
    const Index wave = std::min(wave_max, n_blocks - wave_start);
    // Dynamic chunks of one block (256 rows, microseconds): a thread on a quiet core takes over
    // the blocks of a descheduled one, and the wait at the barrier is at most one block.
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

template <class AddRow>
void deterministic_sum(Index n_rows, Index dim, int n_threads, AddRow&& add_row, VecMut out) {
  deterministic_sum(n_rows, dim, n_threads, static_cast<double>(dim) * kNsPerEntry,
                    std::forward<AddRow>(add_row), out);
}

// Column sums of X through deterministic_sum (exposed for tests and as the simplest example).
void blocked_column_sum(const MatRef& X, int n_threads, VecMut out);

}  // namespace privlearn::parallel
