// Throughput of private mini-batch SGD (privlearn::linear::sgd_train) for L2-regularised logistic
// regression on synthetic dense data: examples per second for one epoch, for
//   song      Song, Chaudhuri, Sarwate (2013): l2-laplace noise, disjoint batches of b = 10,
//             epsilon = 1, no clipping (rows lie in the unit ball);
//   gaussian  Abadi et al. (2016): Gaussian noise, Poisson sampling with expected lot size
//             L = 256, clip C = 1, noise multiplier sigma = 1 (ceil(n / L) steps);
// for 1 and 2 threads (or --threads). Repetitions are interleaved (round robin over all
// (mechanism, threads) pairs, so every configuration sees the same background load) and the
// median is reported.
//
// Usage: bench_sgd [--n N] [--d D] [--reps R] [--threads 1,2,...] [--seed S]
//                  [--mechanisms song,gaussian] [--batch B] [--lot L] [--epsilon E]
//                  [--sigma S] [--clip C] [--breakdown]
//
// Prints one JSON line per measurement, e.g.
//   {"bench": "sgd", "kind": "train", "mechanism": "l2-laplace", "sampling": "disjoint",
//    "batch_size": 10, "threads": 1, "n": 1000000, "d": 100, "steps": 100000, "reps": 5,
//    "median_s": 0.8, "min_s": 0.8, "rate": 1.2e6, "unit": "examples/s", "us_per_step": 8.0}
//
// With --breakdown it also times the pieces of one SGD step in isolation (same sizes, many
// calls each) and prints one line per piece ("kind": "component", "us_per_call"), so that the
// per-step cost can be attributed: the per-pass permutation (disjoint), the Poisson mask and
// its index extraction, the noise draws, the (clipped) batch gradient and the update.
//
// Data: X (n, d) row-major, each row a uniformly random direction times a radius uniform in
// [0, 1] (so ||x_i|| <= 1, as Song et al. assume); y_i = sign(x_i^T w* + 0.1 e_i), w* and e_i
// standard normal, all drawn with privlearn::random from --seed.
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
#include "privlearn/linear/sgd.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"
#include "privlearn/samplers.hpp"
#include "privlearn/types.hpp"

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
  Index n = 1000000;
  Index d = 100;
  std::string mechanisms = "song,gaussian";
  Index batch = 10;   // Song's b
  Index lot = 256;    // Gaussian expected lot size L
  double epsilon = 1.0;
  double sigma = 1.0;
  double clip = 1.0;
  bool breakdown = false;
};

constexpr const char* kUsage =
    " [--n N] [--d D] [--reps R] [--threads 1,2,...] [--seed S]\n"
    "          [--mechanisms song,gaussian] [--batch B] [--lot L] [--epsilon E]\n"
    "          [--sigma S] [--clip C] [--breakdown]\n"
    "  --n           examples (default 1000000)\n"
    "  --d           features (default 100)\n"
    "  --reps        repetitions, the median is reported (default 5)\n"
    "  --threads     comma-separated thread counts (default 1,2)\n"
    "  --seed        integer seed of the data and of the training key (default 1)\n"
    "  --mechanisms  subset of song,gaussian (default both)\n"
    "  --batch       Song's batch size b (default 10)\n"
    "  --lot         Gaussian expected lot size L, Poisson rate L/n (default 256)\n"
    "  --epsilon     Song's epsilon (default 1)\n"
    "  --sigma       Gaussian noise multiplier (default 1)\n"
    "  --clip        Gaussian clipping norm C (default 1)\n"
    "  --breakdown   also time the pieces of one step in isolation\n";

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
    } else if (arg == "--mechanisms") {
      o.mechanisms = value();
      pb::check_subset(cli, o.mechanisms, {"song", "gaussian"},
                       "--mechanisms: expected a subset of song,gaussian");
    } else if (arg == "--batch") {
      o.batch = static_cast<Index>(pb::parse_u64(cli, value()));
    } else if (arg == "--lot") {
      o.lot = static_cast<Index>(pb::parse_u64(cli, value()));
    } else if (arg == "--epsilon") {
      o.epsilon = pb::parse_positive_double(cli, value());
    } else if (arg == "--sigma") {
      o.sigma = pb::parse_positive_double(cli, value());
    } else if (arg == "--clip") {
      o.clip = pb::parse_positive_double(cli, value());
    } else if (arg == "--breakdown") {
      o.breakdown = true;
    } else {
      return false;
    }
    return true;
  });
  if (o.batch < 1 || o.batch > o.n) pb::usage(cli, "--batch must lie in [1, n]");
  if (o.lot < 1 || o.lot > o.n) pb::usage(cli, "--lot must lie in [1, n]");
  return o;
}

