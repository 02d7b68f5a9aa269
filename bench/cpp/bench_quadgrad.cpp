// Clear-text speed of the quadratic-gradient optimizers (privlearn::linear::quadgrad_train):
// time per full-batch iteration of logistic regression on a synthetic dense data set of the
// quadratic-gradient paper's financial-data shape (422,108 x 200), for
//   gradient   one fused pass: log-likelihood and gradient (privlearn::linear::
//              logistic_loglik_gradient), the whole per-iteration cost of every optimizer;
//   bbar       diag(B_bar) from X (once per training run): the X^T (X 1) formula for
//              non-negative data and, with --signed, the blocked X^T X formula;
//   train      quadgrad_train for each optimizer (nag, adagrad, adam) plain and enhanced,
//              --iters iterations, reported per iteration;
// for 1 and 2 threads (or --threads). Repetitions are interleaved (round robin over the
// configurations) and the median is reported.
//
// Usage: bench_quadgrad [--n N] [--d D] [--iters T] [--reps R] [--threads 1,2,...] [--seed S]
//                       [--signed]
//
// Prints one JSON line per measurement, e.g.
//   {"bench": "quadgrad", "kind": "gradient", "threads": 1, "n": 422108, "d": 200, "reps": 5,
//    "median_s": 0.05, "min_s": 0.05, "gb_per_s": 13.5}
//
// Data: X (n, d) row-major; column 0 is the intercept 1, the others uniform in [0, 1] (or
// [-1, 1] with --signed); y_i = sign(x_i^T w* + e_i), w* and e_i standard normal; all drawn with
// privlearn::random from --seed.
//
// Dependency-free (std::chrono only); built when CMake option PRIVLEARN_BUILD_BENCH=ON.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "privlearn/linear/quadgrad.hpp"
#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"
#include "privlearn/types.hpp"

namespace {

namespace pb = privlearn::bench;
namespace pl = privlearn::linear;
namespace pr = privlearn::random;
using privlearn::DenseRows;
using privlearn::Index;
using privlearn::RowMatrixXd;
using privlearn::VectorXd;

struct Options : pb::CommonOptions {  // CommonOptions defaults: reps 5, threads 1,2, seed 1
  Index n = 422108;
  Index d = 200;
  Index iters = 5;
  bool is_signed = false;
};

constexpr const char* kUsage =
    " [--n N] [--d D] [--iters T] [--reps R] [--threads 1,2,...] [--seed S] [--signed]\n"
    "  --n        examples (default 422108)\n"
    "  --d        columns including the intercept (default 200)\n"
    "  --iters    iterations of each timed training run (default 5)\n"
    "  --reps     repetitions, the median is reported (default 5)\n"
    "  --threads  comma-separated thread counts (default 1,2)\n"
    "  --seed     integer seed of the data (default 1)\n"
    "  --signed   features in [-1, 1] (B_bar through X^T X) instead of [0, 1]\n";

Options parse(int argc, char** argv) {
  const pb::Cli cli{argv[0], kUsage};
  Options o;
  pb::parse_args(cli, argc, argv, o, [&](const std::string& arg, auto&& value) {
    if (arg == "--n") {
      o.n = static_cast<Index>(pb::parse_u64_in(cli, value(), 1, Index{1} << 40, "--n >= 1"));
    } else if (arg == "--d") {
      o.d = static_cast<Index>(pb::parse_u64_in(cli, value(), 2, 100000, "--d in [2, 1e5]"));
    } else if (arg == "--iters") {
      o.iters = static_cast<Index>(pb::parse_u64_in(cli, value(), 1, 100000, "--iters >= 1"));
    } else if (arg == "--signed") {
      o.is_signed = true;
    } else {
      return false;
    }
    return true;
  });
  return o;
}

volatile double g_sink = 0.0;

void make_data(const Options& o, RowMatrixXd& X, VectorXd& y) {
  const pr::Key key = pr::key_from_seed(o.seed);
  X.resize(o.n, o.d);
  pr::uniform(key, 20, 0, static_cast<std::size_t>(o.n * o.d), X.data(), 0);
  if (o.is_signed) X = (2.0 * X.array() - 1.0).matrix();
  X.col(0).setOnes();
  VectorXd w_star(o.d), e(o.n);
  pr::normal(key, 21, 0, static_cast<std::size_t>(o.d), w_star.data(), 1);
  pr::normal(key, 22, 0, static_cast<std::size_t>(o.n), e.data(), 0);
  w_star *= 3.0 / std::sqrt(static_cast<double>(o.d));
  y.resize(o.n);
  for (Index i = 0; i < o.n; ++i) y[i] = X.row(i).dot(w_star) + e[i] > 0.0 ? 1.0 : -1.0;
}

struct Job {
  std::string label;  // JSON fields after "kind"
  int threads;
  double per;  // divide the time by this (iterations)
  std::function<void(int)> run;
  std::vector<double> times;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  RowMatrixXd X;
  VectorXd y;
  make_data(o, X, y);
  const DenseRows rows(X);
  const double bytes = static_cast<double>(o.n) * static_cast<double>(o.d) * 8.0;

