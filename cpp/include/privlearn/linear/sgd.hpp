#pragma once
// Private mini-batch SGD for L2-regularised linear models:
//   min_w (lambda/2)||w||^2 + (1/n) sum_i l(x_i^T w, y_i)
//
// Mechanisms
//   l2_laplace  Song, Chaudhuri, Sarwate (2013), eq. (3):
//               w <- Pi_R( w - eta_t (lambda w + (1/b_t)(sum_{i in B_t} g_i + Z_t)) ),
//               Z_t with density prop. to exp(-(epsilon/(2C)) ||z||) (C = clip, 1 when unclipped),
//               batches B_t disjoint within a pass (one random permutation per pass).
//   gaussian    Abadi et al. (2016), Algorithm 1: per-example clipping to C,
//               w <- Pi_R( w - eta_t (lambda w + (sum_{i in B_t} clip(g_i) + N(0, sigma^2 C^2 I)) / L) ),
//               L = batch_size (the expected lot size under Poisson sampling).
//   none        the same step without noise (epsilon = inf / sigma = 0).
// Randomness (privlearn/random.hpp), for iteration t = 0..T-1 (0-based):
//   disjoint  pass p uses choice_without_replacement(index = p, n, n) on batch_stream; batch k of
//             the pass is positions [k b, min(n, (k+1) b)) of that permutation;
//   poisson   poisson_sample(index = t, n, q) on batch_stream with q = rate, or batch_size / n
//             when rate = 0 (ascending rows, O(batch) per step by geometric gaps);
//   fixed     choice_without_replacement(index = t, n, batch_size) on batch_stream;
//   noise     l2_laplace row t (times C) on noise_stream; gaussian: exact discrete_gaussian draws
//             t*d + j on noise_stream added to the fixed-point gradient sum on the lattice C 2^-k
//             (random.hpp, noise_lattice / add_lattice_noise), converted to reals after that.
// Learning rate with s = t + 1: inv_sqrt eta0/sqrt(s), inv_lambda_t 1/(lambda s), constant eta0.
// The batch gradient: with clipping (clip > 0), an exact fixed-point sum in units of C * 2^-30
// (privlearn/fixed_sum.hpp), so it depends neither on n_threads nor on how the rows are split
// among machines (privlearn.distributed); without clipping (unbounded terms), a deterministic
// blocked float sum (privlearn/parallel.hpp), which does not depend on n_threads.
// Clipping (clip > 0) is sign(c) min(|c|, C / ||x_i||) on the loss derivative c, with an
// overflow-safe norm, so every example contributes at most C for every finite input, and a NaN
// derivative contributes 0 (linear/losses.hpp, clip_coefficient). The projection uses the same
// overflow-safe norm. A run whose iterate becomes non-finite throws std::invalid_argument
// instead of returning it. Parameter bounds: alpha 0 or [1e-12, 1e12], eta0 [1e-12, 1e12],
// clip 0 or [1e-12, 1e12], sigma 0 or [1e-6, 1e6], epsilon [1e-6, 1e6] or inf, rate 0 or
// (0, 1] (losses.hpp).
// Data-independent schedules: rate > 0 replaces batch_size / n as the Poisson rate (then
// batch_size, the expected lot size dividing the sum, may exceed n), steps > 0 fixes T.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/linear/losses.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"
#include "privlearn/types.hpp"