volatile double g_sink = 0.0;  // keeps the optimiser from discarding results

// Synthetic data: rows uniform directions with radii uniform in [0, 1]; labels from a linear
// model with a little noise.
void make_data(const Options& o, RowMatrixXd& X, VectorXd& y) {
  const pr::Key key = pr::key_from_seed(o.seed);
  X.resize(o.n, o.d);
  pr::normal(key, 10, 0, static_cast<std::size_t>(o.n * o.d), X.data(), 0);
  VectorXd radius(o.n), w_star(o.d), e(o.n);
  pr::uniform(key, 11, 0, static_cast<std::size_t>(o.n), radius.data(), 0);
  pr::normal(key, 12, 0, static_cast<std::size_t>(o.d), w_star.data(), 1);
  pr::normal(key, 13, 0, static_cast<std::size_t>(o.n), e.data(), 0);
  y.resize(o.n);
  for (Index i = 0; i < o.n; ++i) {
    const double norm = X.row(i).norm();
    X.row(i) *= (norm > 0.0 ? radius[i] / norm : 0.0);
    y[i] = X.row(i).dot(w_star) + 0.1 * e[i] > 0.0 ? 1.0 : -1.0;
  }
}

struct Config {
  const char* name;  // song / gaussian
  pl::SgdParams params;
};

std::vector<Config> configs(const Options& o) {
  std::vector<Config> out;
  pl::SgdParams base;
  base.loss = pl::Loss::log_loss;
  base.lam = 1e-4;
  base.epochs = 1;
  base.key = pr::key_from_seed(o.seed + 1);
  if (pb::selected(o.mechanisms, "song")) {
    pl::SgdParams p = base;
    p.mechanism = pl::Mechanism::l2_laplace;
    p.sampling = pl::Sampling::disjoint;
    p.batch_size = o.batch;
    p.epsilon = o.epsilon;
    p.clip = 0.0;  // rows in the unit ball: gradients of the log loss have norm <= 1
    out.push_back({"song", p});
  }
  if (pb::selected(o.mechanisms, "gaussian")) {
    pl::SgdParams p = base;
    p.mechanism = pl::Mechanism::gaussian;
    p.sampling = pl::Sampling::poisson;
    p.batch_size = o.lot;
    p.sigma = o.sigma;
    p.clip = o.clip;
    out.push_back({"gaussian", p});
  }
  return out;
}

const char* mechanism_name(pl::Mechanism m) {
  switch (m) {
    case pl::Mechanism::l2_laplace:
      return "l2-laplace";
    case pl::Mechanism::gaussian:
      return "gaussian";
    case pl::Mechanism::none:
      return "none";
  }
  return "?";
}

const char* sampling_name(pl::Sampling s) {
  switch (s) {
    case pl::Sampling::disjoint:
      return "disjoint";
    case pl::Sampling::poisson:
      return "poisson";
    case pl::Sampling::fixed:
      return "fixed";
  }
  return "?";
}

