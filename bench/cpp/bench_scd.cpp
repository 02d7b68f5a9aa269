// Epoch time of private stochastic coordinate descent (privlearn::linear::scd_train, Algorithm 1
// of Damaskinos et al. 2021, variant "dual") on synthetic dense data of the YearPredictionMSD
// shape (463,715 x 90, rows normalised), for 1 and 2 threads (or --threads), next to the time of
// one X^T (X w) pass over the same array (Eigen, in this binary): the memory-bandwidth
// reference, since one DP-SCD epoch touches every row about once for x_j^T v and once for the
// update of v. Repetitions are interleaved (round robin over every configuration, so that all see
// the same background load) and the median is reported.
//
// Usage: bench_scd [--n N] [--d D] [--reps R] [--threads 1,2,...] [--seed S]
//                  [--loss squared|hinge|log_loss] [--batch L] [--sampling poisson|fixed]
//                  [--clip C] [--sigma S] [--lambda LAM] [--epochs E] [--no-hugepages]
//                  [--breakdown]
//
// Prints one JSON line per measurement, e.g.
//   {"bench": "scd", "kind": "train", "impl": "core-cpp", "variant": "dual", "loss": "squared",
//    "sampling": "poisson", "batch_size": 1000, "threads": 1, "n": 463715, "d": 90,
//    "steps": 464, "epochs": 1, "reps": 5, "median_s": 0.1, "min_s": 0.1,
//    "s_per_epoch": 0.1, "rate": 4.6e6, "unit": "examples/s", "us_per_step": 215}
//   {"bench": "scd", "kind": "bandwidth", "impl": "eigen", "op": "XT(Xw)", "threads": 1, ...,
//    "median_s": 0.03, "gb_per_s": 22.0}
//   {"bench": "scd", "kind": "ratio", "threads": 1, "epoch_over_xtxw": 3.3, "target": 2, ...}
// The X^T (X w) pass is Eigen's X.transpose() * (X * w) for 1 thread; for t > 1 threads, t
// contiguous row ranges each compute their X_r^T (X_r w) (OpenMP) and the partial results are
// added. Its GB/s counts two reads of X (8 n d bytes each). The last line is
//   {"bench": "scd", "kind": "load", "background_load_cores": 0.1, "wall_s": 9.0}
// the CPU time other processes used per second while this binary measured (0 = quiet machine;
// on a 2-core machine anything near 1 makes the 2-thread numbers meaningless).
//
// With --breakdown it also times the pieces of one dual step in isolation, on real Poisson
// batches, and prints one line per piece ("kind": "component", "us_per_call", "s_per_epoch"),
// so that the epoch time can be attributed:
//   row_norms        ||x_i||^2 for every row, which scd_train computes once per call;
//   poisson_sample   the batch (geometric gaps, O(L));
//   gather_dot       x_j^T v over the batch rows, rows cold (evicted beforehand), as the kernel
//                    reads them at the start of a step;
//   gather_dot_prefetch  the same with a software prefetch of the rows 8 batch members ahead
//                    (a bench-only experiment, not what the core does);
//   contiguous_dot   x_j^T v over as many contiguous rows (hardware prefetch works): the
//                    bandwidth-bound cost of the same bytes;
//   axpy_sum         the deterministic blocked sum of zeta_j x_j over the batch (rows warm, as
//                    in the kernel, right after gather_dot);
//   noise            the |B| + d normals of one step.
// Cold rows: before every timed call a 64 MiB buffer is swept (larger than the L3 of the
// machines we use), so each call reads its rows from memory, as in a real epoch, where the
// batch rows of a step were last touched an epoch ago.
//
// Data: X (n, d) row-major, entries standard normal (as privlearn.data.make_msd_like), then
// every feature divided by its maximum |x| (maxabs) and every row scaled to unit norm;
// y = x^T w* sqrt(d) + N(0, 1) (squared loss) or its sign (hinge, log_loss), w* uniform on the
// unit sphere; all drawn with privlearn::random from --seed. X's memory is advised for
// transparent huge pages (madvise, Linux) before it is first written, as numpy does for large
// arrays, so that the binary sees the memory the Python API sees (--no-hugepages: 4 KiB pages).
//
// Dependency-free (std::chrono only); built when CMake option PRIVLEARN_BUILD_BENCH=ON.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "privlearn/linear/losses.hpp"
#include "privlearn/linear/scd.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"
#include "privlearn/samplers.hpp"
#include "privlearn/types.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace {

