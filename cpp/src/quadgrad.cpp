#include "privlearn/linear/quadgrad.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"

namespace privlearn::linear {

QgOptimizer qg_optimizer_from_string(const std::string& name) {
  if (name == "nag") return QgOptimizer::nag;
  if (name == "adagrad") return QgOptimizer::adagrad;
  if (name == "adam") return QgOptimizer::adam;
  if (name == "gd") return QgOptimizer::gd;
  checks::fail("unknown optimizer '" + name + "' (expected nag, adagrad, adam or gd)");
}

QgScheduleKind qg_schedule_from_string(const std::string& name) {
  if (name == "constant") return QgScheduleKind::constant;
  if (name == "exponential") return QgScheduleKind::exponential;
  if (name == "inverse_time") return QgScheduleKind::inverse_time;
  checks::fail("unknown schedule kind '" + name +
               "' (expected constant, exponential or inverse_time)");
}

double QgSchedule::at(Index t, Index n) const {
  switch (kind) {
    case QgScheduleKind::constant:
      return base;
    case QgScheduleKind::exponential:
      return base + scale * std::pow(decay, static_cast<double>(t));
    case QgScheduleKind::inverse_time:
      return base + scale / (static_cast<double>(t + 1) * static_cast<double>(n));
  }
  return base;
}

namespace {

// Memory budget (doubles) of the per-block Gram partials held at once; only memory depends on
// it, never the result (block sums are always added in block order).
constexpr Index kGramBudget = Index{1} << 22;
// Memory budget (doubles) of the per-block partial sums of reduce_rows.
constexpr Index kPartialBudget = Index{1} << 21;

// The blocked reduction of parallel::deterministic_sum (blocks of parallel::kReduceBlock rows,
// each summed sequentially from zero, block sums added in block order to a zeroed output: the
// same arithmetic, so the same bits for any thread count), but with as many blocks per parallel
// region as kPartialBudget allows instead of parallel::kReduceWave. One region per pass at the
// sizes of interest: each region ends in a barrier, which on an oversubscribed machine costs a
// scheduler time slice.
template <class AddRow>
void reduce_rows(Index n_rows, Index dim, int n_threads, AddRow&& add_row, VecMut out) {
  out.setZero();
  if (n_rows == 0) return;
  const Index block = parallel::kReduceBlock;
  const Index n_blocks = (n_rows + block - 1) / block;
  if (n_blocks == 1) {
    for (Index i = 0; i < n_rows; ++i) add_row(i, out);
    return;
  }
  const int threads = parallel::resolve_threads(n_threads);
  const Index wave_max = std::max<Index>(parallel::kReduceWave,
                                         kPartialBudget / std::max<Index>(1, dim));
  RowMatrixXd partial(std::min(n_blocks, wave_max), dim);
  for (Index wave_start = 0; wave_start < n_blocks; wave_start += wave_max) {
    const Index wave = std::min(wave_max, n_blocks - wave_start);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1 && wave >= parallel::kMinParallelItems)
#endif
    for (Index b = 0; b < wave; ++b) {
      VectorXd acc = VectorXd::Zero(dim);
      const Index lo = (wave_start + b) * block;
      const Index hi = std::min(n_rows, lo + block);
      for (Index i = lo; i < hi; ++i) add_row(i, VecMut(acc));
      partial.row(b) = acc.transpose();
    }
    for (Index b = 0; b < wave; ++b) out += partial.row(b).transpose();
  }
  (void)threads;
}

bool all_non_negative(const DenseRows& X) {
  const Index n = X.rows(), d = X.cols();
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < d; ++j)
      if (X.X(i, j) < 0.0) return false;
  return true;
}

bool all_non_negative(const CsrRows& X) {
  const std::int64_t nnz = X.indptr[X.n_rows];
  for (std::int64_t k = 0; k < nnz; ++k)
    if (X.data[k] < 0.0) return false;
  return true;
}

// G += X[lo:hi]^T X[lo:hi]
void add_block_gram(const DenseRows& X, Index lo, Index hi, RowMatrixXd& G) {
  const auto block = X.X.middleRows(lo, hi - lo);
  G.noalias() += block.transpose() * block;
}

void add_block_gram(const CsrRows& X, Index lo, Index hi, RowMatrixXd& G) {
  for (Index i = lo; i < hi; ++i)
    for (std::int64_t a = X.indptr[i]; a < X.indptr[i + 1]; ++a) {
      const double va = X.data[a];
      const Index ra = X.indices[a];
      for (std::int64_t b = X.indptr[i]; b < X.indptr[i + 1]; ++b)
        G(ra, X.indices[b]) += va * X.data[b];
    }
}