void train_benchmarks(const Options& o, const RowMatrixXd& X, const VectorXd& y) {
  const DenseRows rows(X);
  const VectorXd w0 = VectorXd::Zero(o.d);
  struct Job {
    Config config;
    int threads;
    std::vector<double> times;
    Index steps = 0;
  };
  std::vector<Job> jobs;
  for (const Config& c : configs(o))
    for (const int t : o.threads) jobs.push_back({c, t, {}, 0});

  // Warm-up on the first rows only (thread pool, page tables of X, code paths).
  const Index n_warm = std::min<Index>(o.n, 20000);
  const RowMatrixXd X_warm = X.topRows(n_warm);
  const VectorXd y_warm = y.head(n_warm);
  for (Job& job : jobs) {
    pl::SgdParams p = job.config.params;
    p.n_threads = job.threads;
    p.batch_size = std::min(p.batch_size, n_warm);
    g_sink = g_sink + pl::sgd_train(DenseRows(X_warm), y_warm, w0, p).w[0];
  }
  for (int r = 0; r < o.reps; ++r) {
    for (Job& job : jobs) {  // round robin: every configuration sees the same background
      pl::SgdParams p = job.config.params;
      p.n_threads = job.threads;
      const auto t0 = std::chrono::steady_clock::now();
      const pl::SgdResult res = pl::sgd_train(rows, y, w0, p);
      job.times.push_back(pb::seconds_since(t0));
      job.steps = res.steps;
      g_sink = g_sink + res.w[0];
    }
  }
  for (const Job& job : jobs) {
    const pb::Timing timing = pb::summarize(job.times);
    const pl::SgdParams& p = job.config.params;
    pb::print_line(
        "{\"bench\": \"sgd\", \"kind\": \"train\", \"impl\": \"core-cpp\", \"data\": \"dense\", "
        "\"mechanism\": \"%s\", \"sampling\": \"%s\", \"batch_size\": %lld, \"threads\": %d, "
        "\"n\": %lld, \"d\": %lld, \"steps\": %lld, \"reps\": %d, \"median_s\": %.6g, "
        "\"min_s\": %.6g, \"rate\": %.6g, \"unit\": \"examples/s\", \"us_per_step\": %.4g}\n",
        mechanism_name(p.mechanism), sampling_name(p.sampling),
        static_cast<long long>(p.batch_size), job.threads, static_cast<long long>(o.n),
        static_cast<long long>(o.d), static_cast<long long>(job.steps), o.reps, timing.median_s,
        timing.min_s, static_cast<double>(o.n) / timing.median_s,
        1e6 * timing.median_s / static_cast<double>(job.steps));
  }
}

// ---- breakdown ---------------------------------------------------------------------------

// Median over `reps` timings of `calls` calls of fn(k) (k = call number), in microseconds per
// call.
template <class Fn>
double us_per_call(int reps, Index calls, Fn&& fn) {
  fn(0);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (Index k = 0; k < calls; ++k) fn(k);
    times.push_back(pb::seconds_since(t0));
  }
  return 1e6 * pb::median(times) / static_cast<double>(calls);
}

void print_component(const char* mechanism, const char* piece, int threads, double us,
                     double calls_per_epoch, Index n, const char* note) {
  const double share_s = us * 1e-6 * calls_per_epoch;  // seconds per epoch spent on the piece
  pb::print_line(
      "{\"bench\": \"sgd\", \"kind\": \"component\", \"mechanism\": \"%s\", \"piece\": \"%s\", "
      "\"threads\": %d, \"us_per_call\": %.4g, \"calls_per_epoch\": %.6g, "
      "\"s_per_epoch\": %.4g, \"ns_per_example\": %.4g, \"note\": \"%s\"}\n",
      mechanism, piece, threads, us, calls_per_epoch, share_s,
      1e9 * share_s / static_cast<double>(n), note);
}