namespace pb = privlearn::bench;
namespace pl = privlearn::linear;
namespace pr = privlearn::random;
using privlearn::DenseRows;
using privlearn::Index;
using privlearn::RowMatrixXd;
using privlearn::VecMut;
using privlearn::VectorXd;

struct Options : pb::CommonOptions {  // CommonOptions defaults: reps 5, threads 1,2, seed 1
  Index n = 463715;  // YearPredictionMSD training set
  Index d = 90;
  std::string loss = "squared";
  std::string sampling = "poisson";
  Index batch = 1000;  // L
  double clip = 1.0;   // C
  double sigma = 1.0;  // noise multiplier: noise_std = sqrt(2) sigma C (Lemma 1)
  double lambda = 1e-4;
  Index epochs = 1;
  bool hugepages = true;
  bool breakdown = false;
};

constexpr const char* kUsage =
    " [--n N] [--d D] [--reps R] [--threads 1,2,...] [--seed S]\n"
    "          [--loss squared|hinge|log_loss] [--batch L] [--sampling poisson|fixed]\n"
    "          [--clip C] [--sigma S] [--lambda LAM] [--epochs E] [--no-hugepages]\n"
    "          [--breakdown]\n"
    "  --n         examples (default 463715, YearPredictionMSD's training set)\n"
    "  --d         features (default 90)\n"
    "  --reps      repetitions, the median is reported (default 5)\n"
    "  --threads   comma-separated thread counts (default 1,2)\n"
    "  --seed      integer seed of the data and of the training key (default 1)\n"
    "  --loss      squared (ridge, default), hinge or log_loss\n"
    "  --batch     expected batch size L (default 1000)\n"
    "  --sampling  poisson (rate L/n, default) or fixed (L rows without replacement)\n"
    "  --clip      update bound C (default 1)\n"
    "  --sigma     noise multiplier; noise_std = sqrt(2) sigma C (default 1)\n"
    "  --lambda    L2 regularisation lambda (default 1e-4)\n"
    "  --epochs    epochs per timed call, reported per epoch (default 1)\n"
    "  --no-hugepages  do not ask for transparent huge pages for X (numpy does)\n"
    "  --breakdown also time the pieces of one dual step in isolation\n";

Options parse(int argc, char** argv) {
  const pb::Cli cli{argv[0], kUsage};
  Options o;
  pb::parse_args(cli, argc, argv, o, [&](const std::string& arg, auto&& value) {
    if (arg == "--n") {
      o.n = static_cast<Index>(pb::parse_u64(cli, value()));
      if (o.n < 1) pb::usage(cli, "--n must be positive");
    } else if (arg == "--d") {
      o.d = static_cast<Index>(pb::parse_u64(cli, value()));
      if (o.d < 1) pb::usage(cli, "--d must be positive");
    } else if (arg == "--loss") {
      o.loss = value();
      pb::check_subset(cli, o.loss, {"squared", "hinge", "log_loss"},
                       "--loss: expected squared, hinge or log_loss");
    } else if (arg == "--sampling") {
      o.sampling = value();
      pb::check_subset(cli, o.sampling, {"poisson", "fixed"},
                       "--sampling: expected poisson or fixed");
    } else if (arg == "--batch") {
      o.batch = static_cast<Index>(pb::parse_u64(cli, value()));
    } else if (arg == "--clip") {
      o.clip = pb::parse_positive_double(cli, value());
    } else if (arg == "--sigma") {
      o.sigma = pb::parse_positive_double(cli, value());
    } else if (arg == "--lambda") {
      o.lambda = pb::parse_positive_double(cli, value());
    } else if (arg == "--epochs") {
      o.epochs = static_cast<Index>(
          pb::parse_u64_in(cli, value(), 1, 1000000, "--epochs must be in [1, 1000000]"));
    } else if (arg == "--no-hugepages") {
      o.hugepages = false;
    } else if (arg == "--breakdown") {
      o.breakdown = true;
    } else {
      return false;
    }
    return true;
  });
  // check_subset accepts "squared,hinge": a single value is required here
  if (o.loss.find(',') != std::string::npos) pb::usage(cli, "--loss takes one loss");
  if (o.sampling.find(',') != std::string::npos) pb::usage(cli, "--sampling takes one value");
  if (o.batch < 1 || o.batch > o.n) pb::usage(cli, "--batch must lie in [1, n]");
  return o;
}

