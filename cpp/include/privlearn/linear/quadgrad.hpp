#pragma once
// Quadratic-gradient optimizers for logistic regression, in the clear (Chiang, "Privacy-preserving
// logistic regression training with a faster gradient variant", Sections 3.2-3.3, Algorithm 1).
//
// Problem: maximise l(beta) = -sum_i ln(1 + exp(-y_i beta^T x_i)), y_i in {-1, +1}, x_i the rows
// of X as given (the caller puts the intercept column 1 in X). Full-batch gradient
//   g = sum_i (1 - sigma(y_i beta^T x_i)) y_i x_i.
//
// Quadratic gradient (Definition 3.2): with H_bar = -(1/4) X^T X (Boehning-Lindsay bound),
//   B_tilde_kk = -eps - sum_j |H_bar_kj|,  B_bar_kk = 1 / |B_tilde_kk|,  G = B_bar g,
// i.e. B_bar_kk = 1 / (eps + (1/4) sum_j |(X^T X)_kj|). Row sums of |X^T X|:
//   * every x_ij >= 0 (min-max scaled data): (X^T X)_kj >= 0, so sum_j |(X^T X)_kj| =
//     (X^T (X 1))_k = sum_i x_ik (sum_j x_ij), O(nnz) without forming X^T X;
//   * otherwise X^T X is formed (O(n d^2) time, O(d^2) memory) by a deterministic blocked sum
//     of per-block Gram matrices, then sum_j |.| per row.
//
// Optimizers, t = 0, 1, ... the 0-based iteration, r_t = schedule(t, n) the step factor
// (plain: learning rate on g; enhanced: N_t on G), u_t = g (plain) or G (enhanced):
//   nag      Kim et al. 2018a as in Algorithm 1: alpha_0 = 0.01,
//            alpha_{t+1} = (1 + sqrt(1 + 4 alpha_t^2)) / 2, eta_t = (1 - alpha_t) / alpha_{t+1};
//            gradient at V; w_tmp = V + r_t u_t; V = (1 - eta_t) w_tmp + eta_t W; W = w_tmp.
//            The returned iterate is V.
//   adagrad  acc += u_t^2; beta += r_t u_t / (eps_a + sqrt(acc)) (elementwise; ascent).
//   adam     m = b1 m + (1 - b1) u_t; v = b2 v + (1 - b2) u_t^2;
//            beta += r_t (m / (1 - b1^(t+1))) / (sqrt(v / (1 - b2^(t+1))) + eps_a).
//   gd       beta += r_t u_t: the raw gradient / quadratic-gradient ascent of the paper's
//            Figure 4 (beta_{t+1} = beta_t + lr g, resp. + LR G).
// Schedules: constant r_t = base; exponential r_t = base + scale decay^t (the paper's
// recommendation 1 + A gamma^t; 1 + 0.9^t in its encrypted runs); inverse_time
// r_t = base + scale / ((1 + t) n) (Kim et al.'s 10 / ((1 + t) n); 1 + 10 / ((1 + t) n) is
// Algorithm 1's enhanced step).
//
// The gradient and the log-likelihood are one fused pass over the rows with the deterministic
// blocked reduction of parallel.hpp (the same block layout and summation order, with one
// parallel region per pass): results are bit-identical for any n_threads. Dense rows are taken
// four at a time within a block (vectorised dot products with the rows read from memory once,
// then the logistic terms, then the gradient update while the rows are still in L1), so the
// pass runs near the speed of one read of X; CSR rows are taken one at a time. exp(-|z|) and
// ln(1 + e) are written in +, -, *, / (within one ulp of the C library's; see quadgrad.cpp), so
// the four rows' logistic terms run in vector lanes and the numpy twin repeats them to the bit.
// Measured (bench/results quadgrad row): at d >= 100 an iteration costs ~1.2-1.3 reads of X
// (the memory-bandwidth floor); at small d (HELR shapes, d = 10-20) the per-row exp / ln(1 + e)
// and the O(d) row work dominate.

#include <string>

#include "privlearn/rows.hpp"
#include "privlearn/types.hpp"

namespace privlearn::linear {

enum class QgOptimizer { nag = 0, adagrad = 1, adam = 2, gd = 3 };
enum class QgScheduleKind { constant = 0, exponential = 1, inverse_time = 2 };

QgOptimizer qg_optimizer_from_string(const std::string& name);
QgScheduleKind qg_schedule_from_string(const std::string& name);

struct QgSchedule {
  QgScheduleKind kind = QgScheduleKind::inverse_time;
  double base = 1.0;
  double scale = 10.0;
  double decay = 0.9;
  // r_t for iteration t (0-based) and n examples.
  double at(Index t, Index n) const;
};

struct QuadgradParams {
  QgOptimizer optimizer = QgOptimizer::nag;
  bool enhanced = true;
  Index max_iter = 10;
  QgSchedule schedule{};
  double epsilon = 1e-8;        // eps of B_tilde (Definition 3.2)
  double nag_alpha0 = 0.01;     // alpha_0 of Kim et al.'s NAG
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adaptive_eps = 1e-8;   // eps_a of the Adagrad / Adam denominators
  VectorXd bbar;                // precomputed diag(B_bar) (length d); empty = compute from X
  int n_threads = 0;
};

struct QuadgradResult {
  VectorXd beta;         // final iterate (V for NAG)
  VectorXd loglik_path;  // l at the iterate after 0, 1, ..., iterations steps (length iters + 1)
  VectorXd bbar;         // diag(B_bar) used (empty for the plain optimizers)
  Index iterations = 0;
};

// sum_j |(X^T X)_kj| for every column k (see the header comment for the formula used).
template <class Rows>
VectorXd gram_abs_row_sums(const Rows& X, int n_threads);

// diag(B_bar): 1 / (eps + (1/4) sum_j |(X^T X)_kj|).
template <class Rows>
VectorXd quadgrad_bbar(const Rows& X, double epsilon, int n_threads);

// Fused pass: grad = sum_i (1 - sigma(y_i beta^T x_i)) y_i x_i; returns l(beta).
template <class Rows>
double logistic_loglik_gradient(const Rows& X, const VecRef& y, const VecRef& beta, int n_threads,
                                VecMut grad);

template <class Rows>
QuadgradResult quadgrad_train(const Rows& X, const VecRef& y, const VecRef& beta0,
                              const QuadgradParams& p);

// Lemma 3.1: diag(B) with B_kk = -eps - sum_i |A_ki| for a symmetric matrix A (B <= A).
VectorXd fixed_hessian_diagonal(const MatRef& A, double epsilon);

extern template VectorXd gram_abs_row_sums<DenseRows>(const DenseRows&, int);
extern template VectorXd gram_abs_row_sums<CsrRows>(const CsrRows&, int);
extern template VectorXd quadgrad_bbar<DenseRows>(const DenseRows&, double, int);
extern template VectorXd quadgrad_bbar<CsrRows>(const CsrRows&, double, int);
extern template double logistic_loglik_gradient<DenseRows>(const DenseRows&, const VecRef&,
                                                           const VecRef&, int, VecMut);
extern template double logistic_loglik_gradient<CsrRows>(const CsrRows&, const VecRef&,
                                                         const VecRef&, int, VecMut);
extern template QuadgradResult quadgrad_train<DenseRows>(const DenseRows&, const VecRef&,
                                                         const VecRef&, const QuadgradParams&);
extern template QuadgradResult quadgrad_train<CsrRows>(const CsrRows&, const VecRef&,
                                                       const VecRef&, const QuadgradParams&);

}  // namespace privlearn::linear
