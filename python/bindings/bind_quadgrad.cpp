// Bindings of privlearn/linear/quadgrad.hpp (thin: argument conversion only).

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "bindings.hpp"
#include "privlearn/checks.hpp"
#include "privlearn/linear/quadgrad.hpp"

namespace privlearn::bindings {

namespace {

using linear::QuadgradParams;
using linear::QuadgradResult;

QuadgradParams qg_params(const std::string& optimizer, bool enhanced, Index max_iter,
                         const std::string& schedule_kind, double base, double scale,
                         double decay, double epsilon, double nag_alpha0, double adam_beta1,
                         double adam_beta2, double adaptive_eps, const VecRef& bbar,
                         int n_threads) {
  QuadgradParams p;
  p.optimizer = linear::qg_optimizer_from_string(optimizer);
  p.enhanced = enhanced;
  p.max_iter = max_iter;
  p.schedule.kind = linear::qg_schedule_from_string(schedule_kind);
  p.schedule.base = base;
  p.schedule.scale = scale;
  p.schedule.decay = decay;
  p.epsilon = epsilon;
  p.nag_alpha0 = nag_alpha0;
  p.adam_beta1 = adam_beta1;
  p.adam_beta2 = adam_beta2;
  p.adaptive_eps = adaptive_eps;
  p.bbar = bbar;
  p.n_threads = n_threads;
  return p;
}

py::tuple qg_to_py(QuadgradResult&& r) {
  return py::make_tuple(std::move(r.beta), std::move(r.loglik_path), std::move(r.bbar),
                        r.iterations);
}

#define PRIVLEARN_QG_ARGS                                                                      \
  py::arg("optimizer"), py::arg("enhanced"), py::arg("max_iter"), py::arg("schedule_kind"),    \
      py::arg("base"), py::arg("scale"), py::arg("decay"), py::arg("epsilon"),                 \
      py::arg("nag_alpha0"), py::arg("adam_beta1"), py::arg("adam_beta2"),                     \
      py::arg("adaptive_eps"), py::arg("bbar"), py::arg("n_threads")

}  // namespace

void bind_quadgrad(py::module_& m) {
  m.def(
      "quadgrad_train_dense",
      [](const MatRef& X, const VecRef& y, const VecRef& beta0, const std::string& optimizer,
         bool enhanced, Index max_iter, const std::string& schedule_kind, double base,
         double scale, double decay, double epsilon, double nag_alpha0, double adam_beta1,
         double adam_beta2, double adaptive_eps, const VecRef& bbar, int n_threads) {
        const QuadgradParams p =
            qg_params(optimizer, enhanced, max_iter, schedule_kind, base, scale, decay, epsilon,
                      nag_alpha0, adam_beta1, adam_beta2, adaptive_eps, bbar, n_threads);
        QuadgradResult r;
        {
          py::gil_scoped_release release;
          checks::all_finite(X, "X");
          r = linear::quadgrad_train(DenseRows(X), y, beta0, p);
        }
        return qg_to_py(std::move(r));
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("beta0"), PRIVLEARN_QG_ARGS,
      "Quadratic-gradient / first-order logistic regression on dense rows "
      "(privlearn/linear/quadgrad.hpp). Returns (beta, loglik_path, bbar, iterations).");
  m.def(
      "quadgrad_train_csr",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols,
         const VecRef& y, const VecRef& beta0, const std::string& optimizer, bool enhanced,
         Index max_iter, const std::string& schedule_kind, double base, double scale,
         double decay, double epsilon, double nag_alpha0, double adam_beta1, double adam_beta2,
         double adaptive_eps, const VecRef& bbar, int n_threads) {
        const QuadgradParams p =
            qg_params(optimizer, enhanced, max_iter, schedule_kind, base, scale, decay, epsilon,
                      nag_alpha0, adam_beta1, adam_beta2, adaptive_eps, bbar, n_threads);
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows& rows = csr.rows();
        QuadgradResult r;
        {
          py::gil_scoped_release release;
          rows.validate(csr.nnz());
          r = linear::quadgrad_train(rows, y, beta0, p);
        }
        return qg_to_py(std::move(r));
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"), py::arg("y"),
      py::arg("beta0"), PRIVLEARN_QG_ARGS,
      "Quadratic-gradient / first-order logistic regression on CSR rows.");
  m.def(
      "quadgrad_bbar_dense",
      [](const MatRef& X, double epsilon, int n_threads) {
        VectorXd out;
        {
          py::gil_scoped_release release;
          checks::all_finite(X, "X");
          out = linear::quadgrad_bbar(DenseRows(X), epsilon, n_threads);
        }
        return out;
      },
      py::arg("X").noconvert(), py::arg("epsilon"), py::arg("n_threads"),
      "diag(B_bar) = 1 / (epsilon + sum_j |(X^T X)_kj| / 4) on dense rows.");
  m.def(
      "quadgrad_bbar_csr",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols,
         double epsilon, int n_threads) {
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows& rows = csr.rows();
        VectorXd out;
        {
          py::gil_scoped_release release;
          rows.validate(csr.nnz());
          out = linear::quadgrad_bbar(rows, epsilon, n_threads);
        }
        return out;
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"),
      py::arg("epsilon"), py::arg("n_threads"), "diag(B_bar) on CSR rows.");
  m.def(
      "logistic_loglik_gradient_dense",
      [](const MatRef& X, const VecRef& y, const VecRef& beta, int n_threads) {
        VectorXd grad(X.cols());
        double ll = 0.0;
        {
          py::gil_scoped_release release;
          checks::all_finite(X, "X");
          ll = linear::logistic_loglik_gradient(DenseRows(X), y, beta, n_threads, grad);
        }
        return py::make_tuple(ll, grad);
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("beta"), py::arg("n_threads"),
      "(l(beta), gradient) of the logistic log-likelihood, one fused deterministic pass.");
  m.def(
      "logistic_loglik_gradient_csr",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols,
         const VecRef& y, const VecRef& beta, int n_threads) {
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows& rows = csr.rows();
        VectorXd grad(n_cols);
        double ll = 0.0;
        {
          py::gil_scoped_release release;
          rows.validate(csr.nnz());
          ll = linear::logistic_loglik_gradient(rows, y, beta, n_threads, grad);
        }
        return py::make_tuple(ll, grad);
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"), py::arg("y"),
      py::arg("beta"), py::arg("n_threads"), "(l(beta), gradient) on CSR rows.");
  m.def(
      "fixed_hessian_diagonal",
      [](const MatRef& A, double epsilon) { return linear::fixed_hessian_diagonal(A, epsilon); },
      py::arg("A"), py::arg("epsilon"),
      "Lemma 3.1: diag(B) with B_kk = -epsilon - sum_i |A_ki| for a symmetric A (B <= A).");
}

}  // namespace privlearn::bindings
