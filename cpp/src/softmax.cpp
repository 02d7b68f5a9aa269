#include "privlearn/linear/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "privlearn/checks.hpp"
#include "privlearn/fixed_sum.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/samplers.hpp"

namespace privlearn::linear {

Index softmax_step_count(Index n, const SoftmaxParams& p) {
  if (p.steps > 0) return p.steps;
  return (p.epochs * n + p.batch_size - 1) / p.batch_size;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The noise addresses t*d*K + e must stay below the discrete Gaussian's address space (2^56).
constexpr Index kNoiseAddressMax = static_cast<Index>(random::kDiscreteGaussianIndexLimit);

void validate(Index n, Index d, const LabelRef& y, const MatRef& W0, const SoftmaxParams& p) {
  checks::require(n >= 1, "X must have at least one row");
  checks::require(d >= 1, "X must have at least one column");
  checks::require(y.size() == n, "y must have one entry per row of X");
  checks::require(W0.rows() == d, "W0 must have one row per column of X");
  const Index K = W0.cols();
  checks::require(K >= 2, "the softmax model needs n_classes >= 2, got " + std::to_string(K));
  for (Index i = 0; i < n; ++i)
    if (y[i] < 0 || y[i] >= K)
      checks::fail("the label of row " + std::to_string(i) +  // never the label's value
                   " is outside [0, n_classes = " + std::to_string(K) + ")");
  checks::all_finite(W0, "W0");
  checks::require(p.sampling == Sampling::poisson || p.sampling == Sampling::fixed,
                  "softmax SGD supports sampling 'poisson' or 'fixed'");
  check_sgd_schedule(n, p);  // sgd.hpp
  checks::require(p.steps >= 0, "steps must be >= 0");
  check_gaussian_noise(p);
  const Index steps = softmax_step_count(n, p);
  checks::require(steps < static_cast<Index>(random::kRowCount), "too many SGD steps (>= 2^32)");
  checks::require(K <= kNoiseAddressMax / d, "the model is too large (d * n_classes >= 2^56)");
  checks::require(steps <= kNoiseAddressMax / (d * K),
                  "too many steps for the noise address space (steps * d * n_classes > 2^56)");
  if (p.record_every > 0)
    checks::require(steps / p.record_every < (Index{1} << 24), "record_every is too small");
}


// a[0..K) <- the gradient coefficients r = p - e_label of row i (see softmax.hpp), clipped.
template <class Rows>
void row_coefficients(const Rows& X, Index i, const std::vector<VectorXd>& cols,
                      std::int64_t label, double clip, double* a) {
  const Index K = static_cast<Index>(cols.size());
  double m = -kInf;
  bool nan = false;
  for (Index k = 0; k < K; ++k) {
    // the fixed order of dot_fixed (rows.hpp): the same bits on a view of the rows as on the
    // materialised matrix, and the numpy twin's order (Eigen's dot order depends on alignment)
    a[k] = X.dot_fixed(i, cols[static_cast<std::size_t>(k)]);
    if (std::isnan(a[k])) nan = true;
    m = std::fmax(m, a[k]);
  }
  if (nan) {  // undefined scores: 0 under clipping, otherwise NaN (the run then fails)
    const double v = clip > 0.0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    for (Index k = 0; k < K; ++k) a[k] = v;
    return;
  }
  if (std::isinf(m)) {  // limits: uniform over the classes at +inf, or over all (all -inf)
    for (Index k = 0; k < K; ++k) a[k] = (m > 0.0 && a[k] != m) ? 0.0 : 1.0;
  } else {
    for (Index k = 0; k < K; ++k) a[k] = std::exp(a[k] - m);
  }
  double s = 0.0;
  for (Index k = 0; k < K; ++k) s += a[k];
  for (Index k = 0; k < K; ++k) a[k] = a[k] / s;
  a[label] -= 1.0;
  if (clip > 0.0) {
    const Eigen::Map<const VectorXd> r(a, K);
    const ScaledNorm nr = make_scaled_norm(
        r.squaredNorm(), [&] { return r.cwiseAbs().maxCoeff(); },
        [&](double mx) { return (r / mx).squaredNorm(); });
    const double f = softmax_clip_factor(X.scaled_norm(i), nr, clip);
    for (Index k = 0; k < K; ++k) a[k] *= f;
  }
}

// The clipped per-example gradient sum over rows[0..count) (global indices, minus `offset`)
// in fixed-point units of C, class after class (entry k*d + j; fixed_sum.hpp): every entry
// |x_ij r_k| of a clipped gradient is at most C. coef: (count, K) scratch.
template <class Rows>
void clipped_units(const Rows& X, const LabelRef& y, const std::vector<VectorXd>& cols,
                   const std::int64_t* rows, Index count, Index offset, const SoftmaxParams& p,
                   RowMatrixXd& coef, std::int64_t* out) {
  const Index d = X.cols();
  const Index K = static_cast<Index>(cols.size());
  const fixed::Scale scale(p.clip);
  coef.resize(count, K);
  const double work = static_cast<double>(count) * static_cast<double>(2 * d * K);
  fixed::sum(
      count, d * K, p.n_threads, work,
      [&](Index r, std::int64_t* acc) {
        const Index i = rows[r] - offset;
        double* a = coef.row(r).data();
        row_coefficients(X, i, cols, y[i], p.clip, a);
        for (Index k = 0; k < K; ++k) X.axpy_units(i, a[k] * scale.to_units, acc + k * d);
      },
      out);
}

// The iterate's K columns (for the row dot products) from w flattened row-major (j*K + k).
void split_columns(const VectorXd& w, Index d, std::vector<VectorXd>& cols) {
  const Index K = static_cast<Index>(cols.size());
  for (Index j = 0; j < d; ++j)
    for (Index k = 0; k < K; ++k) cols[static_cast<std::size_t>(k)][j] = w[j * K + k];
}

// The released gradient sum of step t (class after class, k*d + j) from its exact units: with
// sigma > 0, rounded to the noise lattice C 2^-k plus exact discrete Gaussian noise (random.hpp,
// noise_lattice; draw t*d*K + e for entry e = k*d + j of the noise stream), converted to reals
// only then (post-processing); otherwise the units themselves.
void noisy_units(std::int64_t* units, Index dK, Index t, const SoftmaxParams& p, double* grad) {
  if (p.sigma > 0.0) {
    const random::NoiseLattice lattice =
        random::noise_lattice(p.sigma, static_cast<std::uint64_t>(dK));
    random::add_lattice_noise(p.key, p.noise_stream, static_cast<std::uint64_t>(t * dK),
                              static_cast<std::size_t>(dK), lattice, units, 1);
    const double unit = std::ldexp(p.clip, -lattice.frac_bits);
    for (Index e = 0; e < dK; ++e) grad[e] = static_cast<double>(units[e]) * unit;
  } else {
    fixed::to_real(units, dK, fixed::Scale(p.clip), grad);
  }
}

// Step and projection of step t (grad class after class, k*d + j; noise already in it).
void apply_step(VectorXd& w, const VectorXd& grad, Index d, Index K, double denom, Index t,
                const SoftmaxParams& p) {
  const double eta = sgd_learning_rate(p, t);
  for (Index j = 0; j < d; ++j)
    for (Index k = 0; k < K; ++k) {
      const Index e = j * K + k;
      const double g = grad[k * d + j];
      w[e] = w[e] - eta * (p.lam * w[e] + g / denom);
    }
  if (p.radius > 0.0 && std::isfinite(p.radius)) {
    const ScaledNorm norm = scaled_norm(w);  // no overflow of ||W||_F^2 (rows.hpp)
    if (norm.value() > p.radius) w *= (p.radius / norm.scale) / norm.root;
  }
}

double poisson_rate(Index n, const SoftmaxParams& p) {
  return p.rate > 0.0 ? p.rate : static_cast<double>(p.batch_size) / static_cast<double>(n);
}

}  // namespace

void softmax_check_distributed(Index n_total, Index d, Index n_classes, const SoftmaxParams& p) {
  checks::require(n_total >= 1 && d >= 1, "X must have at least one row and one column");
  checks::require(n_classes >= 2, "the softmax model needs n_classes >= 2");
  checks::require(p.sampling == Sampling::poisson && p.clip > 0.0,
                  "a distributed softmax SGD run needs sampling 'poisson' and clip > 0");
  check_sgd_schedule(n_total, p);
  check_gaussian_noise(p);
  checks::require(p.record_every == 0, "a distributed run records no path");
  checks::require(n_classes <= kNoiseAddressMax / d &&
                      softmax_step_count(n_total, p) <= kNoiseAddressMax / (d * n_classes),
                  "too many steps for the noise address space (steps * d * n_classes > 2^56)");
}

template <class Rows>
void softmax_partial_sum(const Rows& X, const LabelRef& y, const VectorXd& w, Index n_classes,
                         Index t, Index offset, Index n_total, const SoftmaxParams& p,
                         std::int64_t* out) {
  const Index d = X.cols();
  checks::require(offset >= 0 && offset + X.rows() <= n_total && y.size() == X.rows() &&
                      n_classes >= 2 && w.size() == d * n_classes,
                  "softmax_partial_sum: the rows, labels and iterate do not match");
  for (Index i = 0; i < y.size(); ++i)
    if (y[i] < 0 || y[i] >= n_classes)
      checks::fail("the label of row " + std::to_string(offset + i) +
                   " is outside [0, n_classes = " + std::to_string(n_classes) + ")");
  std::vector<VectorXd> cols(static_cast<std::size_t>(n_classes), VectorXd(d));
  split_columns(w, d, cols);
  const std::vector<std::int64_t> rows = samplers::poisson_sample_range(
      p.key, p.batch_stream, static_cast<std::uint64_t>(t), n_total, poisson_rate(n_total, p),
      offset, offset + X.rows());
  RowMatrixXd coef;
  clipped_units(X, y, cols, rows.data(), static_cast<Index>(rows.size()), offset, p, coef, out);
}

void softmax_apply_units(VectorXd& w, const std::int64_t* units, Index d, Index n_classes,
                         Index t, const SoftmaxParams& p) {
  VectorXd grad(d * n_classes);
  std::vector<std::int64_t> noisy(units, units + d * n_classes);
  noisy_units(noisy.data(), d * n_classes, t, p, grad.data());
  apply_step(w, grad, d, n_classes, static_cast<double>(p.batch_size), t, p);
}

template <class Rows>
SoftmaxResult softmax_sgd_train(const Rows& X, const LabelRef& y, const MatRef& W0,
                                const SoftmaxParams& p) {
  const Index n = X.rows();
  const Index d = X.cols();
  validate(n, d, y, W0, p);
  const Index K = W0.cols();
  const Index dK = d * K;
  const Index steps = softmax_step_count(n, p);
  const double q_rate =
      p.rate > 0.0 ? p.rate : static_cast<double>(p.batch_size) / static_cast<double>(n);

  // w: the iterate flattened row-major (entry j*K + k is W(j, k)), the layout of the noise;
  // cols: its K columns (for the row dot products); grad: class after class (k*d + j).
  VectorXd w(dK);
  for (Index j = 0; j < d; ++j)
    for (Index k = 0; k < K; ++k) w[j * K + k] = W0(j, k);
  std::vector<VectorXd> cols(static_cast<std::size_t>(K), VectorXd(d));
  VectorXd grad(dK);
  RowMatrixXd coef;  // (batch, K) coefficients; row r written only by the task that owns r
  std::vector<std::int64_t> batch;
  std::vector<VectorXd> recorded;
  SoftmaxResult result;

  std::vector<std::int64_t> units(static_cast<std::size_t>(p.clip > 0.0 ? dK : 0));
  for (Index t = 0; t < steps; ++t) {
    interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
    split_columns(w, d, cols);

    // ---- the batch of step t
    if (p.sampling == Sampling::fixed)
      batch = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                   static_cast<std::uint64_t>(t), n, p.batch_size);
    else
      batch = samplers::poisson_sample(p.key, p.batch_stream, static_cast<std::uint64_t>(t), n,
                                       q_rate);
    const Index count = static_cast<Index>(batch.size());
    const std::int64_t* rows = batch.data();

    // ---- sum of (clipped) per-example gradients: exact in fixed point when clipped (bounded
    // entries), else a deterministic blocked float sum; both independent of n_threads
    if (p.clip > 0.0) {
      clipped_units(X, y, cols, rows, count, 0, p, coef, units.data());
      noisy_units(units.data(), dK, t, p, grad.data());
    } else {
      coef.resize(count, K);
      parallel::deterministic_sum(
          count, dK, p.n_threads,
          [&](Index r, VecMut acc) {
            const Index i = rows[r];
            double* a = coef.row(r).data();
            row_coefficients(X, i, cols, y[i], p.clip, a);
            for (Index k = 0; k < K; ++k) {
              auto seg = acc.segment(k * d, d);
              X.axpy(i, a[k], seg);
            }
          },
          grad);
    }

    // ---- noise, step and projection
    const double denom = p.sampling == Sampling::poisson ? static_cast<double>(p.batch_size)
                                                         : static_cast<double>(count);
    apply_step(w, grad, d, K, denom, t, p);
    if (p.record_every > 0 && ((t + 1) % p.record_every == 0 || t + 1 == steps)) {
      recorded.push_back(w);
      result.path_steps.push_back(static_cast<std::int64_t>(t + 1));
    }
  }
  for (Index e = 0; e < dK; ++e)
    if (!std::isfinite(w[e]))
      checks::fail("the softmax SGD iterate became non-finite (overflow at W[" +
                   std::to_string(e / K) + ", " + std::to_string(e % K) +
                   "]): lower eta0 or alpha, clip the gradients, or scale X");
  result.steps = steps;
  result.W = Eigen::Map<const RowMatrixXd>(w.data(), d, K);
  result.path.resize(static_cast<Index>(recorded.size()), dK);
  for (std::size_t k = 0; k < recorded.size(); ++k)
    result.path.row(static_cast<Index>(k)) = recorded[k].transpose();
  return result;
}

template SoftmaxResult softmax_sgd_train<DenseRows>(const DenseRows&, const LabelRef&,
                                                    const MatRef&, const SoftmaxParams&);
template SoftmaxResult softmax_sgd_train<CsrRows>(const CsrRows&, const LabelRef&, const MatRef&,
                                                  const SoftmaxParams&);
template void softmax_partial_sum<DenseRows>(const DenseRows&, const LabelRef&, const VectorXd&,
                                             Index, Index, Index, Index, const SoftmaxParams&,
                                             std::int64_t*);

}  // namespace privlearn::linear