volatile double g_sink = 0.0;  // keeps the optimiser from discarding results

pl::Loss loss_of(const std::string& name) {
  if (name == "hinge") return pl::Loss::hinge;
  if (name == "log_loss") return pl::Loss::log_loss;
  return pl::Loss::squared;
}

// Asks for transparent huge pages for the (untouched) memory of X, as numpy does for large
// arrays (madvise(MADV_HUGEPAGE) on Linux): the rows of a DP-SCD batch lie in different 4 KiB
// pages, so with small pages nearly every row costs a TLB miss. Whether the kernel granted them
// is reported ("AnonHugePages" of /proc/self/smaps_rollup) on stderr.
bool advise_hugepages(RowMatrixXd& X) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const std::uintptr_t page = 4096;
  const auto begin = reinterpret_cast<std::uintptr_t>(X.data());
  const std::uintptr_t end = begin + static_cast<std::uintptr_t>(X.size()) * sizeof(double);
  const std::uintptr_t lo = (begin + page - 1) / page * page, hi = end / page * page;
  return hi > lo && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) == 0;
#else
  (void)X;
  return false;
#endif
}

long anon_hugepages_kib() {
#if defined(__linux__)
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
  std::fclose(f);
  return kib;
#else
  return -1;
#endif
}

// MSD-shaped synthetic data: standard normal features, maxabs-scaled, rows normalised.
void make_data(const Options& o, RowMatrixXd& X, VectorXd& y) {
  const pr::Key key = pr::key_from_seed(o.seed);
  X.resize(o.n, o.d);
  if (o.hugepages) advise_hugepages(X);  // before the first touch
  pr::normal(key, 10, 0, static_cast<std::size_t>(o.n * o.d), X.data(), 0);
  const Eigen::RowVectorXd max_abs = X.cwiseAbs().colwise().maxCoeff();
  for (Index i = 0; i < o.n; ++i) {
    X.row(i).array() /= max_abs.array();
    const double norm = X.row(i).norm();
    if (norm > 0.0) X.row(i) /= norm;
  }
  VectorXd w_star(o.d), e(o.n);
  pr::normal(key, 12, 0, static_cast<std::size_t>(o.d), w_star.data(), 1);
  w_star /= w_star.norm();
  pr::normal(key, 13, 0, static_cast<std::size_t>(o.n), e.data(), 0);
  y.noalias() = std::sqrt(static_cast<double>(o.d)) * (X * w_star) + e;
  if (loss_of(o.loss) != pl::Loss::squared)
    for (Index i = 0; i < o.n; ++i) y[i] = y[i] > 0.0 ? 1.0 : -1.0;
}

pl::ScdParams dual_params(const Options& o) {
  pl::ScdParams p;
  p.loss = loss_of(o.loss);
  p.variant = pl::ScdVariant::dual;
  p.poisson = o.sampling == "poisson";
  p.lam = o.lambda;
  p.batch_size = o.batch;
  p.epochs = o.epochs;
  p.clip = o.clip;
  p.noise_std = std::sqrt(2.0) * o.sigma * o.clip;
  p.key = pr::key_from_seed(o.seed + 1);
  return p;
}