namespace privlearn::linear {

enum class Mechanism { none = 0, l2_laplace = 1, gaussian = 2 };
enum class Sampling { disjoint = 0, poisson = 1, fixed = 2 };
enum class Schedule { inv_sqrt = 0, inv_lambda_t = 1, constant = 2 };

Mechanism mechanism_from_string(const std::string& name);
Sampling sampling_from_string(const std::string& name);
Schedule schedule_from_string(const std::string& name);

struct SgdParams {
  Loss loss = Loss::log_loss;
  Mechanism mechanism = Mechanism::l2_laplace;
  Sampling sampling = Sampling::disjoint;
  Schedule schedule = Schedule::inv_sqrt;
  double lam = 1e-4;         // lambda >= 0
  Index batch_size = 10;     // b (disjoint / fixed) or expected lot size L (poisson)
  Index epochs = 1;          // passes (disjoint); poisson / fixed: steps = ceil(epochs n / L)
  Index steps = 0;           // > 0 overrides the step count of poisson / fixed sampling
  double rate = 0.0;         // poisson: sampling rate in (0, 1]; 0 = batch_size / n
  double eta0 = 1.0;
  double clip = 0.0;         // C > 0 clips per-example gradients; 0 = no clipping
  double epsilon = 1.0;      // l2_laplace: epsilon per pass (inf = no noise)
  double sigma = 0.0;        // gaussian: noise multiplier (0 = no noise)
  double radius = 0.0;       // projection radius R > 0; 0 = no projection
  random::Key key{};
  std::uint64_t batch_stream = 1;
  std::uint64_t noise_stream = 2;
  Index record_every = 0;    // keep the iterate every k steps (and the last); 0 = never
  int n_threads = 0;
};

struct SgdResult {
  VectorXd w;
  RowMatrixXd path;                     // recorded iterates, one per row
  std::vector<std::int64_t> path_steps;  // number of steps done at each recorded iterate
  Index steps = 0;
};

// ---- shared by the SGD trainers (sgd.cpp, softmax.cpp): any parameter struct with the fields
// rate, sampling, batch_size, n_threads, epochs, lam, schedule, eta0, clip, radius,
// record_every (and sigma for check_gaussian_noise).

// Throws std::invalid_argument (arriving in Python as ValueError) for a schedule the kernels
// cannot run exactly: the bounds of losses.hpp, a Poisson rate in (0, 1] (rate = 0: batch_size /
// n, then batch_size <= n), thread counts the machine allows.
template <class P>
void check_sgd_schedule(Index n, const P& p);

// The Gaussian noise multiplier: 0 (no noise) or in [1e-6, 1e6], and then clip > 0.
template <class P>
void check_gaussian_noise(const P& p);

// eta0 / sqrt(s), 1 / (lambda s) or eta0 at step s = t + 1.
template <class P>
double sgd_learning_rate(const P& p, Index t);

// Number of SGD steps the parameters imply for n examples.
Index sgd_step_count(Index n, const SgdParams& p);

template <class Rows>
SgdResult sgd_train(const Rows& X, const VecRef& y, const VecRef& w0, const SgdParams& p);

// ---- one Poisson step in two pieces: the trainer's own steps, and the distributed fit's
// (workers holding rows [offset, offset + X.rows()) of the n_total rows call sgd_partial_sum;
// the driver adds their int64 sums and calls sgd_apply_step). Both need sampling poisson and
// clip > 0 (bounded terms); the batch is poisson_sample(index = t, n_total, q) restricted to
// the worker's rows (samplers.hpp: the same rows as the whole sample's).
// out (length d) = the clipped gradient sum of step t over the worker's sampled rows, in
// fixed-point units (fixed_sum.hpp).
template <class Rows>
void sgd_partial_sum(const Rows& X, const VecRef& y, const VectorXd& w, Index t, Index offset,
                     Index n_total, const SgdParams& p, std::int64_t* out);
// w <- the iterate after step t from the batch gradient's fixed-point sum (length d): noise,
// step and projection, exactly as sgd_train does.
void sgd_apply_units(VectorXd& w, const std::int64_t* units, Index t, const SgdParams& p);
// Checks of a distributed run's parameters (those sgd_train makes, for n_total rows).
void sgd_check_distributed(Index n_total, Index d, const SgdParams& p);

extern template SgdResult sgd_train<DenseRows>(const DenseRows&, const VecRef&, const VecRef&,
                                               const SgdParams&);
extern template SgdResult sgd_train<CsrRows>(const CsrRows&, const VecRef&, const VecRef&,
                                             const SgdParams&);
extern template void sgd_partial_sum<DenseRows>(const DenseRows&, const VecRef&, const VectorXd&,
                                                Index, Index, Index, const SgdParams&,
                                                std::int64_t*);

// ---- implementations of the shared templates ------------------------------------------------
template <class P>
void check_sgd_schedule(Index n, const P& p) {
  checks::require(p.rate == 0.0 || (p.rate > 0.0 && p.rate <= 1.0),
                  "rate must lie in (0, 1] (0 = batch_size / n_samples), got " +
                      std::to_string(p.rate));
  checks::require(p.rate == 0.0 || p.sampling == Sampling::poisson,
                  "rate is the Poisson sampling rate: it needs sampling 'poisson'");
  if (p.rate > 0.0)  // a data-independent schedule: batch_size is the expected lot size only
    checks::require(p.batch_size >= 1, "batch_size must be >= 1");
  else
    checks::require(p.batch_size >= 1 && p.batch_size <= n,
                    "batch_size must lie in [1, n_samples], got " + std::to_string(p.batch_size));
  parallel::check_threads(p.n_threads);
  checks::require(p.epochs >= 1, "epochs must be >= 1");
  checks::require(p.lam == 0.0 || in_range(p.lam, kScaleMin, kScaleMax),
                  "alpha (lambda) must be 0 or lie in [1e-12, 1e12], got " + std::to_string(p.lam));
  checks::require(!(p.schedule == Schedule::inv_lambda_t && p.lam <= 0.0),
                  "learning_rate 'inv_lambda_t' needs alpha > 0");
  checks::require(in_range(p.eta0, kScaleMin, kScaleMax),
                  "eta0 must lie in [1e-12, 1e12], got " + std::to_string(p.eta0));
  checks::require(p.clip == 0.0 || in_range(p.clip, kScaleMin, kScaleMax),
                  "clip must be 0 (no clipping) or lie in [1e-12, 1e12], got " +
                      std::to_string(p.clip));
  checks::require(p.radius >= 0.0 && !std::isnan(p.radius), "radius must be >= 0 (0 = none)");
  checks::require(p.record_every >= 0, "record_every must be >= 0");
}

template <class P>
void check_gaussian_noise(const P& p) {
  checks::require(p.sigma == 0.0 || in_range(p.sigma, kSigmaMin, kSigmaMax),
                  "sigma (noise multiplier) must be 0 or lie in [1e-6, 1e6], got " +
                      std::to_string(p.sigma));
  checks::require(p.sigma == 0.0 || p.clip > 0.0,
                  "the gaussian mechanism needs clip > 0 (its sensitivity)");
}

template <class P>
double sgd_learning_rate(const P& p, Index t) {
  const double s = static_cast<double>(t + 1);
  switch (p.schedule) {
    case Schedule::inv_sqrt:
      return p.eta0 / std::sqrt(s);
    case Schedule::inv_lambda_t:
      return 1.0 / (p.lam * s);
    case Schedule::constant:
      return p.eta0;
  }
  return p.eta0;
}

}  // namespace privlearn::linear
