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
//   noise     l2_laplace row t (times C) / normal draws t*d .. t*d + d - 1 (times sigma C) on
//             noise_stream.
// Learning rate with s = t + 1: inv_sqrt eta0/sqrt(s), inv_lambda_t 1/(lambda s), constant eta0.
// The batch gradient is a deterministic blocked sum (privlearn/parallel.hpp): results do not
// depend on n_threads.
// Clipping (clip > 0) is sign(c) min(|c|, C / ||x_i||) on the loss derivative c, with an
// overflow-safe norm, so every example contributes at most C for every finite input, and a NaN
// derivative contributes 0 (linear/losses.hpp, clip_coefficient). The projection uses the same
// overflow-safe norm. A run whose iterate becomes non-finite throws std::invalid_argument
// instead of returning it. Parameter bounds: alpha 0 or [1e-12, 1e12], eta0 [1e-12, 1e12],
// clip 0 or [1e-12, 1e12], sigma 0 or [1e-6, 1e6], epsilon [1e-6, 1e6] or inf, rate 0 or
// (0, 1] (losses.hpp).
// Data-independent schedules: rate > 0 replaces batch_size / n as the Poisson rate (then
// batch_size, the expected lot size dividing the sum, may exceed n), steps > 0 fixes T.

#include <cstdint>
#include <vector>

#include "privlearn/linear/losses.hpp"
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

// Number of SGD steps the parameters imply for n examples.
Index sgd_step_count(Index n, const SgdParams& p);

template <class Rows>
SgdResult sgd_train(const Rows& X, const VecRef& y, const VecRef& w0, const SgdParams& p);

extern template SgdResult sgd_train<DenseRows>(const DenseRows&, const VecRef&, const VecRef&,
                                               const SgdParams&);
extern template SgdResult sgd_train<CsrRows>(const CsrRows&, const VecRef&, const VecRef&,
                                             const SgdParams&);

}  // namespace privlearn::linear