// u = X^T (X w): Eigen's two products for 1 thread; for more, contiguous row ranges in
// parallel, each X_r^T (X_r w), added in range order.
void xtxw(const RowMatrixXd& X, const VectorXd& w, int threads, VectorXd& u,
          std::vector<VectorXd>& part) {
  if (threads <= 1) {
    u.noalias() = X.transpose() * (X * w);
    return;
  }
  const Index n = X.rows();
  part.resize(static_cast<std::size_t>(threads));
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
  for (int r = 0; r < threads; ++r) {
    const Index lo = n * r / threads, hi = n * (r + 1) / threads;
    const auto Xr = X.middleRows(lo, hi - lo);
    part[static_cast<std::size_t>(r)].noalias() = Xr.transpose() * (Xr * w);
  }
  u = part[0];
  for (int r = 1; r < threads; ++r) u += part[static_cast<std::size_t>(r)];
}

void train_benchmarks(const Options& o, const RowMatrixXd& X, const VectorXd& y) {
  const DenseRows rows(X);
  struct Job {
    bool train;  // DP-SCD epoch, or the X^T (X w) pass
    int threads;
    std::vector<double> times;
    Index steps = 0;
  };
  std::vector<Job> jobs;
  for (const int t : o.threads) jobs.push_back({true, t, {}, 0});
  for (const int t : o.threads) jobs.push_back({false, t, {}, 0});

  VectorXd w = VectorXd::Constant(o.d, 1.0 / std::sqrt(static_cast<double>(o.d))), u(o.d);
  std::vector<VectorXd> part;
  // Warm-up on the first rows (thread pool, code paths), then one full X^T (X w) per thread
  // count (page tables of X).
  const Index n_warm = std::min<Index>(o.n, 20000);
  const RowMatrixXd X_warm = X.topRows(n_warm);
  const VectorXd y_warm = y.head(n_warm);
  for (const int t : o.threads) {
    pl::ScdParams p = dual_params(o);
    p.n_threads = t;
    p.epochs = 1;
    p.batch_size = std::min(p.batch_size, n_warm);
    g_sink = g_sink + pl::scd_train(DenseRows(X_warm), y_warm, p).v[0];
    xtxw(X, w, t, u, part);
    g_sink = g_sink + u[0];
  }
  for (int r = 0; r < o.reps; ++r) {
    for (Job& job : jobs) {  // round robin: every configuration sees the same background
      if (job.train) {
        pl::ScdParams p = dual_params(o);
        p.n_threads = job.threads;
        const auto t0 = std::chrono::steady_clock::now();
        const pl::ScdResult res = pl::scd_train(rows, y, p);
        job.times.push_back(pb::seconds_since(t0));
        job.steps = res.steps;
        g_sink = g_sink + res.v[0];
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        xtxw(X, w, job.threads, u, part);
        job.times.push_back(pb::seconds_since(t0));
        g_sink = g_sink + u[0];
        w[static_cast<Index>(r) % o.d] += 1e-3;  // a different w every repetition
      }
    }
  }
  const double bytes = 2.0 * 8.0 * static_cast<double>(o.n) * static_cast<double>(o.d);
  const pl::ScdParams p = dual_params(o);
  std::vector<std::pair<int, double>> epoch_s, pass_s;
  for (const Job& job : jobs) {
    const pb::Timing timing = pb::summarize(job.times);
    if (job.train) {
      const double per_epoch = timing.median_s / static_cast<double>(o.epochs);
      epoch_s.emplace_back(job.threads, per_epoch);
      pb::print_line(
          "{\"bench\": \"scd\", \"kind\": \"train\", \"impl\": \"core-cpp\", \"data\": "
          "\"msd-like\", \"variant\": \"dual\", \"loss\": \"%s\", \"sampling\": \"%s\", "
          "\"batch_size\": %lld, \"clip\": %g, \"noise_std\": %g, \"lambda\": %g, "
          "\"threads\": %d, \"n\": %lld, \"d\": %lld, \"hugepages\": %s, \"steps\": %lld, "
          "\"epochs\": %lld, "
          "\"reps\": %d, \"median_s\": %.6g, \"min_s\": %.6g, \"s_per_epoch\": %.6g, "
          "\"rate\": %.6g, \"unit\": \"examples/s\", \"us_per_step\": %.4g}\n",
          o.loss.c_str(), o.sampling.c_str(), static_cast<long long>(o.batch), p.clip,
          p.noise_std, p.lam, job.threads, static_cast<long long>(o.n),
          static_cast<long long>(o.d), o.hugepages ? "true" : "false",
          static_cast<long long>(job.steps),
          static_cast<long long>(o.epochs), o.reps, timing.median_s, timing.min_s, per_epoch,
          static_cast<double>(o.n) / per_epoch,
          1e6 * timing.median_s / static_cast<double>(job.steps));
    } else {
      pass_s.emplace_back(job.threads, timing.median_s);
      pb::print_line(
          "{\"bench\": \"scd\", \"kind\": \"bandwidth\", \"impl\": \"eigen\", \"op\": "
          "\"XT(Xw)\", \"threads\": %d, \"n\": %lld, \"d\": %lld, \"hugepages\": %s, "
          "\"reps\": %d, \"median_s\": %.6g, \"min_s\": %.6g, \"gb_per_s\": %.4g}\n",
          job.threads, static_cast<long long>(o.n), static_cast<long long>(o.d),
          o.hugepages ? "true" : "false", o.reps,
          timing.median_s, timing.min_s, bytes / timing.median_s * 1e-9);
    }
  }
  for (std::size_t k = 0; k < epoch_s.size(); ++k) {
    const double ratio = epoch_s[k].second / pass_s[k].second;
    pb::print_line(
        "{\"bench\": \"scd\", \"kind\": \"ratio\", \"threads\": %d, \"epoch_s\": %.6g, "
        "\"xtxw_s\": %.6g, \"epoch_over_xtxw\": %.4g, \"target\": 2, \"met\": %s}\n",
        epoch_s[k].first, epoch_s[k].second, pass_s[k].second, ratio,
        ratio <= 2.0 ? "true" : "false");
  }
}