// X^T X by blocks of parallel::kReduceBlock rows, block Gram matrices added in block order.
template <class Rows>
RowMatrixXd blocked_gram(const Rows& X, int n_threads) {
  const Index n = X.rows(), d = X.cols();
  RowMatrixXd G = RowMatrixXd::Zero(d, d);
  const Index n_blocks = (n + parallel::kReduceBlock - 1) / parallel::kReduceBlock;
  if (n_blocks == 0 || d == 0) return G;
  const Index per_matrix = std::max<Index>(1, d * d);
  const Index wave_max =
      std::max<Index>(1, std::min<Index>(parallel::kReduceWave, kGramBudget / per_matrix));
  std::vector<RowMatrixXd> partial(static_cast<std::size_t>(std::min(wave_max, n_blocks)));
  const int threads = parallel::resolve_threads(n_threads);
  for (Index wave_start = 0; wave_start < n_blocks; wave_start += wave_max) {
    const Index wave = std::min(wave_max, n_blocks - wave_start);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && wave >= 2)
#endif
    for (Index b = 0; b < wave; ++b) {
      RowMatrixXd& P = partial[static_cast<std::size_t>(b)];
      P.setZero(d, d);
      const Index lo = (wave_start + b) * parallel::kReduceBlock;
      const Index hi = std::min(n, lo + parallel::kReduceBlock);
      add_block_gram(X, lo, hi, P);
    }
    for (Index b = 0; b < wave; ++b) G += partial[static_cast<std::size_t>(b)];
  }
  (void)threads;
  return G;
}

void validate_labels(Index n, const VecRef& y) {
  checks::require(y.size() == n, "y must have one entry per row of X");
  for (Index i = 0; i < n; ++i)
    if (!(y[i] == 1.0 || y[i] == -1.0))
      checks::fail("y must contain only -1 and +1, got " + std::to_string(y[i]) + " at row " +
                   std::to_string(i));
}

void validate_params(Index n, Index d, const QuadgradParams& p) {
  checks::require(p.max_iter >= 1, "max_iter must be >= 1, got " + std::to_string(p.max_iter));
  checks::positive(p.epsilon, "epsilon");
  checks::positive(p.adaptive_eps, "adaptive_eps");
  checks::positive(p.nag_alpha0, "nag_alpha0");
  checks::require(p.adam_beta1 >= 0.0 && p.adam_beta1 < 1.0, "adam_beta1 must lie in [0, 1)");
  checks::require(p.adam_beta2 >= 0.0 && p.adam_beta2 < 1.0, "adam_beta2 must lie in [0, 1)");
  const QgSchedule& s = p.schedule;
  checks::require(std::isfinite(s.base) && s.base >= 0.0, "schedule base must be finite and >= 0");
  checks::require(std::isfinite(s.scale) && s.scale >= 0.0,
                  "schedule scale must be finite and >= 0");
  if (s.kind == QgScheduleKind::exponential)
    checks::require(s.decay > 0.0 && s.decay <= 1.0, "schedule decay must lie in (0, 1]");
  checks::require(s.at(0, n) > 0.0, "the schedule's first step factor must be > 0");
  if (p.bbar.size() != 0) {
    checks::require(p.bbar.size() == d, "bbar must have one entry per column of X");
    for (Index j = 0; j < d; ++j)
      checks::require(std::isfinite(p.bbar[j]) && p.bbar[j] > 0.0,
                      "bbar must be finite and > 0");
  }
}

}  // namespace

template <class Rows>
VectorXd gram_abs_row_sums(const Rows& X, int n_threads) {
  const Index n = X.rows(), d = X.cols();
  VectorXd out(d);
  if (all_non_negative(X)) {
    // (X^T X) 1 = X^T (X 1): every entry of X^T X is >= 0, so this is the row sum of |X^T X|.
    const VectorXd ones = VectorXd::Ones(d);
    reduce_rows(
        n, d, n_threads, [&](Index i, VecMut acc) { X.axpy(i, X.dot(i, ones), acc); }, out);
    return out;
  }
  const RowMatrixXd G = blocked_gram(X, n_threads);
  for (Index k = 0; k < d; ++k) out[k] = G.row(k).cwiseAbs().sum();
  return out;
}

template <class Rows>
VectorXd quadgrad_bbar(const Rows& X, double epsilon, int n_threads) {
  checks::positive(epsilon, "epsilon");
  const VectorXd s = gram_abs_row_sums(X, n_threads);
  return (epsilon + 0.25 * s.array()).inverse().matrix();
}

template <class Rows>
double logistic_loglik_gradient(const Rows& X, const VecRef& y, const VecRef& beta, int n_threads,
                                VecMut grad) {
  const Index n = X.rows(), d = X.cols();
  checks::require(beta.size() == d, "beta must have one entry per column of X");
  checks::require(grad.size() == d, "grad must have one entry per column of X");
  checks::require(y.size() == n, "y must have one entry per row of X");
  const VectorXd b = beta;
  VectorXd acc_out(d + 1);
  reduce_rows(
      n, d + 1, n_threads,
      [&](Index i, VecMut acc) {
        const double z = y[i] * X.dot(i, b);
        double s, ll;  // s = 1 - sigma(z) = sigma(-z), ll = -ln(1 + exp(-z))
        if (z >= 0.0) {
          const double e = std::exp(-z);
          s = e / (1.0 + e);
          ll = -std::log1p(e);
        } else {
          const double e = std::exp(z);
          s = 1.0 / (1.0 + e);
          ll = z - std::log1p(e);
        }
        auto head = acc.head(d);
        X.axpy(i, s * y[i], head);
        acc[d] += ll;
      },
      acc_out);
  grad = acc_out.head(d);
  return acc_out[d];
}

