#pragma once
// Row access for the linear-model kernels: one interface, a dense and a CSR implementation, so
// each kernel is written once (a template over the row type) and instantiated for both.

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/fixed_sum.hpp"
#include "privlearn/row_kernels.hpp"
#include "privlearn/types.hpp"

namespace privlearn {

// An L2 norm without overflow or underflow of the squares: ||x|| = scale * root.
// When the plain sum of squares sq lies in [kPlainSquaresMin, DBL_MAX] it is used as is
// (scale = 1, root = sqrt(sq): the usual bits); otherwise m = max_k |x_k| and
// root = sqrt(sum_k (x_k / m)^2), scale = m, which is exact to a few ulps for every finite x
// (entries up to DBL_MAX, subnormals included). scale = root = 0 for x = 0. value() itself
// overflows to inf only when ||x|| > DBL_MAX; callers that divide by the norm use
// (a / scale) / root instead, which stays finite. The numpy reference
// (privlearn._design_matrix.scaled_row_norms) applies the same rule.
struct ScaledNorm {
  double scale = 0.0;
  double root = 0.0;
  double value() const { return scale * root; }
};
inline constexpr double kPlainSquaresMin = 0x1p-900;

template <class MaxAbs, class ScaledSquares>
ScaledNorm make_scaled_norm(double sq, MaxAbs&& max_abs, ScaledSquares&& scaled_squares) {
  if (sq >= kPlainSquaresMin && sq <= std::numeric_limits<double>::max())
    return {1.0, std::sqrt(sq)};
  const double m = max_abs();
  if (!(m > 0.0) || !std::isfinite(m)) return {m > 0.0 ? m : 0.0, m > 0.0 ? 1.0 : 0.0};
  return {m, std::sqrt(scaled_squares(m))};
}

// The same for a dense vector.
inline ScaledNorm scaled_norm(const VectorXd& w) {
  return make_scaled_norm(
      w.squaredNorm(), [&] { return w.cwiseAbs().maxCoeff(); },
      [&](double m) { return (w / m).squaredNorm(); });
}

// Request the cache line holding p (a read prefetch). On x86 an explicit instruction: GCC 12
// dropped the __builtin_prefetch loop of CsrRows::prefetch_all once inlined into the SDCA loop.
inline void prefetch_line(const void* p) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Request the cache line holding p into L2 only (prefetcht1), for rows needed a whole step
// ahead (more than L1 holds; an L1 prefetch a few rows ahead then finds them in L2). An
// instruction on x86 for the reason given at prefetch_line.
inline void prefetch_l2(const void* p) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  asm volatile("prefetcht1 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 2);
#else
  (void)p;
#endif
}

// Dense rows: X is (n_samples, n_features), row-major (zero-copy from NumPy).
//
// Optionally a view of the rows (s_i x_i, c) without copying X (issue 32, item 2): each row
// scaled by row_scale[i] (a projection onto a ball, computed by the caller) and/or the constant
// intercept column c appended. Every method gives the bits it would give on the materialised
// matrix [s_i x_i, c] (each entry the rounded product s_i * x_ik, as numpy's copy computes it;
// the reductions in the same order: dot_fixed / dot_sq keep their four partial sums over the
// augmented columns), except dot() (Eigen's order depends on the row's alignment; it serves
// diagnostics only) and, in the rare non-plain norm branch (sum of squares outside
// [2^-900, DBL_MAX]), scaled_squares. Kernels reach the entries through the methods only: X is
// the caller's matrix (its cols() may be one less than cols()), so a kernel that reads X
// directly must check plain() (the primal DP-SCD columns do: the binding refuses a view there).
struct DenseRows {
  MatRef X;
  const double* row_scale = nullptr;  // s_i (nullptr: 1)
  double intercept = 0.0;             // c, when has_intercept
  bool has_intercept = false;
  explicit DenseRows(const MatRef& X_) : X(X_) {}
  DenseRows(const MatRef& X_, const double* row_scale_, bool has_intercept_, double intercept_)
      : X(X_), row_scale(row_scale_), intercept(intercept_), has_intercept(has_intercept_) {}
  // No view: the rows are X's rows.
  bool plain() const { return row_scale == nullptr && !has_intercept; }
  Index rows() const { return X.rows(); }
  Index cols() const { return X.cols() + (has_intercept ? 1 : 0); }
  // Entry k of row i of the view (k < cols()).
  double at(Index i, Index k) const {
    if (k < X.cols()) return row_scale ? X(i, k) * row_scale[i] : X(i, k);
    return intercept;
  }
  double dot(Index i, const VectorXd& w) const {
    if (plain()) return X.row(i).dot(w);
    return dot_fixed(i, w);
  }
  // x_i^T w in a fixed order (four partial sums over k mod 4, then (d0 + d1) + (d2 + d3), the
  // order of dot_sq): the numpy twin replicates it, so the two agree exactly even where a
  // partial sum overflows (Eigen's dot order depends on its vectorisation; issue 30, item 8).
  double dot_fixed(Index i, const VectorXd& w) const {
    if (!plain()) {
      double sq = 0.0;
      return lanes<false>(i, w.data(), sq);
    }
    const double* x = X.row(i).data();
    const double* u = w.data();
    const Index m = X.cols();
    double d[4] = {0.0, 0.0, 0.0, 0.0};
    Index k = m - m % 4;
    row_kernels::lanes(x, u, k, false, 1.0, d, nullptr);  // row_kernels.hpp: the same lanes
    for (; k < m; ++k) d[0] += x[k] * u[k];
    return (d[0] + d[1]) + (d[2] + d[3]);
  }
  template <class Vec>
  void axpy(Index i, double a, Vec& acc) const {
    if (plain()) {
      acc.noalias() += a * X.row(i).transpose();
      return;
    }
    const double* x = X.row(i).data();
    const Index m = X.cols();
    if (row_scale) {
      const double s = row_scale[i];
      for (Index k = 0; k < m; ++k) acc[k] += a * (x[k] * s);
    } else {
      for (Index k = 0; k < m; ++k) acc[k] += a * x[k];
    }
    if (has_intercept) acc[m] += a * intercept;
  }
  // acc[k] += trunc(a * x_ik) in fixed-point units (fixed_sum.hpp; modular int64 addition).
  void axpy_units(Index i, double a, std::int64_t* acc) const {
    const double* x = X.row(i).data();
    const Index m = X.cols();
    if (row_scale) {
      const double s = row_scale[i];
      for (Index k = 0; k < m; ++k) fixed::add_units(acc[k], a * (x[k] * s));
    } else {
      for (Index k = 0; k < m; ++k) fixed::add_units(acc[k], a * x[k]);
    }
    if (has_intercept) fixed::add_units(acc[m], a * intercept);
  }
  // The same when every |a x_ik| < 2^61 (the caller has checked |a| ||x_i|| < 2^61): the plain
  // truncation, which is then what add_units computes, without its saturation branch.
  void axpy_units_bounded(Index i, double a, std::int64_t* acc) const {
    const double* x = X.row(i).data();
    const Index m = X.cols();
    auto add = [](std::int64_t& t, double v) {
      t = static_cast<std::int64_t>(static_cast<std::uint64_t>(t) +
                                    static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
    };
    if (row_scale) {
      const double s = row_scale[i];
      for (Index k = 0; k < m; ++k) add(acc[k], a * (x[k] * s));
    } else {
      for (Index k = 0; k < m; ++k) add(acc[k], a * x[k]);
    }
    if (has_intercept) add(acc[m], a * intercept);
  }
  // max_k |x_ik| and sum_k (x_ik / m)^2 (the non-plain branch of ScaledNorm).
  double max_abs(Index i) const {
    if (plain()) return X.row(i).cwiseAbs().maxCoeff();
    double mx = has_intercept ? std::fabs(intercept) : 0.0;
    for (Index k = 0; k < X.cols(); ++k) mx = std::fmax(mx, std::fabs(at(i, k)));
    return mx;
  }
  double scaled_squares(Index i, double m) const {
    if (plain()) return (X.row(i) / m).squaredNorm();
    double t = 0.0;
    for (Index k = 0; k < cols(); ++k) t += (at(i, k) / m) * (at(i, k) / m);
    return t;
  }
  // The same when every |a * x_ik| < 2^31 (the caller's check, e.g. |a| ||x_i|| < 2^30):
  // trunc through int32, branch-free and vectorisable, the same integers bit for bit.
  void axpy_units_small(Index i, double a, std::int64_t* acc) const {
    const double* x = X.row(i).data();
    const Index m = X.cols();  // hoisted: acc (int64) could alias the size field
    row_kernels::add_small_units(x, m, row_scale != nullptr, row_scale ? row_scale[i] : 1.0, a,
                                 acc);  // a view: a * (x_ik s_i), as on the materialised rows
    if (has_intercept) fixed::add_small_units(acc[m], a * intercept);
  }
  // axpy_units_small(first + r, a[r], acc) for r < count (rows consecutive in X, as in a
  // gathered() copy): one pass of row_kernels::add_small_units_rows, the same int64 sums.
  void axpy_units_small_rows(Index first, Index count, const double* a, std::int64_t* acc) const {
    if (count <= 0) return;
    const Index m = X.cols();
    row_kernels::add_small_units_rows(X.row(first).data(), X.outerStride(), count, m,
                                      row_scale ? row_scale + first : nullptr, a, acc);
    if (has_intercept)
      for (Index r = 0; r < count; ++r) fixed::add_small_units(acc[m], a[r] * intercept);
  }
  ScaledNorm scaled_norm(Index i) const {
    if (!plain()) {
      double sq = 0.0;
      lanes<true>(i, nullptr, sq);
      return make_scaled_norm(
          sq, [&] { return max_abs(i); }, [&](double m) { return scaled_squares(i, m); });
    }
    const auto r = X.row(i);
    return make_scaled_norm(
        r.squaredNorm(), [&] { return r.cwiseAbs().maxCoeff(); },
        [&](double m) { return (r / m).squaredNorm(); });
  }
  double norm(Index i) const { return scaled_norm(i).value(); }
  // dot_sq of rows i0 and i1 together (row_kernels::lanes_pair, the two rows' loops
  // interleaved): the bits of dot_sq(i0, w, sq0) and dot_sq(i1, w, sq1); returns row i0's dot.
  double dot_sq_pair(Index i0, Index i1, const VectorXd& w, double& sq0, double& dot1,
                     double& sq1) const {
    double d0[4] = {0.0, 0.0, 0.0, 0.0}, q0[4] = {0.0, 0.0, 0.0, 0.0};
    double d1[4] = {0.0, 0.0, 0.0, 0.0}, q1[4] = {0.0, 0.0, 0.0, 0.0};
    const Index k = X.cols() - X.cols() % 4;
    row_kernels::lanes_pair(X.row(i0).data(), X.row(i1).data(), w.data(), k,
                            row_scale != nullptr, scale(i0), scale(i1), d0, q0, d1, q1);
    dot1 = lanes_rest<true>(i1, w.data(), k, d1, q1, sq1);
    return lanes_rest<true>(i0, w.data(), k, d0, q0, sq0);
  }
  // x_i^T w and ||x_i||^2 in one visit of the row (four partial sums each, a fixed order).
  double dot_sq(Index i, const VectorXd& w, double& sq) const {
    if (!plain()) return lanes<true>(i, w.data(), sq);
    const double* x = X.row(i).data();
    const double* u = w.data();
    const Index m = X.cols();
    double d[4] = {0.0, 0.0, 0.0, 0.0}, q[4] = {0.0, 0.0, 0.0, 0.0};
    Index k = m - m % 4;
    row_kernels::lanes(x, u, k, false, 1.0, d, q);
    for (; k < m; ++k) {
      d[0] += x[k] * u[k];
      q[0] += x[k] * x[k];
    }
    sq = (q[0] + q[1]) + (q[2] + q[3]);
    return (d[0] + d[1]) + (d[2] + d[3]);
  }
  // Rows wider than this are read in place rather than gathered (a long row streams well on its
  // own; a chunk's buffer stays <= 512 kB).
  static constexpr Index kGatherMaxCols = 4096;
  // The copies are gather_stride() doubles apart (X.cols() rounded up to whole 64-byte lines), so
  // that with buf on a 64-byte boundary every copy starts a line and no vector load of the
  // kernels that read them spans two lines (aligned_buffer).
  Index gather_stride() const { return (X.cols() + 7) / 8 * 8; }
  // The rows idx[r] - offset, r < k, copied into buf (k * gather_stride() doubles; their scale
  // factors into scales, k doubles, when the view is scaled): a DenseRows over the copies whose
  // rows have the same entries, bit for bit. The copies of different rows are independent, so
  // many cache lines are in flight at once: a random gather then runs near the speed of a
  // streaming pass, where a kernel that works row by row on X stalls on each row (issue 32).
  DenseRows gathered(const std::int64_t* idx, Index k, Index offset, double* buf,
                     double* scales) const {
    const Index dx = X.cols(), stride = gather_stride();
    for (Index r = 0; r < k; ++r) {
      const Index i = idx[r] - offset;
      std::memcpy(buf + r * stride, X.row(i).data(),
                  sizeof(double) * static_cast<std::size_t>(dx));
      if (row_scale) scales[r] = row_scale[i];
    }
    const Eigen::Map<const RowMatrixXd, 0, Eigen::OuterStride<>> copies(
        buf, k, dx, Eigen::OuterStride<>(stride));
    return DenseRows(MatRef(copies), row_scale ? scales : nullptr, has_intercept, intercept);
  }
  // n doubles of `storage` starting on a 64-byte boundary (storage grows to fit).
  static double* aligned_buffer(std::vector<double>& storage, Index n) {
    storage.resize(static_cast<std::size_t>(n) + 8);
    const auto at = reinterpret_cast<std::uintptr_t>(storage.data());
    return storage.data() + ((64 - at % 64) % 64) / sizeof(double);
  }
  // Hint the cache about a row that will be read soon (random-access kernels).
  void prefetch(Index i) const {
#if defined(__GNUC__) || defined(__clang__)
    const char* p = reinterpret_cast<const char*>(X.row(i).data());
    const Index bytes = X.cols() * static_cast<Index>(sizeof(double));
    for (Index b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
    if (row_scale) __builtin_prefetch(row_scale + i);
#else
    (void)i;
#endif
  }
  // Two-stage prefetch for kernels that know their rows far ahead (CsrRows: the row extent
  // first, then every line of the row); dense rows need no first stage.
  void prefetch_extent(Index) const {}
  void prefetch_all(Index i) const { prefetch(i); }
  // Row i into L2, a step ahead (the next batch of DP-SCD and DP-SGD): its first two lines
  // (and its scale factor); the L2 streamer, seeing two consecutive misses, fetches the rest
  // of the row without holding one of the core's few line-fill buffers per line (issue 32:
  // with every line requested, the loop of prefetches was the DP-SCD epoch's hottest stall; two
  // lines: a 1M x 100 epoch 0.92x, paired median of 11 rounds; one, two or four lines measured
  // alike, none 0.98x). No extent to request first.
  void request_l2(Index i) const {
    const char* p = reinterpret_cast<const char*>(X.row(i).data());
    const Index bytes = X.cols() * static_cast<Index>(sizeof(double));
    for (Index b = 0; b < std::min<Index>(bytes, 2 * 64); b += 64) prefetch_l2(p + b);
    if (row_scale) prefetch_l2(row_scale + i);
  }
  void request_extent_l2(Index) const {}

 private:
  // dot_fixed / dot_sq on the view: the loops of the plain methods over the augmented columns
  // (blocks of four while k + 4 <= cols(), the rest into partial sum 0), so each partial sum
  // adds the same products in the same order as on the materialised matrix. With u == nullptr
  // only the squares are formed.
  template <bool kSquares>
  double lanes(Index i, const double* u, double& sq) const {
    double d[4] = {0.0, 0.0, 0.0, 0.0}, q[4] = {0.0, 0.0, 0.0, 0.0};
    const Index k = X.cols() - X.cols() % 4;
    row_kernels::lanes(X.row(i).data(), u, k, row_scale != nullptr, scale(i), d,
                       kSquares ? q : nullptr);
    return lanes_rest<kSquares>(i, u, k, d, q, sq);
  }
  double scale(Index i) const { return row_scale ? row_scale[i] : 1.0; }
  // The lanes after the first k = X.cols() - X.cols() % 4 columns (their partial sums in d, q):
  // one more block of four when the intercept completes one, the rest into partial sum 0.
  template <bool kSquares>
  double lanes_rest(Index i, const double* u, Index k, double* d, double* q, double& sq) const {
    const double* x = X.row(i).data();
    const Index dx = X.cols(), m = cols();
    const double s = scale(i);
    const bool scaled = row_scale != nullptr;
    auto add = [&](int l, double v, Index j) {
      if (u) d[l] += v * u[j];
      if (kSquares) q[l] += v * v;
    };
    auto entry = [&](Index j) { return j < dx ? (scaled ? x[j] * s : x[j]) : intercept; };
    if (k + 4 <= m) {  // one more block of four: the last data columns and the intercept
      for (int l = 0; l < 4; ++l) add(l, entry(k + l), k + l);
      k += 4;
    }
    for (; k < m; ++k) add(0, entry(k), k);
    sq = kSquares ? (q[0] + q[1]) + (q[2] + q[3]) : 0.0;
    return (d[0] + d[1]) + (d[2] + d[3]);
  }
};

// CSR rows (scipy.sparse.csr_matrix arrays); indices within a row need not be sorted. The
// column indices are int32 (scipy's own dtype below 2^31 stored entries, taken without a copy;
// at most 2^31 - 1 columns), the row extents int64 (any number of stored entries). The
// bindings convert the other dtype once (python/bindings/bindings.hpp, CsrArrays).
//
// Optionally the view (s_i x_i, c) of the rows, as DenseRows's, without copying the matrix:
// row i's stored values scaled by row_scale[i] and the constant intercept column c appended
// as column n_cols (the last entry of every row, as in the materialised matrix, whose
// canonical rows list it last). Every method gives the bits it gives on that matrix: each value
// is the rounded product x_ik * s_i (times 1 exactly without a scale), the intercept's term
// comes after the stored ones. Kernels that read data / indices directly (the primal DP-SCD
// columns, the quadratic-gradient Gram) need plain(): their bindings take no view.
struct CsrRows {
  const double* data;
  const std::int32_t* indices;
  const std::int64_t* indptr;
  Index n_rows;
  Index n_cols;  // the stored matrix's columns (cols(): one more with the intercept)
  const double* row_scale = nullptr;  // s_i (nullptr: 1)
  double intercept = 0.0;             // c, when has_intercept
  bool has_intercept = false;
  bool plain() const { return row_scale == nullptr && !has_intercept; }
  Index rows() const { return n_rows; }
  Index cols() const { return n_cols + (has_intercept ? 1 : 0); }
  // The factor of row i's stored values (1: the values themselves, bit for bit).
  double scale(Index i) const { return row_scale ? row_scale[i] : 1.0; }
  double dot(Index i, const VectorXd& w) const {
    const double f = scale(i);
    double s = 0.0;
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k) s += (data[k] * f) * w[indices[k]];
    if (has_intercept) s += intercept * w[n_cols];
    return s;
  }
  // Sequential in stored order already (as scipy's CSR product): fixed.
  double dot_fixed(Index i, const VectorXd& w) const { return dot(i, w); }
  template <class Vec>
  void axpy(Index i, double a, Vec& acc) const {
    const double f = scale(i);
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
      acc[indices[k]] += a * (data[k] * f);
    if (has_intercept) acc[n_cols] += a * intercept;
  }
  void axpy_units(Index i, double a, std::int64_t* acc) const {
    const double f = scale(i);
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
      fixed::add_units(acc[indices[k]], a * (data[k] * f));
    if (has_intercept) fixed::add_units(acc[n_cols], a * intercept);
  }
  void axpy_units_small(Index i, double a, std::int64_t* acc) const {
    const double f = scale(i);
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
      fixed::add_small_units(acc[indices[k]], a * (data[k] * f));
    if (has_intercept) fixed::add_small_units(acc[n_cols], a * intercept);
  }
  // Stored entries of row i (the work of a visit).
  Index row_nnz(Index i) const {
    return static_cast<Index>(indptr[i + 1] - indptr[i]) + (has_intercept ? 1 : 0);
  }
  void prefetch(Index i) const {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(data + indptr[i]);
    __builtin_prefetch(indices + indptr[i]);
#else
    (void)i;
#endif
  }
  // Two-stage prefetch (random-access kernels that know their rows far ahead): first the
  // row's extent indptr[i], indptr[i + 1] (a later prefetch_all(i) then does not stall on it),
  // then every cache line of its values and column indices.
  void prefetch_extent(Index i) const {
    prefetch_line(indptr + i);
    prefetch_line(indptr + i + 1);
  }
  void prefetch_all(Index i) const { each_line(i, [](const void* p) { prefetch_line(p); }); }
  // The same a step ahead, into L2 (DP-SCD's next batch): request_extent_l2(i) first, then
  // request_l2(i): every line of the row's values and column indices.
  void request_extent_l2(Index i) const {
    prefetch_l2(indptr + i);
    prefetch_l2(indptr + i + 1);
  }
  void request_l2(Index i) const { each_line(i, [](const void* p) { prefetch_l2(p); }); }
  // request(p) for every cache line of row i's values and column indices.
  template <class Request>
  void each_line(Index i, Request request) const {
    const std::int64_t lo = indptr[i], hi = indptr[i + 1];
    const char* d = reinterpret_cast<const char*>(data + lo);
    const char* c = reinterpret_cast<const char*>(indices + lo);
    const std::int64_t bytes = (hi - lo) * 8;  // the values' (the indices': half)
    for (std::int64_t b = 0; b < bytes; b += 64) {
      request(d + b);
      if (b % 128 == 0) request(c + b / 2);
    }
    if (bytes > 0) {  // the last line when the row straddles one more boundary
      request(d + bytes - 1);
      request(c + bytes / 2 - 1);
    }
  }
  double dot_sq(Index i, const VectorXd& w, double& sq) const {
    const double f = scale(i);
    double s = 0.0, q = 0.0;
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      const double v = data[k] * f;
      s += v * w[indices[k]];
      q += v * v;
    }
    if (has_intercept) {
      s += intercept * w[n_cols];
      q += intercept * intercept;
    }
    sq = q;
    return s;
  }
  // max_k |x_ik| and sum_k (x_ik / m)^2 (stored order, the intercept last): the two
  // fallbacks of make_scaled_norm, as DenseRows's.
  double max_abs(Index i) const {
    const double f = scale(i);
    double m = has_intercept ? std::fabs(intercept) : 0.0;  // fmax: the order does not matter
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
      m = std::fmax(m, std::fabs(data[k] * f));
    return m;
  }
  double scaled_squares(Index i, double m) const {
    const double f = scale(i);
    double t = 0.0;
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k)
      t += ((data[k] * f) / m) * ((data[k] * f) / m);
    if (has_intercept) t += (intercept / m) * (intercept / m);
    return t;
  }
  // The plain sum of squares of row i: the sum of dot_sq (stored order, the intercept last),
  // as numpy's np.bincount of the squared values gives it
  // (privlearn._design_matrix.scaled_row_norms).
  double squares(Index i) const {
    const double f = scale(i);
    double s = 0.0;
    for (std::int64_t k = indptr[i]; k < indptr[i + 1]; ++k) s += (data[k] * f) * (data[k] * f);
    if (has_intercept) s += intercept * intercept;
    return s;
  }
  ScaledNorm scaled_norm(Index i) const {
    return make_scaled_norm(
        squares(i), [&] { return max_abs(i); }, [&](double m) { return scaled_squares(i, m); });
  }
  double norm(Index i) const { return scaled_norm(i).value(); }
  // squares(i) of every row into sq[0..rows): the fit's row norms in one pass over the values,
  // without numpy's temporaries of one row index and one square per stored value.
  void row_squares(double* sq) const {
    for (Index i = 0; i < n_rows; ++i) sq[i] = squares(i);
  }
  // Structural checks (before any parallel region): the rows' extents lie inside the nnz
  // stored values (O(rows)); validate adds the column indices and the values (O(nnz)).
  void validate_extents(std::int64_t nnz) const {
    checks::require(n_rows >= 0 && n_cols >= 0, "CSR matrix has a negative shape");
    checks::require(indptr[0] == 0 && indptr[n_rows] == nnz, "CSR indptr is inconsistent");
    for (Index i = 0; i < n_rows; ++i)
      if (indptr[i] > indptr[i + 1]) checks::fail("CSR indptr is not non-decreasing");
  }
  void validate(std::int64_t nnz) const {
    validate_extents(nnz);
    // Messages are built only on failure: this loop runs over every stored value.
    for (std::int64_t k = 0; k < nnz; ++k) {
      if (indices[k] < 0 || indices[k] >= n_cols)
        checks::fail("CSR column index out of range at position " + std::to_string(k));
      if (!std::isfinite(data[k]))
        checks::fail("X contains a non-finite value at stored position " + std::to_string(k));
    }
  }
};

}  // namespace privlearn