// ---- background load ----------------------------------------------------------------------

// CPU time used by *other* processes (and stolen by the hypervisor) per wall-clock second while
// the benchmark runs, i.e. about how many cores something else kept busy (0 = quiet machine), as
// BackgroundLoad of bench/python/bench_random.py. Linux only (null elsewhere).
class BackgroundLoad {
 public:
  BackgroundLoad()
      : busy0_(machine_busy_s()), own0_(own_cpu_s()), t0_(std::chrono::steady_clock::now()) {}
  void report() const {
    const double busy1 = machine_busy_s(), own1 = own_cpu_s(), wall = pb::seconds_since(t0_);
    if (busy0_ < 0.0 || busy1 < 0.0 || own0_ < 0.0 || own1 < 0.0 || !(wall > 0.0)) {
      pb::print_line("{\"bench\": \"scd\", \"kind\": \"load\", \"background_load_cores\": null}\n");
      return;
    }
    const double other = std::max(0.0, ((busy1 - busy0_) - (own1 - own0_)) / wall);
    pb::print_line(
        "{\"bench\": \"scd\", \"kind\": \"load\", \"background_load_cores\": %.3g, "
        "\"wall_s\": %.4g}\n",
        other, wall);
  }

 private:
  // Busy seconds of the whole machine since boot (user nice system irq softirq steal), or -1.
  static double machine_busy_s() {
#if defined(__linux__)
    std::FILE* f = std::fopen("/proc/stat", "r");
    if (f == nullptr) return -1.0;
    unsigned long long t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &t[0], &t[1],
                                &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]);
    std::fclose(f);
    if (got != 8) return -1.0;
    const double busy = static_cast<double>(t[0] + t[1] + t[2] + t[5] + t[6] + t[7]);
    return busy / static_cast<double>(sysconf(_SC_CLK_TCK));
#else
    return -1.0;
#endif
  }
  // CPU seconds of this process (all threads), or -1.
  static double own_cpu_s() {
#if defined(__linux__)
    rusage u{};
    if (getrusage(RUSAGE_SELF, &u) != 0) return -1.0;
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
#else
    return -1.0;
#endif
  }
  double busy0_, own0_;
  std::chrono::steady_clock::time_point t0_;
};

