#pragma once
// Multinomial (softmax) logistic regression trained by Gaussian DP-SGD (Abadi et al. 2016,
// Algorithm 1) with per-example clipping of the whole gradient (one budget for all classes):
//   min_W (lambda/2)||W||_F^2 + (1/n) sum_i -log p_{i, y_i},   p_i = softmax(x_i^T W),
// W of shape (d, K), K >= 2 classes, labels y_i in {0, ..., K-1}.
//
// Per-example gradient G_i = x_i r_i^T with r_i = p_i - e_{y_i}; ||G_i||_F = ||x_i|| ||r_i||.
// Step t = 0..T-1 (0-based):
//   W <- Pi_R( W - eta_t (lambda W + (sum_{i in B_t} clip(G_i) + sigma C Z_t) / L) ),
//   clip(G_i) = G_i min(1, C / (||x_i|| ||r_i||)) (C = clip > 0; clip = 0: no clipping),
//   L = batch_size (Poisson: the expected lot size) or the batch size (fixed),
//   Pi_R the projection onto the Frobenius ball of radius R (radius = 0: none).
// Scores: z = x_i^T W, p = softmax(z) with the maximum subtracted (exp(z_k - max z)). Infinite
// scores are limits: when max z = +inf, p is uniform over the classes with z_k = +inf; when all
// z_k = -inf, p is uniform. A NaN score makes r_i NaN: with clipping the example contributes 0
// (as clip_coefficient, losses.hpp), without it the run ends with a non-finite iterate (error).
// Clipping is overflow-safe: ||x_i|| = sx rx and ||r_i|| = sr rr as ScaledNorm (rows.hpp) and
//   factor = min(1, (((C / sx) / rx) / sr) / rr),
// so every example contributes at most C for every finite input; a zero row or r_i = 0 gives
// factor 0 (its gradient is 0 anyway). The coefficients of row i are a_k = factor r_{i,k}.
//
// Randomness (privlearn/random.hpp), for iteration t:
//   poisson   poisson_sample(index = t, n, q) on batch_stream with q = rate, or batch_size / n
//             when rate = 0 (the same sampler and addresses as sgd.hpp);
//   fixed     choice_without_replacement(index = t, n, batch_size) on batch_stream;
//   noise     (sigma > 0) exact: discrete_gaussian draws t*d*K + e on noise_stream added to entry
//             e = k*d + j of the fixed-point gradient sum on the lattice C 2^-k
//             (random.hpp, noise_lattice / add_lattice_noise), converted to reals after that.
// Learning rate with s = t + 1: inv_sqrt eta0/sqrt(s), inv_lambda_t 1/(lambda s), constant eta0.
// Steps: T = steps if > 0, else ceil(epochs n / batch_size).
// The batch gradient is a vector of length d*K holding the gradient class after class (entry
// k*d + j is (j, k)): with clipping an exact fixed-point sum (privlearn/fixed_sum.hpp; every
// entry of a clipped G_i is at most C), without it a deterministic blocked float sum
// (privlearn/parallel.hpp); results depend neither on n_threads nor, clipped, on how the rows
// are split among machines. A run whose iterate becomes non-finite throws std::invalid_argument.
// Parameter bounds (losses.hpp, as sgd.hpp): alpha 0 or [1e-12, 1e12], eta0 [1e-12, 1e12],
// clip 0 or [1e-12, 1e12], sigma 0 or [1e-6, 1e6] (sigma > 0 needs clip > 0), rate 0 or
// (0, 1] (Poisson only), radius >= 0. Sampling 'disjoint' is not supported.
// record_every > 0 keeps the iterate (flattened row-major, d*K entries) every record_every
// steps and at the end.

#include <cstdint>
#include <vector>

#include "privlearn/linear/sgd.hpp"
#include "privlearn/random.hpp"
#include "privlearn/rows.hpp"
#include "privlearn/types.hpp"

namespace privlearn::linear {

using LabelRef = Eigen::Ref<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>;

struct SoftmaxParams {
  Sampling sampling = Sampling::poisson;  // poisson or fixed
  Schedule schedule = Schedule::inv_sqrt;
  double lam = 1e-4;       // lambda >= 0
  Index batch_size = 10;   // b (fixed) or expected lot size L (poisson)
  Index epochs = 1;        // steps = ceil(epochs n / batch_size) unless steps > 0
  Index steps = 0;         // > 0 fixes T
  double rate = 0.0;       // poisson: sampling rate in (0, 1]; 0 = batch_size / n
  double eta0 = 1.0;
  double clip = 0.0;       // C > 0 clips each per-example gradient (Frobenius); 0 = no clipping
  double sigma = 0.0;      // noise multiplier (0 = no noise)
  double radius = 0.0;     // Frobenius projection radius R > 0; 0 = no projection
  random::Key key{};
  std::uint64_t batch_stream = 1;
  std::uint64_t noise_stream = 2;
  Index record_every = 0;  // keep the iterate every k steps (and the last); 0 = never
  int n_threads = 0;
};

struct SoftmaxResult {
  RowMatrixXd W;                         // (d, K)
  RowMatrixXd path;                      // recorded iterates, one per row, flattened (d*K)
  std::vector<std::int64_t> path_steps;  // number of steps done at each recorded iterate
  Index steps = 0;
};

// Number of steps the parameters imply for n examples.
Index softmax_step_count(Index n, const SoftmaxParams& p);

// Overflow-safe clipping factor min(1, C / (||x|| ||r||)); 0 when either norm is 0.
inline double softmax_clip_factor(const ScaledNorm& nx, const ScaledNorm& nr, double clip) {
  if (!(nx.root > 0.0) || !(nr.root > 0.0)) return 0.0;
  const double limit = (((clip / nx.scale) / nx.root) / nr.scale) / nr.root;
  return limit >= 1.0 ? 1.0 : limit;
}

// W0 is (d, K) with K = n_classes >= 2; labels in [0, K).
template <class Rows>
SoftmaxResult softmax_sgd_train(const Rows& X, const LabelRef& y, const MatRef& W0,
                                const SoftmaxParams& p);

// ---- one Poisson step in two pieces (as sgd.hpp's): a worker holding rows [offset, offset +
// X.rows()) of n_total computes its clipped gradient sum in fixed-point units of C (class after
// class, entry k*d + j; w flattened row-major, j*K + k); the driver adds the workers' units and
// applies noise, step and projection exactly as softmax_sgd_train does (which uses the same
// pieces). Both need sampling poisson and clip > 0.
void softmax_check_distributed(Index n_total, Index d, Index n_classes, const SoftmaxParams& p);
template <class Rows>
void softmax_partial_sum(const Rows& X, const LabelRef& y, const VectorXd& w, Index n_classes,
                         Index t, Index offset, Index n_total, const SoftmaxParams& p,
                         std::int64_t* out);
void softmax_apply_units(VectorXd& w, const std::int64_t* units, Index d, Index n_classes,
                         Index t, const SoftmaxParams& p);

extern template SoftmaxResult softmax_sgd_train<DenseRows>(const DenseRows&, const LabelRef&,
                                                           const MatRef&, const SoftmaxParams&);
extern template void softmax_partial_sum<DenseRows>(const DenseRows&, const LabelRef&,
                                                    const VectorXd&, Index, Index, Index, Index,
                                                    const SoftmaxParams&, std::int64_t*);
extern template SoftmaxResult softmax_sgd_train<CsrRows>(const CsrRows&, const LabelRef&,
                                                         const MatRef&, const SoftmaxParams&);

}  // namespace privlearn::linear
