#include "privlearn/linear/sgd.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/samplers.hpp"

namespace privlearn::linear {

Mechanism mechanism_from_string(const std::string& name) {
  if (name == "none") return Mechanism::none;
  if (name == "l2-laplace") return Mechanism::l2_laplace;
  if (name == "gaussian") return Mechanism::gaussian;
  checks::fail("unknown mechanism '" + name + "' (expected none, l2-laplace or gaussian)");
}

Sampling sampling_from_string(const std::string& name) {
  if (name == "disjoint") return Sampling::disjoint;
  if (name == "poisson") return Sampling::poisson;
  if (name == "fixed") return Sampling::fixed;
  checks::fail("unknown sampling '" + name + "' (expected disjoint, poisson or fixed)");
}

Schedule schedule_from_string(const std::string& name) {
  if (name == "inv_sqrt") return Schedule::inv_sqrt;
  if (name == "inv_lambda_t") return Schedule::inv_lambda_t;
  if (name == "constant") return Schedule::constant;
  checks::fail("unknown learning_rate '" + name + "' (expected inv_sqrt, inv_lambda_t or constant)");
}

Index sgd_step_count(Index n, const SgdParams& p) {
  if (p.sampling == Sampling::disjoint) return p.epochs * ((n + p.batch_size - 1) / p.batch_size);
  if (p.steps > 0) return p.steps;
  // ceil(epochs * n / L) without overflow for realistic sizes
  return (p.epochs * n + p.batch_size - 1) / p.batch_size;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void validate(Index n, Index d, const VecRef& y, const VecRef& w0, const SgdParams& p) {
  checks::require(n >= 1, "X must have at least one row");
  checks::require(y.size() == n, "y must have one entry per row of X");
  checks::require(w0.size() == d, "w0 must have one entry per column of X");
  for (Index i = 0; i < n; ++i) checks::finite(y[i], "y");
  for (Index j = 0; j < d; ++j) checks::finite(w0[j], "w0");
  check_sgd_schedule(n, p);  // sgd.hpp
  if (p.mechanism == Mechanism::l2_laplace) {
    checks::require(in_range(p.epsilon, kEpsilonMin, kEpsilonMax) || p.epsilon == kInf,
                    "epsilon must lie in [1e-6, 1e6] or be inf, got " + std::to_string(p.epsilon));
    checks::require(p.sampling == Sampling::disjoint,
                    "the l2-laplace mechanism is accounted by parallel composition over disjoint "
                    "batches: sampling must be 'disjoint'");
  }
  if (p.mechanism == Mechanism::gaussian) check_gaussian_noise(p);
  const Index steps = sgd_step_count(n, p);
  checks::require(steps < static_cast<Index>(random::kRowCount), "too many SGD steps (>= 2^32)");
  checks::require(p.epochs < static_cast<Index>(random::kRowCount), "too many epochs");
  if (p.record_every > 0)
    checks::require(steps / p.record_every < (Index{1} << 24), "record_every is too small");
}


}  // namespace

template <class Rows>
SgdResult sgd_train(const Rows& X, const VecRef& y, const VecRef& w0, const SgdParams& p) {
  const Index n = X.rows();
  const Index d = X.cols();
  validate(n, d, y, w0, p);
  const Index steps = sgd_step_count(n, p);
  const Index per_pass = (n + p.batch_size - 1) / p.batch_size;
  const bool clipped = p.clip > 0.0;
  const double noise_unit = clipped ? p.clip : 1.0;  // Song: sensitivity 2C of the summed gradient
  const double q_rate =
      p.rate > 0.0 ? p.rate : static_cast<double>(p.batch_size) / static_cast<double>(n);

  SgdResult result;
  result.w = w0;
  VectorXd& w = result.w;
  VectorXd grad(d), noise(d);
  std::vector<std::int64_t> perm, batch;
  std::vector<VectorXd> recorded;

  for (Index t = 0; t < steps; ++t) {
    // ---- the batch of step t
    const std::int64_t* rows = nullptr;
    Index count = 0;
    if (p.sampling == Sampling::disjoint) {
      const Index pass = t / per_pass, k = t % per_pass;
      if (k == 0)
        perm = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                    static_cast<std::uint64_t>(pass), n, n);
      const Index lo = k * p.batch_size;
      rows = perm.data() + lo;
      count = std::min(n, lo + p.batch_size) - lo;
    } else if (p.sampling == Sampling::fixed) {
      batch = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                   static_cast<std::uint64_t>(t), n, p.batch_size);
      rows = batch.data();
      count = p.batch_size;
    } else {
      batch = samplers::poisson_sample(p.key, p.batch_stream, static_cast<std::uint64_t>(t), n,
                                       q_rate);
      rows = batch.data();
      count = static_cast<Index>(batch.size());
    }

    // ---- sum of (clipped) per-example gradients, deterministic for any thread count
    parallel::deterministic_sum(
        count, d, p.n_threads,
        [&](Index r, VecMut acc) {
          const Index i = rows[r];
          double c = loss_derivative(p.loss, X.dot(i, w), y[i]);
          if (clipped) c = clip_coefficient(c, X.scaled_norm(i), p.clip);  // losses.hpp
          X.axpy(i, c, acc);
        },
        grad);

    // ---- noise
    if (p.mechanism == Mechanism::l2_laplace && std::isfinite(p.epsilon)) {
      random::l2_laplace(p.key, p.noise_stream, static_cast<std::uint64_t>(t), 1,
                         static_cast<std::size_t>(d), p.epsilon, noise.data(), 1);
      grad += noise_unit * noise;
    } else if (p.mechanism == Mechanism::gaussian && p.sigma > 0.0) {
      random::normal(p.key, p.noise_stream, static_cast<std::uint64_t>(t) * d,
                     static_cast<std::size_t>(d), noise.data(), 1);
      grad += (p.sigma * p.clip) * noise;
    }

    // ---- step and projection
    const double denom = p.sampling == Sampling::poisson ? static_cast<double>(p.batch_size)
                                                         : static_cast<double>(count);
    const double eta = sgd_learning_rate(p, t);
    w -= eta * (p.lam * w + grad / denom);
    if (p.radius > 0.0 && std::isfinite(p.radius)) {
      const ScaledNorm norm = scaled_norm(w);  // no overflow of ||w||^2 (rows.hpp)
      if (norm.value() > p.radius) w *= (p.radius / norm.scale) / norm.root;
    }
    if (p.record_every > 0 && ((t + 1) % p.record_every == 0 || t + 1 == steps)) {
      recorded.push_back(w);
      result.path_steps.push_back(static_cast<std::int64_t>(t + 1));
    }
  }
  for (Index j = 0; j < d; ++j)
    if (!std::isfinite(w[j]))
      checks::fail("the SGD iterate became non-finite (overflow at coefficient " +
                   std::to_string(j) +
                   "): lower eta0 or alpha, clip the gradients, or scale X and y");
  result.steps = steps;
  result.path.resize(static_cast<Index>(recorded.size()), d);
  for (std::size_t k = 0; k < recorded.size(); ++k)
    result.path.row(static_cast<Index>(k)) = recorded[k].transpose();
  return result;
}

template SgdResult sgd_train<DenseRows>(const DenseRows&, const VecRef&, const VecRef&,
                                        const SgdParams&);
template SgdResult sgd_train<CsrRows>(const CsrRows&, const VecRef&, const VecRef&,
                                      const SgdParams&);

}  // namespace privlearn::linear