// ---- breakdown ---------------------------------------------------------------------------

// Evicts X's rows from the caches: sweeps a buffer larger than the L3.
struct Evictor {
  std::vector<double> buf = std::vector<double>(std::size_t{8} << 20, 1.0);  // 64 MiB
  void operator()() {
    double s = 0.0;
    for (std::size_t i = 0; i < buf.size(); i += 8) {
      buf[i] += 1.0;
      s += buf[i];
    }
    g_sink = g_sink + s;
  }
};

// Median over `reps` timings of fn(k) (k = call number, `calls` calls per timing, prepare(k)
// untimed before each call), in microseconds per call.
template <class Prepare, class Fn>
double us_per_call(int reps, Index calls, Prepare&& prepare, Fn&& fn) {
  prepare(0);
  fn(0);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    double total = 0.0;
    for (Index k = 0; k < calls; ++k) {
      prepare(k);
      const auto t0 = std::chrono::steady_clock::now();
      fn(k);
      total += pb::seconds_since(t0);
    }
    times.push_back(total);
  }
  return 1e6 * pb::median(times) / static_cast<double>(calls);
}

void print_component(const char* piece, int threads, double us, double calls_per_epoch, Index n,
                     const char* note) {
  const double share_s = us * 1e-6 * calls_per_epoch;  // seconds per epoch spent on the piece
  pb::print_line(
      "{\"bench\": \"scd\", \"kind\": \"component\", \"variant\": \"dual\", \"piece\": \"%s\", "
      "\"threads\": %d, \"us_per_call\": %.4g, \"calls_per_epoch\": %.6g, "
      "\"s_per_epoch\": %.4g, \"ns_per_example\": %.4g, \"note\": \"%s\"}\n",
      piece, threads, us, calls_per_epoch, share_s, 1e9 * share_s / static_cast<double>(n), note);
}

inline void prefetch_row(const double* row, Index d) {
#if defined(__GNUC__) || defined(__clang__)
  const char* p = reinterpret_cast<const char*>(row);
  const char* end = reinterpret_cast<const char*>(row + d);
  for (; p < end; p += 64) __builtin_prefetch(p, 0, 0);
  __builtin_prefetch(end - 1, 0, 0);
#else
  (void)row;
  (void)d;
#endif
}