  std::vector<Job> jobs;
  for (int t : o.threads) {
    jobs.push_back({"\"kind\": \"gradient\"", t, 1.0, [&](int th) {
                      VectorXd beta = VectorXd::Constant(o.d, 0.01), g(o.d);
                      g_sink = g_sink + pl::logistic_loglik_gradient(rows, y, beta, th, g);
                    }});
    jobs.push_back({std::string("\"kind\": \"bbar\", \"formula\": \"") +
                        (o.is_signed ? "gram" : "xt_x1") + "\"",
                    t, 1.0, [&](int th) { g_sink = g_sink + pl::quadgrad_bbar(rows, 1e-8, th)[0]; }});
    for (const char* opt : {"nag", "adagrad", "adam"})
      for (bool enhanced : {false, true}) {
        pl::QuadgradParams p;
        p.optimizer = pl::qg_optimizer_from_string(opt);
        p.enhanced = enhanced;
        p.max_iter = o.iters;
        p.schedule.kind = pl::QgScheduleKind::constant;
        p.schedule.base = enhanced ? 1.0 : 0.01;
        p.schedule.scale = 0.0;
        const std::string label = std::string("\"kind\": \"train\", \"optimizer\": \"") + opt +
                                  "\", \"enhanced\": " + (enhanced ? "true" : "false") +
                                  ", \"iters\": " + std::to_string(o.iters);
        jobs.push_back({label, t, static_cast<double>(o.iters), [&, p](int th) {
                          pl::QuadgradParams q = p;
                          q.n_threads = th;
                          const VectorXd beta0 = VectorXd::Zero(o.d);
                          g_sink = g_sink + pl::quadgrad_train(rows, y, beta0, q).beta[0];
                        }});
      }
  }
  for (int r = 0; r < o.reps; ++r)
    for (Job& job : jobs) {
      const auto t0 = std::chrono::steady_clock::now();
      job.run(job.threads);
      job.times.push_back(pb::seconds_since(t0) / job.per);
    }
  for (const Job& job : jobs) {
    const pb::Timing tm = pb::summarize(job.times);
    pb::print_line(
        "{\"bench\": \"quadgrad\", %s, \"threads\": %d, \"n\": %lld, \"d\": %lld, \"reps\": %d, "
        "\"median_s\": %.6g, \"min_s\": %.6g, \"unit\": \"%s\", \"gb_per_s\": %.4g}\n",
        job.label.c_str(), job.threads, static_cast<long long>(o.n),
        static_cast<long long>(o.d), o.reps, tm.median_s, tm.min_s,
        job.per > 1.0 ? "s/iteration" : "s/call", bytes / tm.median_s / 1e9);
  }
  return 0;
}