void breakdown(const Options& o, const RowMatrixXd& X, const VectorXd& y) {
  const DenseRows rows(X);
  const pr::Key key = pr::key_from_seed(o.seed + 1);
  const int reps = std::max(3, std::min(o.reps, 7));
  VectorXd w = VectorXd::Constant(o.d, 0.01), grad(o.d), noise(o.d);
  const Index n = o.n, d = o.d;

  // Song: one permutation per pass, b-row gradient, l2-laplace noise, update.
  if (pb::selected(o.mechanisms, "song")) {
    const double steps = std::ceil(static_cast<double>(n) / static_cast<double>(o.batch));
    std::vector<std::int64_t> perm;
    const double us_perm = us_per_call(reps, 1, [&](Index k) {
      perm = privlearn::samplers::choice_without_replacement(key, 1, static_cast<std::uint64_t>(k),
                                                              n, n);
    });
    print_component("l2-laplace", "permutation", 1, us_perm, 1.0, n,
                    "choice_without_replacement(n, n), once per pass");
    const Index calls = std::min<Index>(static_cast<Index>(steps), 20000);
    for (const int t : o.threads) {
      const double us_grad = us_per_call(reps, calls, [&](Index k) {
        const std::int64_t* batch = perm.data() + (k * o.batch) % (n - o.batch + 1);
        privlearn::parallel::deterministic_sum(
            o.batch, d, t,
            [&](Index r, VecMut acc) {
              const Index i = batch[r];
              rows.axpy(i, pl::loss_derivative(pl::Loss::log_loss, rows.dot(i, w), y[i]), acc);
            },
            grad);
      });
      print_component("l2-laplace", "gradient", t, us_grad, steps, n,
                      "deterministic_sum over b permuted rows (one block: sequential)");
    }
    const double us_noise = us_per_call(reps, calls, [&](Index k) {
      pr::l2_laplace(key, 2, static_cast<std::uint64_t>(k), 1, static_cast<std::size_t>(d),
                     o.epsilon, noise.data(), 1);
    });
    print_component("l2-laplace", "noise", 1, us_noise, steps, n,
                    "l2_laplace(1 row, d): Gamma(d) radius + d Box-Muller normals");
    const double us_update = us_per_call(reps, calls, [&](Index k) {
      const double eta = 1.0 / std::sqrt(static_cast<double>(k + 1));
      grad += noise;
      w -= eta * (1e-4 * w + grad / static_cast<double>(o.batch));
      w *= 0.5;  // keep w bounded
    });
    print_component("l2-laplace", "update", 1, us_update, steps, n, "noise add and w update");
  }

  // Gaussian: Poisson mask over n and index extraction, ~L-row clipped gradient, d normals.
  if (pb::selected(o.mechanisms, "gaussian")) {
    const double steps = std::ceil(static_cast<double>(n) / static_cast<double>(o.lot));
    const double q = static_cast<double>(o.lot) / static_cast<double>(n);
    std::vector<char> mask(static_cast<std::size_t>(n));
    std::vector<std::int64_t> batch;
    const Index mask_calls = std::max<Index>(1, std::min<Index>(20, 20000000 / n));
    for (const int t : o.threads) {
      const double us_mask = us_per_call(reps, mask_calls, [&](Index k) {
        privlearn::samplers::poisson_mask(key, 1, static_cast<std::uint64_t>(k), n, q,
                                          reinterpret_cast<bool*>(mask.data()), t);
      });
      print_component("gaussian", "poisson_mask", t, us_mask, steps, n,
                      "poisson_mask(n, L/n): n ChaCha20 draws per step");
    }
    const double us_extract = us_per_call(reps, mask_calls, [&](Index) {
      batch.clear();
      for (Index i = 0; i < n; ++i)
        if (mask[static_cast<std::size_t>(i)]) batch.push_back(i);
    });
    print_component("gaussian", "mask_to_indices", 1, us_extract, steps, n,
                    "sequential scan of the n-byte mask");
    // real Poisson batches (sizes ~ Binomial(n, L/n): half of them span two reduction blocks)
    std::vector<std::vector<std::int64_t>> batches;
    for (Index k = 0; k < std::min<Index>(static_cast<Index>(steps), 64); ++k) {
      privlearn::samplers::poisson_mask(key, 1, static_cast<std::uint64_t>(k), n, q,
                                        reinterpret_cast<bool*>(mask.data()), 1);
      batches.emplace_back();
      for (Index i = 0; i < n; ++i)
        if (mask[static_cast<std::size_t>(i)]) batches.back().push_back(i);
    }
    const Index calls = std::min<Index>(static_cast<Index>(steps), 5000);
    for (const int t : o.threads) {
      const double us_grad = us_per_call(reps, calls, [&](Index k) {
        const std::vector<std::int64_t>& b = batches[static_cast<std::size_t>(k) % batches.size()];
        privlearn::parallel::deterministic_sum(
            static_cast<Index>(b.size()), d, t,
            [&](Index r, VecMut acc) {
              const Index i = b[static_cast<std::size_t>(r)];
              double c = pl::loss_derivative(pl::Loss::log_loss, rows.dot(i, w), y[i]);
              const double g = std::fabs(c) * rows.norm(i);
              if (g > o.clip) c *= o.clip / g;
              rows.axpy(i, c, acc);
            },
            grad);
      });
      print_component("gaussian", "gradient", t, us_grad, steps, n,
                      "deterministic_sum over a Poisson batch (~L rows) of clipped gradients");
    }
    const double us_noise = us_per_call(reps, calls, [&](Index k) {
      pr::normal(key, 2, static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(d),
                 static_cast<std::size_t>(d), noise.data(), 1);
    });
    print_component("gaussian", "noise", 1, us_noise, steps, n, "d normals");
  }
  g_sink = g_sink + w[0] + grad[0] + noise[0];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  RowMatrixXd X;
  VectorXd y;
  const auto t0 = std::chrono::steady_clock::now();
  make_data(o, X, y);
  std::fprintf(stderr, "bench_sgd: n = %lld, d = %lld, data in %.2f s, OpenMP %s\n",
               static_cast<long long>(o.n), static_cast<long long>(o.d), pb::seconds_since(t0),
               privlearn::parallel::has_openmp() ? "on" : "off");
  train_benchmarks(o, X, y);
  if (o.breakdown) breakdown(o, X, y);
  return 0;
}
