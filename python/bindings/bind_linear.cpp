// Bindings of privlearn/linear/*.hpp (thin: argument conversion only).

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "privlearn/linear/scd.hpp"
#include "privlearn/linear/sgd.hpp"
#include "privlearn/linear/softmax.hpp"
#include "privlearn/row_kernels.hpp"

namespace privlearn::bindings {

namespace {

using linear::SgdParams;
using linear::SgdResult;

SgdParams sgd_params(const std::string& loss, const std::string& mechanism,
                     const std::string& sampling, const std::string& schedule, double lam,
                     Index batch_size, Index epochs, Index steps, double eta0, double clip,
                     double epsilon, double sigma, double radius, const py::bytes& key,
                     std::uint64_t batch_stream, std::uint64_t noise_stream, Index record_every,
                     int n_threads, double rate) {
  SgdParams p;
  p.loss = linear::loss_from_string(loss);
  p.mechanism = linear::mechanism_from_string(mechanism);
  p.sampling = linear::sampling_from_string(sampling);
  p.schedule = linear::schedule_from_string(schedule);
  p.lam = lam;
  p.batch_size = batch_size;
  p.epochs = epochs;
  p.steps = steps;
  p.eta0 = eta0;
  p.clip = clip;
  p.epsilon = epsilon;
  p.sigma = sigma;
  p.radius = radius;
  p.key = key_from_py(key);
  p.batch_stream = batch_stream;
  p.noise_stream = noise_stream;
  p.record_every = record_every;
  p.n_threads = n_threads;
  p.rate = rate;
  return p;
}

py::tuple to_py(SgdResult&& r) {
  return py::make_tuple(std::move(r.w), std::move(r.path), std::move(r.path_steps), r.steps);
}

#define PRIVLEARN_SGD_ARGS                                                                       \
  py::arg("loss"), py::arg("mechanism"), py::arg("sampling"), py::arg("schedule"), py::arg("lam"), \
      py::arg("batch_size"), py::arg("epochs"), py::arg("steps"), py::arg("eta0"),               \
      py::arg("clip"), py::arg("epsilon"), py::arg("sigma"), py::arg("radius"), py::arg("key"),  \
      py::arg("batch_stream"), py::arg("noise_stream"), py::arg("record_every"),                 \
      py::arg("n_threads"), py::arg("rate") = 0.0

// The dense rows a trainer sees: X itself, or the view (s_i x_i, c) of rows.hpp when the caller
// passes row_scale (s, one factor per row: a projection onto a ball) and/or intercept (the
// constant column c), so that neither the projection nor the intercept column copies X
// (issue 32, item 2). The factors must be finite and > 0 and c finite.
using RowScale = py::array_t<double, py::array::c_style | py::array::forcecast>;

const double* checked_row_scale(const std::optional<RowScale>& row_scale,
                                const std::optional<double>& intercept, Index n_rows) {
  if (intercept) checks::finite(*intercept, "intercept");
  if (!row_scale) return nullptr;
  if (row_scale->ndim() != 1 || row_scale->shape(0) != n_rows)
    throw std::invalid_argument("row_scale must have one entry per row of X");
  const double* scale = row_scale->data();
  for (Index i = 0; i < n_rows; ++i)
    if (!(scale[i] > 0.0) || !std::isfinite(scale[i]))
      throw std::invalid_argument("row_scale must hold finite factors > 0");
  return scale;
}

DenseRows dense_rows(const MatRef& X, const std::optional<RowScale>& row_scale,
                     const std::optional<double>& intercept) {
  const double* scale = checked_row_scale(row_scale, intercept, X.rows());
  return DenseRows(X, scale, intercept.has_value(), intercept.value_or(0.0));
}

// The same view of CSR rows (rows.hpp, CsrRows): no copy of the matrix for the projection or
// the intercept column.
CsrRows csr_rows(const CsrArrays& csr, const std::optional<RowScale>& row_scale,
                 const std::optional<double>& intercept) {
  CsrRows rows = csr.rows();
  rows.row_scale = checked_row_scale(row_scale, intercept, rows.rows());
  rows.has_intercept = intercept.has_value();
  rows.intercept = intercept.value_or(0.0);
  return rows;
}

#define PRIVLEARN_VIEW_ARGS \
  py::arg("row_scale") = py::none(), py::arg("intercept") = py::none(), \
      py::arg("check_finite") = true
#define PRIVLEARN_CSR_VIEW_ARGS py::arg("row_scale") = py::none(), py::arg("intercept") = py::none()

linear::ScdParams scd_params(const std::string& loss, const std::string& variant, bool poisson,
                             double lam, Index batch_size, Index epochs, Index steps, double clip,
                             double noise_std, const py::bytes& key, std::uint64_t batch_stream,
                             std::uint64_t noise_stream, Index record_every, int n_threads,
                             int newton_steps, double rate, double n_scale,
                             bool hidden_alpha, double alpha_jitter) {
  linear::ScdParams p;
  p.loss = linear::loss_from_string(loss);
  p.variant = linear::scd_variant_from_string(variant);
  p.poisson = poisson;
  p.lam = lam;
  p.batch_size = batch_size;
  p.epochs = epochs;
  p.steps = steps;
  p.clip = clip;
  p.noise_std = noise_std;
  p.key = key_from_py(key);
  p.batch_stream = batch_stream;
  p.noise_stream = noise_stream;
  p.record_every = record_every;
  p.n_threads = n_threads;
  p.newton_steps = newton_steps;
  p.rate = rate;
  p.n_scale = n_scale;
  p.hidden_alpha = hidden_alpha;
  p.alpha_jitter = alpha_jitter;
  return p;
}

py::tuple scd_to_py(linear::ScdResult&& r) {
  return py::make_tuple(std::move(r.alpha), std::move(r.v), std::move(r.path_steps),
                        std::move(r.primal_path), std::move(r.dual_path), r.steps);
}

#define PRIVLEARN_SCD_ARGS                                                                    \
  py::arg("loss"), py::arg("variant"), py::arg("poisson"), py::arg("lam"),                    \
      py::arg("batch_size"), py::arg("epochs"), py::arg("steps"), py::arg("clip"),            \
      py::arg("noise_std"), py::arg("key"), py::arg("batch_stream"), py::arg("noise_stream"), \
      py::arg("record_every"), py::arg("n_threads"), py::arg("newton_steps") = 1,             \
      py::arg("rate") = 0.0, py::arg("n_scale") = 0.0, py::arg("hidden_alpha") = false,   \
      py::arg("alpha_jitter") = 0.0

linear::SoftmaxParams softmax_params(const std::string& sampling, const std::string& schedule,
                                     double lam, Index batch_size, Index epochs, Index steps,
                                     double eta0, double clip, double sigma, double radius,
                                     const py::bytes& key, std::uint64_t batch_stream,
                                     std::uint64_t noise_stream, Index record_every,
                                     int n_threads, double rate) {
  linear::SoftmaxParams p;
  p.sampling = linear::sampling_from_string(sampling);
  p.schedule = linear::schedule_from_string(schedule);
  p.lam = lam;
  p.batch_size = batch_size;
  p.epochs = epochs;
  p.steps = steps;
  p.eta0 = eta0;
  p.clip = clip;
  p.sigma = sigma;
  p.radius = radius;
  p.key = key_from_py(key);
  p.batch_stream = batch_stream;
  p.noise_stream = noise_stream;
  p.record_every = record_every;
  p.n_threads = n_threads;
  p.rate = rate;
  return p;
}

py::tuple softmax_to_py(linear::SoftmaxResult&& r) {
  return py::make_tuple(std::move(r.W), std::move(r.path), std::move(r.path_steps), r.steps);
}

#define PRIVLEARN_SOFTMAX_ARGS                                                                  \
  py::arg("sampling"), py::arg("schedule"), py::arg("lam"), py::arg("batch_size"),             \
      py::arg("epochs"), py::arg("steps"), py::arg("eta0"), py::arg("clip"), py::arg("sigma"), \
      py::arg("radius"), py::arg("key"), py::arg("batch_stream"), py::arg("noise_stream"),     \
      py::arg("record_every"), py::arg("n_threads"), py::arg("rate") = 0.0

}  // namespace

void bind_linear(py::module_& m) {
  m.def(
      "row_kernels_add_units",
      [](const MatRef& X, Index m, const VecRef& a, const std::optional<VecRef>& s,
         const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& acc,
         const std::string& isa) {
        checks::require(m >= 0 && m <= X.cols(),
                        "row_kernels_add_units: m must be in [0, X.shape[1]]");
        checks::require(a.size() == X.rows() && (!s || s->size() == X.rows()) && acc.size() == m,
                        "row_kernels_add_units: a (and s) need one entry per row, acc m");
        for (Index r = 0; r < X.rows(); ++r)
          for (Index k = 0; k < m; ++k) {
            const double t = a[r] * (s ? X(r, k) * (*s)[r] : X(r, k));
            checks::require(std::fabs(t) < 0x1p31,
                            "row_kernels_add_units: every |a[r] x_rk| must be < 2^31");
          }
        using row_kernels::KernelIsa;
        checks::require(isa == "avx512" || isa == "avx2" || isa == "scalar",
                        "row_kernels_add_units: isa must be 'avx512', 'avx2' or 'scalar'");
        const KernelIsa kind = isa == "avx512" ? KernelIsa::avx512
                               : isa == "avx2" ? KernelIsa::avx2
                                               : KernelIsa::scalar;
        py::array_t<std::int64_t> out(acc.size());
        std::copy(acc.data(), acc.data() + acc.size(), out.mutable_data());
        const bool ran = row_kernels::add_small_units_rows_isa(
            kind, X.rows() > 0 ? X.data() : nullptr, X.outerStride(), X.rows(), m,
            s ? s->data() : nullptr, a.data(), out.mutable_data());
        if (!ran) return py::object(py::none());
        return py::object(out);
      },
      py::arg("X").noconvert(), py::arg("m"), py::arg("a"), py::arg("s"), py::arg("acc"),
      py::arg("isa"),
      "acc + sum_r trunc(a[r] * X[r, :m] (* s[r])) in int64 "
      "(row_kernels::add_small_units_rows, the "
      "fixed-point terms of a chunk of rows) with the kernel built for isa ('avx512', 'avx2', "
      "'scalar'); None when this CPU lacks it. Tests check that every kernel agrees.");
  m.def(
      "finite_row_squares",
      [](const MatRef& X) {
        py::array_t<double> sq(static_cast<py::ssize_t>(X.rows()));
        double* out = sq.mutable_data();
        {
          py::gil_scoped_release release;
          checks::finite_row_squares(X, out, "X");
        }
        return sq;
      },
      py::arg("X").noconvert(),
      "The fit's one pass of checks over a dense X (checks.hpp): ValueError if an entry is NaN "
      "or infinite, else the plain sum of squares of each row (four partial sums, the order of "
      "the core's dot_sq).");
  m.def(
      "csr_row_squares",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols) {
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows& rows = csr.rows();
        py::array_t<double> sq(static_cast<py::ssize_t>(rows.rows()));
        double* out = sq.mutable_data();
        {
          py::gil_scoped_release release;
          rows.validate_extents(csr.nnz());  // the values are read within their rows only
          rows.row_squares(out);
        }
        return sq;
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"),
      "The plain sum of squares of each row of a CSR matrix (rows.hpp, CsrRows::row_squares: "
      "stored order, the bits of np.bincount of the squared values): one pass over the values, "
      "after an O(rows) check of indptr (the indices are not read).");
  m.def(
      "scd_train_dense",
      [](const MatRef& X, const VecRef& y, const std::string& loss, const std::string& variant,
         bool poisson, double lam, Index batch_size, Index epochs, Index steps, double clip,
         double noise_std, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, int newton_steps,
         double rate, double n_scale,
         bool hidden_alpha, double alpha_jitter, const std::optional<RowScale>& row_scale,
         const std::optional<double>& intercept, bool check_finite) {
        const auto p = scd_params(loss, variant, poisson, lam, batch_size, epochs, steps, clip,
                                  noise_std, key, batch_stream, noise_stream, record_every,
                                  n_threads, newton_steps, rate, n_scale, hidden_alpha,
                                  alpha_jitter);
        const DenseRows rows = dense_rows(X, row_scale, intercept);
        if (p.variant == linear::ScdVariant::primal && !rows.plain())
          throw std::invalid_argument(
              "the primal DP-SCD variant reads X by columns: pass the rows themselves "
              "(no row_scale or intercept view)");
        linear::ScdResult r;
        {
          py::gil_scoped_release release;
          // dual / seq / scd re-check each row when they visit it (no extra pass over X)
          if (check_finite && p.variant == linear::ScdVariant::primal) checks::all_finite(X, "X");
          r = linear::scd_train(rows, y, p);
        }
        return scd_to_py(std::move(r));
      },
      py::arg("X").noconvert(), py::arg("y"), PRIVLEARN_SCD_ARGS, PRIVLEARN_VIEW_ARGS,
      "DP stochastic coordinate descent on dense rows (privlearn/linear/scd.hpp), or on the view "
      "(row_scale[i] * X[i], intercept) of them (no copy of X). check_finite=False skips the "
      "finiteness pass of the primal variant (only for an X the caller has checked). Returns "
      "(alpha, v, path_steps, primal_path, dual_path, steps).");
  m.def(
      "scd_train_csr",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols,
         const VecRef& y, const std::string& loss, const std::string& variant, bool poisson,
         double lam, Index batch_size, Index epochs, Index steps, double clip, double noise_std,
         const py::bytes& key, std::uint64_t batch_stream, std::uint64_t noise_stream,
         Index record_every, int n_threads, int newton_steps, double rate, double n_scale,
         bool hidden_alpha, double alpha_jitter, bool check_structure,
         const std::optional<RowScale>& row_scale, const std::optional<double>& intercept) {
        const auto p = scd_params(loss, variant, poisson, lam, batch_size, epochs, steps, clip,
                                  noise_std, key, batch_stream, noise_stream, record_every,
                                  n_threads, newton_steps, rate, n_scale, hidden_alpha,
                                  alpha_jitter);
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows rows = csr_rows(csr, row_scale, intercept);
        if (!rows.plain() && p.variant == linear::ScdVariant::primal)
          throw std::invalid_argument(
              "the primal variant reads X by columns: pass the matrix itself, not a view "
              "(row_scale, intercept)");
        const std::int64_t nnz = csr.nnz();
        linear::ScdResult r;
        {
          py::gil_scoped_release release;
          if (check_structure)
            rows.validate(nnz);
          else  // the O(1) part: the rows' extents lie inside data / indices
            checks::require(rows.indptr[0] == 0 && rows.indptr[rows.n_rows] == nnz,
                            "CSR indptr is inconsistent");
          r = linear::scd_train(rows, y, p);
        }
        return scd_to_py(std::move(r));
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"), py::arg("y"),
      PRIVLEARN_SCD_ARGS, py::arg("check_structure") = true, PRIVLEARN_CSR_VIEW_ARGS,
      "DP stochastic coordinate descent on CSR rows (int32 or int64 indices), or on the view "
      "(row_scale[i] * X[i], intercept) of them (no copy; not for the primal variant). "
      "check_structure=False skips the O(nnz) check of the indices (in range) and values "
      "(finite), only for a matrix the caller has checked (privlearn.linear.scd_train: "
      "as_design_matrix, once per call).");
  // ---- the step pieces of a distributed run (privlearn.distributed; sgd.hpp, scd.hpp)
  m.def(
      "sgd_check_distributed",
      [](Index n_total, Index d, const std::string& loss, const std::string& mechanism,
         const std::string& sampling, const std::string& schedule, double lam, Index batch_size,
         Index epochs, Index steps, double eta0, double clip, double epsilon, double sigma,
         double radius, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, double rate) {
        linear::sgd_check_distributed(
            n_total, d,
            sgd_params(loss, mechanism, sampling, schedule, lam, batch_size, epochs, steps, eta0,
                       clip, epsilon, sigma, radius, key, batch_stream, noise_stream,
                       record_every, n_threads, rate));
      },
      py::arg("n_total"), py::arg("d"), PRIVLEARN_SGD_ARGS,
      "Checks the parameters of a distributed SGD run over n_total rows and d columns.");
  m.def(
      "sgd_partial_sum_dense",
      [](const MatRef& X, const VecRef& y, const VecRef& w, Index t, Index offset, Index n_total,
         const std::string& loss, const std::string& mechanism, const std::string& sampling,
         const std::string& schedule, double lam, Index batch_size, Index epochs, Index steps,
         double eta0, double clip, double epsilon, double sigma, double radius,
         const py::bytes& key, std::uint64_t batch_stream, std::uint64_t noise_stream,
         Index record_every, int n_threads, double rate) {
        const SgdParams p = sgd_params(loss, mechanism, sampling, schedule, lam, batch_size,
                                       epochs, steps, eta0, clip, epsilon, sigma, radius, key,
                                       batch_stream, noise_stream, record_every, n_threads, rate);
        const VectorXd w_vec = w;
        return filled<std::int64_t>(static_cast<std::size_t>(X.cols()), [&](std::int64_t* out) {
          linear::sgd_partial_sum(DenseRows(X), y, w_vec, t, offset, n_total, p, out);
        });
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("w"), py::arg("t"), py::arg("offset"),
      py::arg("n_total"), PRIVLEARN_SGD_ARGS,
      "A worker's part of SGD step t (rows offset .. offset + len(X) of n_total): the clipped "
      "gradient sum over its Poisson-sampled rows in int64 fixed-point units (fixed_sum.hpp).");
  m.def(
      "sgd_apply_units",
      [](const VecRef& w, const py::array_t<std::int64_t, py::array::c_style>& units, Index t,
         const std::string& loss, const std::string& mechanism, const std::string& sampling,
         const std::string& schedule, double lam, Index batch_size, Index epochs, Index steps,
         double eta0, double clip, double epsilon, double sigma, double radius,
         const py::bytes& key, std::uint64_t batch_stream, std::uint64_t noise_stream,
         Index record_every, int n_threads, double rate) {
        const SgdParams p = sgd_params(loss, mechanism, sampling, schedule, lam, batch_size,
                                       epochs, steps, eta0, clip, epsilon, sigma, radius, key,
                                       batch_stream, noise_stream, record_every, n_threads, rate);
        if (units.ndim() != 1 || units.shape(0) != w.size())
          throw std::invalid_argument("units must have one entry per coefficient");
        VectorXd out = w;
        linear::sgd_apply_units(out, units.data(), t, p);
        return out;
      },
      py::arg("w"), py::arg("units"), py::arg("t"), PRIVLEARN_SGD_ARGS,
      "The iterate after SGD step t from the batch's fixed-point gradient sum (noise, step, "
      "projection), as sgd_train computes it.");
  m.def(
      "scd_check_distributed",
      [](Index n_total, Index m_cols, const std::string& loss, const std::string& variant,
         bool poisson, double lam, Index batch_size, Index epochs, Index steps, double clip,
         double noise_std, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, int newton_steps,
         double rate, double n_scale,
         bool hidden_alpha, double alpha_jitter) {
        linear::scd_check_distributed(
            n_total, m_cols,
            scd_params(loss, variant, poisson, lam, batch_size, epochs, steps, clip, noise_std,
                       key, batch_stream, noise_stream, record_every, n_threads, newton_steps,
                       rate, n_scale, hidden_alpha, alpha_jitter));
      },
      py::arg("n_total"), py::arg("m"), PRIVLEARN_SCD_ARGS,
      "Checks the parameters of a distributed DP-SCD run over n_total rows and m columns.");
  m.def(
      "scd_partial_step_dense",
      [](const MatRef& X, const VecRef& y, py::array_t<double, py::array::c_style>& alpha,
         py::array_t<std::int64_t, py::array::c_style>& last, const VecRef& v, Index t,
         Index offset, Index n_total, const std::string& loss, const std::string& variant,
         bool poisson, double lam, Index batch_size, Index epochs, Index steps, double clip,
         double noise_std, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, int newton_steps,
         double rate, double n_scale,
         bool hidden_alpha, double alpha_jitter) {
        const auto p = scd_params(loss, variant, poisson, lam, batch_size, epochs, steps, clip,
                                  noise_std, key, batch_stream, noise_stream, record_every,
                                  n_threads, newton_steps, rate, n_scale, hidden_alpha,
                                  alpha_jitter);
        if (alpha.ndim() != 1 || alpha.shape(0) != X.rows() || last.ndim() != 1 ||
            last.shape(0) != X.rows() || !alpha.writeable() || !last.writeable())
          throw std::invalid_argument("alpha and last must be writeable, one entry per row");
        const VectorXd v_vec = v;
        py::array_t<std::int64_t> units(static_cast<py::ssize_t>(X.cols()));
        double* a = alpha.mutable_data();
        std::int64_t* l = last.mutable_data();
        std::int64_t* u = units.mutable_data();
        Index bad;
        {
          py::gil_scoped_release release;
          bad = linear::scd_partial_step(DenseRows(X), y, a, l, v_vec, t, offset, n_total, p, u);
        }
        return py::make_tuple(units, bad);
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("alpha").noconvert(),
      py::arg("last").noconvert(), py::arg("v"), py::arg("t"), py::arg("offset"),
      py::arg("n_total"), PRIVLEARN_SCD_ARGS,
      "A worker's part of dual DP-SCD step t (scd.hpp): updates its alpha and last in place and "
      "returns (units, bad_row): the update sum in int64 fixed-point units, and the first "
      "non-finite row (global index) or -1.");
  m.def(
      "scd_apply_units",
      [](const VecRef& v, const py::array_t<std::int64_t, py::array::c_style>& units, Index t,
         const std::string& loss, const std::string& variant, bool poisson, double lam,
         Index batch_size, Index epochs, Index steps, double clip, double noise_std,
         const py::bytes& key, std::uint64_t batch_stream, std::uint64_t noise_stream,
         Index record_every, int n_threads, int newton_steps, double rate, double n_scale,
         bool hidden_alpha, double alpha_jitter) {
        const auto p = scd_params(loss, variant, poisson, lam, batch_size, epochs, steps, clip,
                                  noise_std, key, batch_stream, noise_stream, record_every,
                                  n_threads, newton_steps, rate, n_scale, hidden_alpha,
                                  alpha_jitter);
        if (units.ndim() != 1 || units.shape(0) != v.size())
          throw std::invalid_argument("units must have one entry per column");
        VectorXd out = v;
        linear::scd_apply_units(out, units.data(), t, p);
        return out;
      },
      py::arg("v"), py::arg("units"), py::arg("t"), PRIVLEARN_SCD_ARGS,
      "v after dual DP-SCD step t from the batch's fixed-point update sum, plus v's noise.");
  m.def(
      "scd_finish_alpha",
      [](py::array_t<double, py::array::c_style>& alpha,
         const py::array_t<std::int64_t, py::array::c_style>& last, Index total_steps,
         Index offset, Index n_total, const std::string& loss, const std::string& variant,
         bool poisson, double lam, Index batch_size, Index epochs, Index steps, double clip,
         double noise_std, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, int newton_steps,
         double rate, double n_scale,
         bool hidden_alpha, double alpha_jitter) {
        const auto p = scd_params(loss, variant, poisson, lam, batch_size, epochs, steps, clip,
                                  noise_std, key, batch_stream, noise_stream, record_every,
                                  n_threads, newton_steps, rate, n_scale, hidden_alpha,
                                  alpha_jitter);
        if (alpha.ndim() != 1 || last.ndim() != 1 || alpha.shape(0) != last.shape(0) ||
            !alpha.writeable())
          throw std::invalid_argument("alpha must be writeable and as long as last");
        linear::scd_finish_alpha(alpha.mutable_data(), last.data(), alpha.shape(0), total_steps,
                                 offset, n_total, p);
      },
      py::arg("alpha").noconvert(), py::arg("last"), py::arg("total_steps"), py::arg("offset"),
      py::arg("n_total"), PRIVLEARN_SCD_ARGS,
      "Adds the outstanding catch-up noise to a worker's alpha at the end of a run.");
  m.def(
      "softmax_check_distributed",
      [](Index n_total, Index d, Index n_classes, const std::string& sampling,
         const std::string& schedule, double lam, Index batch_size, Index epochs, Index steps,
         double eta0, double clip, double sigma, double radius, const py::bytes& key,
         std::uint64_t batch_stream, std::uint64_t noise_stream, Index record_every,
         int n_threads, double rate) {
        linear::softmax_check_distributed(
            n_total, d, n_classes,
            softmax_params(sampling, schedule, lam, batch_size, epochs, steps, eta0, clip, sigma,
                           radius, key, batch_stream, noise_stream, record_every, n_threads,
                           rate));
      },
      py::arg("n_total"), py::arg("d"), py::arg("n_classes"), PRIVLEARN_SOFTMAX_ARGS,
      "Checks the parameters of a distributed softmax SGD run.");
  m.def(
      "softmax_partial_sum_dense",
      [](const MatRef& X, const linear::LabelRef& y, const VecRef& w, Index n_classes, Index t,
         Index offset, Index n_total, const std::string& sampling, const std::string& schedule,
         double lam, Index batch_size, Index epochs, Index steps, double eta0, double clip,
         double sigma, double radius, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, double rate) {
        const auto p = softmax_params(sampling, schedule, lam, batch_size, epochs, steps, eta0,
                                      clip, sigma, radius, key, batch_stream, noise_stream,
                                      record_every, n_threads, rate);
        const VectorXd w_vec = w;
        return filled<std::int64_t>(
            static_cast<std::size_t>(X.cols() * n_classes), [&](std::int64_t* out) {
              linear::softmax_partial_sum(DenseRows(X), y, w_vec, n_classes, t, offset, n_total,
                                          p, out);
            });
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("w"), py::arg("n_classes"), py::arg("t"),
      py::arg("offset"), py::arg("n_total"), PRIVLEARN_SOFTMAX_ARGS,
      "A worker's part of softmax SGD step t: its clipped gradient sum in int64 fixed-point "
      "units, class after class (w: the (d, K) iterate flattened row-major).");
  m.def(
      "softmax_apply_units",
      [](const VecRef& w, const py::array_t<std::int64_t, py::array::c_style>& units, Index d,
         Index n_classes, Index t, const std::string& sampling, const std::string& schedule,
         double lam, Index batch_size, Index epochs, Index steps, double eta0, double clip,
         double sigma, double radius, const py::bytes& key, std::uint64_t batch_stream,
         std::uint64_t noise_stream, Index record_every, int n_threads, double rate) {
        const auto p = softmax_params(sampling, schedule, lam, batch_size, epochs, steps, eta0,
                                      clip, sigma, radius, key, batch_stream, noise_stream,
                                      record_every, n_threads, rate);
        if (w.size() != d * n_classes || units.ndim() != 1 || units.shape(0) != w.size())
          throw std::invalid_argument("w and units must have d * n_classes entries");
        VectorXd out = w;
        linear::softmax_apply_units(out, units.data(), d, n_classes, t, p);
        return out;
      },
      py::arg("w"), py::arg("units"), py::arg("d"), py::arg("n_classes"), py::arg("t"),
      PRIVLEARN_SOFTMAX_ARGS,
      "The flattened (d, K) iterate after softmax SGD step t from the batch's fixed-point "
      "gradient sum (noise, step, projection), as softmax_sgd_train computes it.");
  m.def(
      "sgd_train_dense",
      [](const MatRef& X, const VecRef& y, const VecRef& w0, const std::string& loss,
         const std::string& mechanism, const std::string& sampling, const std::string& schedule,
         double lam, Index batch_size, Index epochs, Index steps, double eta0, double clip,
         double epsilon, double sigma, double radius, const py::bytes& key,
         std::uint64_t batch_stream, std::uint64_t noise_stream, Index record_every,
         int n_threads, double rate, const std::optional<RowScale>& row_scale,
         const std::optional<double>& intercept, bool check_finite) {
        const SgdParams p = sgd_params(loss, mechanism, sampling, schedule, lam, batch_size,
                                       epochs, steps, eta0, clip, epsilon, sigma, radius, key,
                                       batch_stream, noise_stream, record_every, n_threads, rate);
        const DenseRows rows = dense_rows(X, row_scale, intercept);
        SgdResult r;
        {
          py::gil_scoped_release release;
          if (check_finite) checks::all_finite(X, "X");
          r = linear::sgd_train(rows, y, w0, p);
        }
        return to_py(std::move(r));
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("w0"), PRIVLEARN_SGD_ARGS,
      PRIVLEARN_VIEW_ARGS,
      "Private mini-batch SGD on dense rows (privlearn/linear/sgd.hpp), or on the view "
      "(row_scale[i] * X[i], intercept) of them (no copy of X). check_finite=False skips the "
      "finiteness pass over X (only for an X the caller has checked). Returns (w, path, "
      "path_steps, steps).");
  m.def(
      "sgd_train_csr",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols,
         const VecRef& y, const VecRef& w0, const std::string& loss,
         const std::string& mechanism, const std::string& sampling, const std::string& schedule,
         double lam, Index batch_size, Index epochs, Index steps, double eta0, double clip,
         double epsilon, double sigma, double radius, const py::bytes& key,
         std::uint64_t batch_stream, std::uint64_t noise_stream, Index record_every,
         int n_threads, double rate, bool check_structure,
         const std::optional<RowScale>& row_scale, const std::optional<double>& intercept) {
        const SgdParams p = sgd_params(loss, mechanism, sampling, schedule, lam, batch_size,
                                       epochs, steps, eta0, clip, epsilon, sigma, radius, key,
                                       batch_stream, noise_stream, record_every, n_threads, rate);
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows rows = csr_rows(csr, row_scale, intercept);
        const std::int64_t nnz = csr.nnz();
        SgdResult r;
        {
          py::gil_scoped_release release;
          if (check_structure)
            rows.validate(nnz);
          else  // the O(1) part: the rows' extents lie inside data / indices
            checks::require(rows.indptr[0] == 0 && rows.indptr[rows.n_rows] == nnz,
                            "CSR indptr is inconsistent");
          r = linear::sgd_train(rows, y, w0, p);
        }
        return to_py(std::move(r));
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"), py::arg("y"),
      py::arg("w0"), PRIVLEARN_SGD_ARGS, py::arg("check_structure") = true,
      PRIVLEARN_CSR_VIEW_ARGS,
      "Private mini-batch SGD on CSR rows (scipy.sparse.csr_matrix arrays, int32 or int64 "
      "indices), or on the view (row_scale[i] * X[i], intercept) of them (no copy). "
      "check_structure=False skips the O(nnz) check of the indices (in range) and values "
      "(finite), only for a matrix the caller has checked (as_design_matrix).");
  m.def(
      "softmax_sgd_train_dense",
      [](const MatRef& X, const linear::LabelRef& y, const MatRef& W0,
         const std::string& sampling, const std::string& schedule, double lam, Index batch_size,
         Index epochs, Index steps, double eta0, double clip, double sigma, double radius,
         const py::bytes& key, std::uint64_t batch_stream, std::uint64_t noise_stream,
         Index record_every, int n_threads, double rate, const std::optional<RowScale>& row_scale,
         const std::optional<double>& intercept, bool check_finite) {
        const auto p = softmax_params(sampling, schedule, lam, batch_size, epochs, steps, eta0,
                                      clip, sigma, radius, key, batch_stream, noise_stream,
                                      record_every, n_threads, rate);
        const DenseRows rows = dense_rows(X, row_scale, intercept);
        linear::SoftmaxResult r;
        {
          py::gil_scoped_release release;
          if (check_finite) checks::all_finite(X, "X");
          r = linear::softmax_sgd_train(rows, y, W0, p);
        }
        return softmax_to_py(std::move(r));
      },
      py::arg("X").noconvert(), py::arg("y"), py::arg("W0"), PRIVLEARN_SOFTMAX_ARGS,
      PRIVLEARN_VIEW_ARGS,
      "Softmax (multinomial logistic) regression by Gaussian DP-SGD on dense rows "
      "(privlearn/linear/softmax.hpp), or on the view (row_scale[i] * X[i], intercept) of them "
      "(no copy of X). y: int64 labels in [0, K); W0: (d, K). check_finite=False skips the "
      "finiteness pass over X (only for an X the caller has checked). Returns (W, path, "
      "path_steps, steps).");
  m.def(
      "softmax_sgd_train_csr",
      [](CsrData data, const py::array& indices, const py::array& indptr, Index n_cols,
         const linear::LabelRef& y, const MatRef& W0, const std::string& sampling,
         const std::string& schedule, double lam, Index batch_size, Index epochs, Index steps,
         double eta0, double clip, double sigma, double radius, const py::bytes& key,
         std::uint64_t batch_stream, std::uint64_t noise_stream, Index record_every,
         int n_threads, double rate, bool check_structure,
         const std::optional<RowScale>& row_scale, const std::optional<double>& intercept) {
        const auto p = softmax_params(sampling, schedule, lam, batch_size, epochs, steps, eta0,
                                      clip, sigma, radius, key, batch_stream, noise_stream,
                                      record_every, n_threads, rate);
        const CsrArrays csr(std::move(data), indices, indptr, n_cols);
        const CsrRows rows = csr_rows(csr, row_scale, intercept);
        const std::int64_t nnz = csr.nnz();
        linear::SoftmaxResult r;
        {
          py::gil_scoped_release release;
          if (check_structure)
            rows.validate(nnz);
          else  // the O(1) part: the rows' extents lie inside data / indices
            checks::require(rows.indptr[0] == 0 && rows.indptr[rows.n_rows] == nnz,
                            "CSR indptr is inconsistent");
          r = linear::softmax_sgd_train(rows, y, W0, p);
        }
        return softmax_to_py(std::move(r));
      },
      py::arg("data"), py::arg("indices"), py::arg("indptr"), py::arg("n_cols"), py::arg("y"),
      py::arg("W0"), PRIVLEARN_SOFTMAX_ARGS, py::arg("check_structure") = true,
      PRIVLEARN_CSR_VIEW_ARGS,
      "Softmax regression by Gaussian DP-SGD on CSR rows (scipy.sparse.csr_matrix arrays, int32 "
      "or int64 indices), or on the view (row_scale[i] * X[i], intercept) of them (no copy). "
      "check_structure=False skips the O(nnz) check of the indices and values, only for a "
      "matrix the caller has checked (as_design_matrix).");
}

}  // namespace privlearn::bindings