void breakdown(const Options& o, const RowMatrixXd& X) {
  const DenseRows rows(X);
  const pl::ScdParams p = dual_params(o);
  const pr::Key key = p.key;
  const Index n = o.n, d = o.d;
  const double q = static_cast<double>(o.batch) / static_cast<double>(n);
  const double steps = std::ceil(static_cast<double>(n) / static_cast<double>(o.batch));
  const int reps = std::max(3, std::min(o.reps, 7));
  const Index calls = std::min<Index>(static_cast<Index>(steps), 64);
  const double lam_n = o.lambda * static_cast<double>(n);
  VectorXd v = VectorXd::Constant(d, 0.1), acc(d), noise_v(d);
  std::vector<double> z(static_cast<std::size_t>(2 * o.batch + 64)), noise_b(z.size());
  Evictor evict;
  auto none = [](Index) {};
  auto cold = [&](Index) { evict(); };

  std::vector<std::vector<std::int64_t>> batches;
  for (Index k = 0; k < calls; ++k)
    batches.push_back(
        privlearn::samplers::poisson_sample(key, 1, static_cast<std::uint64_t>(k), n, q));
  auto batch_of = [&](Index k) -> const std::vector<std::int64_t>& {
    return batches[static_cast<std::size_t>(k) % batches.size()];
  };

  VectorXd sq(n);
  const double us_norms = us_per_call(reps, 1, none, [&](Index) {
    for (Index i = 0; i < n; ++i) {
      const double a = rows.norm(i);
      sq[i] = a * a;
    }
  });
  print_component("row_norms", 1, us_norms, 1.0 / static_cast<double>(o.epochs), n,
                  "||x_i||^2 of all n rows, once per scd_train call (a full pass over X)");
  g_sink = g_sink + sq[0];

  std::vector<std::int64_t> sampled;
  const double us_sample = us_per_call(reps, calls, none, [&](Index k) {
    sampled = privlearn::samplers::poisson_sample(key, 1, static_cast<std::uint64_t>(k), n, q);
  });
  print_component("poisson_sample", 1, us_sample, steps, n,
                  "poisson_sample(n, L/n): geometric gaps, O(L)");

  auto gather_dot = [&](Index k) {
    const auto& b = batch_of(k);
    for (std::size_t a = 0; a < b.size(); ++a) z[a] = rows.dot(b[a], v) / lam_n;
  };
  const double us_gather = us_per_call(reps, calls, cold, gather_dot);
  print_component("gather_dot", 1, us_gather, steps, n,
                  "x_j^T v over the batch rows, rows cold (as the kernel reads them)");

  const double us_prefetch = us_per_call(reps, calls, cold, [&](Index k) {
    const auto& b = batch_of(k);
    constexpr std::size_t kAhead = 8;
    for (std::size_t a = 0; a < std::min(kAhead, b.size()); ++a) prefetch_row(&X(b[a], 0), d);
    for (std::size_t a = 0; a < b.size(); ++a) {
      if (a + kAhead < b.size()) prefetch_row(&X(b[a + kAhead], 0), d);
      z[a] = rows.dot(b[a], v) / lam_n;
    }
  });
  print_component("gather_dot_prefetch", 1, us_prefetch, steps, n,
                  "the same with a software prefetch 8 rows ahead (bench-only experiment)");

  const double us_contig = us_per_call(reps, calls, cold, [&](Index k) {
    const auto& b = batch_of(k);
    const Index count = static_cast<Index>(b.size());
    const Index lo = (k * 7919 * o.batch) % std::max<Index>(1, n - count);
    for (Index a = 0; a < count; ++a) z[static_cast<std::size_t>(a)] = rows.dot(lo + a, v) / lam_n;
  });
  print_component("contiguous_dot", 1, us_contig, steps, n,
                  "x_j^T v over as many contiguous rows, cold: the bandwidth-bound cost");

  for (const int t : o.threads) {
    // rows warm: right after the gather, as in the kernel
    const double us_axpy = us_per_call(
        reps, calls, [&](Index k) { gather_dot(k); },
        [&](Index k) {
          const auto& b = batch_of(k);
          privlearn::parallel::deterministic_sum(
              static_cast<Index>(b.size()), d, t,
              [&](Index a, VecMut out) {
                rows.axpy(b[static_cast<std::size_t>(a)], 1e-3 * z[static_cast<std::size_t>(a)],
                          out);
              },
              acc);
        });
    print_component("axpy_sum", t, us_axpy, steps, n,
                    "deterministic_sum of zeta_j x_j over the batch, rows warm");
  }

  const double us_noise = us_per_call(reps, calls, none, [&](Index k) {
    const auto& b = batch_of(k);
    pr::normal(key, 3, static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(n), b.size(),
               noise_b.data(), 1);
    pr::normal(key, 2, static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(d),
               static_cast<std::size_t>(d), noise_v.data(), 1);
  });
  print_component("noise", 1, us_noise, steps, n, "|B| + d normals");
  g_sink = g_sink + z[0] + acc[0] + noise_v[0] + noise_b[0] + static_cast<double>(sampled.size());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  RowMatrixXd X;
  VectorXd y;
  const auto t0 = std::chrono::steady_clock::now();
  make_data(o, X, y);
  std::fprintf(stderr,
               "bench_scd: n = %lld, d = %lld, data in %.2f s, OpenMP %s, huge pages %s "
               "(AnonHugePages %ld kB)\n",
               static_cast<long long>(o.n), static_cast<long long>(o.d), pb::seconds_since(t0),
               privlearn::parallel::has_openmp() ? "on" : "off",
               o.hugepages ? "requested" : "not requested", anon_hugepages_kib());
  BackgroundLoad background;
  train_benchmarks(o, X, y);
  if (o.breakdown) breakdown(o, X);
  background.report();
  return 0;
}