template <class Rows>
QuadgradResult quadgrad_train(const Rows& X, const VecRef& y, const VecRef& beta0,
                              const QuadgradParams& p) {
  const Index n = X.rows(), d = X.cols();
  checks::require(n >= 1, "X must have at least one row");
  checks::require(d >= 1, "X must have at least one column");
  validate_labels(n, y);
  checks::require(beta0.size() == d, "beta0 must have one entry per column of X");
  for (Index j = 0; j < d; ++j) checks::finite(beta0[j], "beta0");
  validate_params(n, d, p);

  QuadgradResult r;
  if (p.enhanced) r.bbar = p.bbar.size() ? p.bbar : quadgrad_bbar(X, p.epsilon, p.n_threads);
  const Index T = p.max_iter;
  r.loglik_path.resize(T + 1);

  VectorXd beta = beta0;  // the iterate (V for NAG)
  VectorXd W = beta0;     // NAG: previous w_tmp
  VectorXd g(d), u(d), m = VectorXd::Zero(d), v = VectorXd::Zero(d);
  double alpha0 = p.nag_alpha0;
  double alpha1 = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * alpha0 * alpha0));
  double b1_pow = 1.0, b2_pow = 1.0;

  for (Index t = 0; t < T; ++t) {
    r.loglik_path[t] = logistic_loglik_gradient(X, y, beta, p.n_threads, g);
    if (p.enhanced)
      u = r.bbar.cwiseProduct(g);
    else
      u = g;
    const double rate = p.schedule.at(t, n);
    switch (p.optimizer) {
      case QgOptimizer::nag: {
        const double eta = (1.0 - alpha0) / alpha1;
        const VectorXd w_tmp = beta + rate * u;
        beta = (1.0 - eta) * w_tmp + eta * W;
        W = w_tmp;
        alpha0 = alpha1;
        alpha1 = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * alpha0 * alpha0));
        break;
      }
      case QgOptimizer::gd:
        beta += rate * u;
        break;
      case QgOptimizer::adagrad: {
        v += u.cwiseProduct(u);
        beta += rate * (u.array() / (p.adaptive_eps + v.array().sqrt())).matrix();
        break;
      }
      case QgOptimizer::adam: {
        m = p.adam_beta1 * m + (1.0 - p.adam_beta1) * u;
        v = p.adam_beta2 * v + (1.0 - p.adam_beta2) * u.cwiseProduct(u);
        b1_pow *= p.adam_beta1;
        b2_pow *= p.adam_beta2;
        const auto m_hat = m.array() / (1.0 - b1_pow);
        const auto v_hat = v.array() / (1.0 - b2_pow);
        beta += rate * (m_hat / (v_hat.sqrt() + p.adaptive_eps)).matrix();
        break;
      }
    }
  }
  r.loglik_path[T] = logistic_loglik_gradient(X, y, beta, p.n_threads, g);
  r.beta = beta;
  r.iterations = T;
  return r;
}

VectorXd fixed_hessian_diagonal(const MatRef& A, double epsilon) {
  checks::require(A.rows() == A.cols(), "A must be square");
  checks::require(epsilon >= 0.0 && std::isfinite(epsilon), "epsilon must be finite and >= 0");
  checks::all_finite(A, "A");
  for (Index i = 0; i < A.rows(); ++i)
    for (Index j = 0; j < i; ++j)
      checks::require(A(i, j) == A(j, i), "A must be symmetric");
  VectorXd out(A.rows());
  for (Index k = 0; k < A.rows(); ++k) out[k] = -epsilon - A.row(k).cwiseAbs().sum();
  return out;
}

template VectorXd gram_abs_row_sums<DenseRows>(const DenseRows&, int);
template VectorXd gram_abs_row_sums<CsrRows>(const CsrRows&, int);
template VectorXd quadgrad_bbar<DenseRows>(const DenseRows&, double, int);
template VectorXd quadgrad_bbar<CsrRows>(const CsrRows&, double, int);
template double logistic_loglik_gradient<DenseRows>(const DenseRows&, const VecRef&, const VecRef&,
                                                    int, VecMut);
template double logistic_loglik_gradient<CsrRows>(const CsrRows&, const VecRef&, const VecRef&, int,
                                                  VecMut);
template QuadgradResult quadgrad_train<DenseRows>(const DenseRows&, const VecRef&, const VecRef&,
                                                  const QuadgradParams&);
template QuadgradResult quadgrad_train<CsrRows>(const CsrRows&, const VecRef&, const VecRef&,
                                                const QuadgradParams&);

}  // namespace privlearn::linear
