#include "privlearn/linear/quadgrad.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/vec4.hpp"

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
// each summed from zero, block sums added in block order to a zeroed output: the same
// arithmetic, so the same bits for any thread count), but with as many blocks per parallel
// region as kPartialBudget allows instead of parallel::kReduceWave. One region per pass at the
// sizes of interest: each region ends in a barrier, which on an oversubscribed machine costs a
// scheduler time slice. add_block(lo, hi, acc) adds rows [lo, hi) to acc (dim doubles, zeroed);
// it must be a function of those rows only (never of the thread or of other blocks). work_ns:
// the pass's single-thread cost estimate for the thread policy (parallel::threads_for).
template <class AddBlock>
void reduce_blocks(Index n_rows, Index dim, int n_threads, double work_ns, AddBlock&& add_block,
                   VecMut out) {
  out.setZero();
  if (n_rows == 0) return;
  const Index block = parallel::kReduceBlock;
  const Index n_blocks = (n_rows + block - 1) / block;
  if (n_blocks == 1) {
    add_block(Index{0}, n_rows, out.data());
    return;
  }
  const int threads = parallel::threads_for(n_threads, work_ns);
  const Index wave_max = std::max<Index>(parallel::kReduceWave,
                                         kPartialBudget / std::max<Index>(1, dim));
  RowMatrixXd partial(std::min(n_blocks, wave_max), dim);
  for (Index wave_start = 0; wave_start < n_blocks; wave_start += wave_max) {
    const Index wave = std::min(wave_max, n_blocks - wave_start);
#if PRIVLEARN_HAS_OPENMP
// Dynamic chunks of 4 blocks (1024 rows, ~50 us at d = 200): a thread on a quiet core takes over
// the blocks of a descheduled one, so a loaded core costs at most one chunk at the barrier.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1 && wave >= parallel::kMinParallelItems)
#endif
    for (Index b = 0; b < wave; ++b) {
      const Index lo = (wave_start + b) * block;
      const Index hi = std::min(n_rows, lo + block);
      double* acc = partial.row(b).data();  // row-major: contiguous
      std::fill(acc, acc + dim, 0.0);
      add_block(lo, hi, acc);
    }
    for (Index b = 0; b < wave; ++b) out += partial.row(b).transpose();
  }
  (void)threads;
}

// reduce_blocks with the rows of each block added one at a time, in row order.
template <class AddRow>
void reduce_rows(Index n_rows, Index dim, int n_threads, double work_ns, AddRow&& add_row,
                 VecMut out) {
  reduce_blocks(
      n_rows, dim, n_threads, work_ns,
      [&](Index lo, Index hi, double* acc) {
        VecMut a(Eigen::Map<VectorXd>(acc, dim));
        for (Index i = lo; i < hi; ++i) add_row(i, a);
      },
      out);
}

// Stored entries of X (dense: n d; CSR: its non-zeros) and sum_i nnz_i^2 (the multiply-adds of
// X^T X): sizes for the thread policy's cost estimates.
double entries(const DenseRows& X) {
  return static_cast<double>(X.rows()) * static_cast<double>(X.cols());
}
double entries(const CsrRows& X) { return static_cast<double>(X.indptr[X.n_rows]); }
double gram_entries(const DenseRows& X) { return entries(X) * static_cast<double>(X.cols()); }
double gram_entries(const CsrRows& X) {
  double s = 0.0;
  for (Index i = 0; i < X.n_rows; ++i) {
    const auto k = static_cast<double>(X.indptr[i + 1] - X.indptr[i]);
    s += k * k;
  }
  return s;
}

// sum_k x_ik, the stored entries added in order from 0.
double row_sum(const DenseRows& X, Index i) {
  const double* x = X.X.row(i).data();
  double s = 0.0;
  for (Index k = 0; k < X.cols(); ++k) s += x[k];
  return s;
}
double row_sum(const CsrRows& X, Index i) {
  double s = 0.0;
  for (std::int64_t k = X.indptr[i]; k < X.indptr[i + 1]; ++k) s += X.data[k];
  return s;
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

// G += X[lo:hi]^T X[lo:hi], one row at a time in row order: entry (a, b), a <= b, adds
// x_ia x_ib (the lower triangle is mirrored by blocked_gram). A fixed order of the sums, the same
// as the CSR kernel's (whose skipped zeros add nothing) and the numpy twin's: a sum of products
// of signed entries may cancel, and a matrix-product kernel's order (Eigen's blocking) would give
// other rounding, which the twin could not repeat.
void dense_gram_block(const double* X, Index stride, Index rows, Index d, double* G);

void add_block_gram(const DenseRows& X, Index lo, Index hi, RowMatrixXd& G) {
  const Index stride = X.X.outerStride();
  dense_gram_block(X.X.data() + lo * stride, stride, hi - lo, X.cols(), G.data());
}

void add_block_gram(const CsrRows& X, Index lo, Index hi, RowMatrixXd& G) {
  for (Index i = lo; i < hi; ++i)
    for (std::int64_t a = X.indptr[i]; a < X.indptr[i + 1]; ++a) {
      const double va = X.data[a];
      const Index ra = X.indices[a];
      for (std::int64_t b = X.indptr[i]; b < X.indptr[i + 1]; ++b)
        if (X.indices[b] >= ra) G(ra, X.indices[b]) += va * X.data[b];
    }
}

// X^T X by blocks of parallel::kReduceBlock rows (upper triangle, add_block_gram), block Gram
// matrices added in block order, then the lower triangle mirrored.
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
  const int threads = parallel::threads_for(n_threads, gram_entries(X) * parallel::kNsPerEntry);
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
  for (Index a = 0; a < d; ++a)  // the products commute: the mirror is what the sums would be
    for (Index b = a + 1; b < d; ++b) G(b, a) = G(a, b);
  return G;
}

void validate_labels(Index n, const VecRef& y) {
  checks::require(y.size() == n, "y must have one entry per row of X");
  for (Index i = 0; i < n; ++i)
    if (!(y[i] == 1.0 || y[i] == -1.0))
      checks::fail("y must contain only -1 and +1; row " + std::to_string(i) +  // never the value
                   " holds another value");
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

// ---- The fused logistic pass ---------------------------------------------------------------------
// Row i contributes s y_i x_i to the gradient and ll to l(beta), with z = y_i x_i^T beta,
// exp(x) for x <= 0 (x = -|z|), in +, -, * and exact scalings only, for the same reasons as
// log1p_unit (the C library's exp was the rest of the pass's transcendental cost): x clamped to
// >= -1000 (exp is 0 there in double); k = rint(x / ln 2) (the 1.5 * 2^52 shift: round to
// nearest even); r = (x - k ln2_hi) - k ln2_lo (Cody-Waite: ln2_hi has 21 trailing zero bits, so
// k ln2_hi and x - k ln2_hi are exact), |r| <= 0.347; q = sum_{m=0}^{13} r^m / m! (Horner;
// truncation < 5e-18); the result q 2^k, one rounding (a subnormal result: q 2^(k + 1000) is
// exact, then times 2^-1000), i.e. ldexp(q, k), which the numpy twin uses. NaN stays NaN.
// Within one unit in the last place of the C library's exp (tests/test_quadgrad.py).
constexpr double kExpLn2Hi = 6.93147180369123816490e-01;  // ln 2 to 32 bits
constexpr double kExpLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kExpLn2Hi
constexpr double kInvLn2 = 1.4426950408889634;
constexpr double kRoundShift = 6755399441055744.0;  // 1.5 * 2^52
inline double pow2_bits(std::int64_t k) {  // 2^k for -1022 <= k <= 1023
  const std::uint64_t bits = static_cast<std::uint64_t>(k + 1023) << 52;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
inline double exp_nonpositive(double x) {
  x = x < -1000.0 ? -1000.0 : x;
  const double k = (x * kInvLn2 + kRoundShift) - kRoundShift;
  const double r = (x - k * kExpLn2Hi) - k * kExpLn2Lo;
  double q = 1.0 / 6227020800.0;  // 1 / 13!
  q = 1.0 / 479001600.0 + r * q;
  q = 1.0 / 39916800.0 + r * q;
  q = 1.0 / 3628800.0 + r * q;
  q = 1.0 / 362880.0 + r * q;
  q = 1.0 / 40320.0 + r * q;
  q = 1.0 / 5040.0 + r * q;
  q = 1.0 / 720.0 + r * q;
  q = 1.0 / 120.0 + r * q;
  q = 1.0 / 24.0 + r * q;
  q = 1.0 / 6.0 + r * q;
  q = 1.0 / 2.0 + r * q;
  q = 1.0 + r * q;
  q = 1.0 + r * q;
  const std::int64_t ki = k == k ? static_cast<std::int64_t>(k) : 0;  // NaN: q is NaN anyway
  return ki >= -1021 ? q * pow2_bits(ki) : (q * pow2_bits(ki + 1000)) * pow2_bits(-1000);
}

// s = 1 - sigma(z) = sigma(-z) and ll = -ln(1 + exp(-z)) (both in their overflow-free forms).
// A block kernel adds rows [lo, hi) to acc (d + 1 doubles: the gradient, then l) and depends on
// those rows only, so reduce_blocks gives the same bits for any thread count.

// ln(1 + e) for e in [0, 1] (e = exp(-|z|)), in +, -, *, / only, so that the numpy twin repeats
// it to the bit and the four rows of a dense step can run it side by side (the C library's log1p
// was ~60% of a pass at d = 20). u = 1 + e rounded, c = e - (u - 1) its rounding error (exact:
// |e| <= 1); u = 2^k (1 + f) with k = 1 when u > sqrt(2), so f = u / 2 - 1 or u - 1 (exact,
// Sterbenz) lies in (-0.293, 0.415]; ln(1 + f) = 2 atanh(s) = f - s (f - R), s = f / (2 + f)
// (|s| <= 0.1716), R = sum_{m=1}^{10} 2 s^(2m) / (2m + 1) (truncation < 1e-17 relative); then
// ln(1 + e) = k ln2_hi + (ln(1 + f) + (c / u + k ln2_lo)). Within a few units in the last place
// of the exact value (tests/test_quadgrad.py checks it against math.log1p on a grid).
constexpr double kLn2Hi = 0.6931471805599453;      // the double nearest ln 2
constexpr double kLn2Lo = 2.3190468138462996e-17;  // ln 2 - kLn2Hi
constexpr double kSqrt2 = 1.4142135623730951;
inline double log1p_unit(double e, double u) {
  const double c = e - (u - 1.0);
  const bool big = u > kSqrt2;
  const double k = big ? 1.0 : 0.0;
  const double f = big ? u * 0.5 - 1.0 : u - 1.0;
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  double r = 2.0 / 21.0;
  r = 2.0 / 19.0 + s2 * r;
  r = 2.0 / 17.0 + s2 * r;
  r = 2.0 / 15.0 + s2 * r;
  r = 2.0 / 13.0 + s2 * r;
  r = 2.0 / 11.0 + s2 * r;
  r = 2.0 / 9.0 + s2 * r;
  r = 2.0 / 7.0 + s2 * r;
  r = 2.0 / 5.0 + s2 * r;
  r = 2.0 / 3.0 + s2 * r;
  r = s2 * r;
  const double log_f = f - s * (f - r);
  return k * kLn2Hi + (log_f + (c / u + k * kLn2Lo));
}

// s = 1 - sigma(z) = sigma(-z) and ll = -ln(1 + exp(-z)), both in their overflow-free forms with
// e = exp(-|z|): z >= 0: s = e / (1 + e), ll = -ln(1 + e); z < 0: s = 1 / (1 + e),
// ll = z - ln(1 + e).
inline void logistic_terms(double z, double& s, double& ll) {
  const bool pos = z >= 0.0;
  const double e = exp_nonpositive(pos ? -z : z);
  const double u = 1.0 + e;
  s = (pos ? e : 1.0) / u;
  const double l = log1p_unit(e, u);
  ll = pos ? -l : z - l;
}

// CSR rows: one row at a time (sparse rows are short; the pass is bound by the gathers).
void loglik_gradient_block(const CsrRows& X, const double* y, const VectorXd& b, Index lo,
                           Index hi, double* acc) {
  const Index d = X.cols();
  for (Index i = lo; i < hi; ++i) {
    double s, ll;
    logistic_terms(y[i] * X.dot(i, b), s, ll);
    X.axpy(i, s * y[i], acc);
    acc[d] += ll;
  }
}

// Software prefetch of the rows kPrefetchRows ahead of the dot products (one hint per 32 bytes,
// i.e. two per cache line: cheap next to the loads). A hint only: it may reach into the next
// block, never past the last row. Speed only, never results.
constexpr Index kPrefetchRows = 8;
#if defined(__GNUC__)
#define PRIVLEARN_QG_PREFETCH(p) __builtin_prefetch(p)
#else
#define PRIVLEARN_QG_PREFETCH(p) ((void)0)
#endif

// Four-double lanes (vec4.hpp): with the vector extension, the logistic terms too.
#if defined(PRIVLEARN_HAS_VECTOR_EXTENSION)
#define PRIVLEARN_QG_LANE_TERMS 1

inline V4 v4_from_bits(const V4i& b) {
  V4 v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// exp_nonpositive lane by lane: the same operations in the same order (the integer k is read
// from the bits of x / ln 2 + 1.5 * 2^52, whose low bits hold it; equal to the scalar cast for
// every non-NaN lane, and a NaN lane stays NaN through q).
inline V4 v4_exp_nonpositive(V4 x) {
  const V4 lo = v4_splat(-1000.0);
  x = x < lo ? lo : x;
  const V4 shifted = x * v4_splat(kInvLn2) + v4_splat(kRoundShift);
  const V4 k = shifted - v4_splat(kRoundShift);
  const V4 r = (x - k * v4_splat(kExpLn2Hi)) - k * v4_splat(kExpLn2Lo);
  V4 q = v4_splat(1.0 / 6227020800.0);
  q = v4_splat(1.0 / 479001600.0) + r * q;
  q = v4_splat(1.0 / 39916800.0) + r * q;
  q = v4_splat(1.0 / 3628800.0) + r * q;
  q = v4_splat(1.0 / 362880.0) + r * q;
  q = v4_splat(1.0 / 40320.0) + r * q;
  q = v4_splat(1.0 / 5040.0) + r * q;
  q = v4_splat(1.0 / 720.0) + r * q;
  q = v4_splat(1.0 / 120.0) + r * q;
  q = v4_splat(1.0 / 24.0) + r * q;
  q = v4_splat(1.0 / 6.0) + r * q;
  q = v4_splat(1.0 / 2.0) + r * q;
  q = v4_splat(1.0) + r * q;
  q = v4_splat(1.0) + r * q;
  V4i shifted_bits, shift_bits;
  const V4 shift = v4_splat(kRoundShift);
  std::memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
  std::memcpy(&shift_bits, &shift, sizeof shift_bits);
  const V4i ki = shifted_bits - shift_bits;
  const V4i normal = ki >= -1021;
  const V4i kk = normal ? ki : ki + 1000;
  const V4 scaled = q * v4_from_bits((kk + 1023) << 52);
  return normal ? scaled : scaled * v4_splat(pow2_bits(-1000));
}

// log1p_unit lane by lane (the same operations in the same order).
inline V4 v4_log1p_unit(const V4& e, const V4& u) {
  const V4 one = v4_splat(1.0);
  const V4 c = e - (u - one);
  const auto big = u > v4_splat(kSqrt2);
  const V4 k = big ? one : v4_zero();
  const V4 f = big ? u * v4_splat(0.5) - one : u - one;
  const V4 s = f / (v4_splat(2.0) + f);
  const V4 s2 = s * s;
  V4 r = v4_splat(2.0 / 21.0);
  r = v4_splat(2.0 / 19.0) + s2 * r;
  r = v4_splat(2.0 / 17.0) + s2 * r;
  r = v4_splat(2.0 / 15.0) + s2 * r;
  r = v4_splat(2.0 / 13.0) + s2 * r;
  r = v4_splat(2.0 / 11.0) + s2 * r;
  r = v4_splat(2.0 / 9.0) + s2 * r;
  r = v4_splat(2.0 / 7.0) + s2 * r;
  r = v4_splat(2.0 / 5.0) + s2 * r;
  r = v4_splat(2.0 / 3.0) + s2 * r;
  r = s2 * r;
  const V4 log_f = f - s * (f - r);
  return k * v4_splat(kLn2Hi) + (log_f + (c / u + k * v4_splat(kLn2Lo)));
}
#endif

// x^T b with four partial sums p (lane l: columns k = l mod 4 below d4 = d - d % 4, in order),
// combined as (p0 + p1) + (p2 + p3), then columns d4 .. d - 1 added in order.
inline double finish_dot(const V4& p, const double* x, const double* b, Index d4, Index d) {
  double t = (p[0] + p[1]) + (p[2] + p[3]);
  for (Index k = d4; k < d; ++k) t += x[k] * b[k];
  return t;
}

// Dense rows [0, rows) of a row-major block (row stride `stride`; `avail` >= rows rows are
// readable from X, for the prefetch hints only): adds sum_i s_i y_i x_i to acc[0, d) and
// sum_i ll_i to acc[d]. Four rows at a time:
//   1. z_r = x_r^T b (four independent 4-lane sums, b loaded once for the four rows);
//   2. w_r = s_r y_r and ll_r, acc[d] += ll_r in row order;
//   3. acc[j] = (((acc[j] + w_0 x_0j) + w_1 x_1j) + w_2 x_2j) + w_3 x_3j, four columns per
//      vector: the same sums, in the same (row) order, as one axpy per row.
// The four rows are read from memory once (step 1) and are still in L1 for step 3; the
// arithmetic of steps 2-3 overlaps the prefetches of the rows that follow, so the pass runs
// close to the speed of reading X once (measured: 28 ms per pass at n = 422,108, d = 200, vs
// 36 ms with steps 2-3 done per 96 KiB chunk of rows from L2). The rows left over (rows % 4)
// take the same steps one at a time. Row r's arithmetic is fixed by its data, b and its
// position in the block: the block's sum never depends on threads.
PRIVLEARN_VEC4_CLONES
void dense_logistic_block(const double* X, Index stride, Index rows, Index avail, Index d,
                          const double* y, const double* b, double* acc) {
  const Index d4 = d - d % 4;
  double w[4];
  const auto to_weight = [&](Index r, double z, double& wr) {
    const double yr = y[r];
    double s, ll;
    logistic_terms(yr * z, s, ll);
    wr = s * yr;
    acc[d] += ll;
  };
  Index r = 0;
  for (; r + 4 <= rows; r += 4) {
    const double* x0 = X + r * stride;
    const double* x1 = x0 + stride;
    const double* x2 = x1 + stride;
    const double* x3 = x2 + stride;
    // Rows r + kPrefetchRows .. + 3 if they exist (possibly in the next block).
    const double* pf = r + kPrefetchRows + 4 <= avail ? x0 + kPrefetchRows * stride : x0;
    V4 p0 = v4_zero(), p1 = v4_zero(), p2 = v4_zero(), p3 = v4_zero();
    for (Index k = 0; k < d4; k += 4) {
      PRIVLEARN_QG_PREFETCH(pf + k);
      PRIVLEARN_QG_PREFETCH(pf + stride + k);
      PRIVLEARN_QG_PREFETCH(pf + 2 * stride + k);
      PRIVLEARN_QG_PREFETCH(pf + 3 * stride + k);
      const V4 bk = v4_load(b + k);
      p0 = p0 + v4_load(x0 + k) * bk;
      p1 = p1 + v4_load(x1 + k) * bk;
      p2 = p2 + v4_load(x2 + k) * bk;
      p3 = p3 + v4_load(x3 + k) * bk;
    }
    // The four rows' logistic terms side by side (logistic_terms lane by lane: the C library's
    // branch-free arithmetic, which the compiler may run in vector lanes).
    double z[4] = {y[r] * finish_dot(p0, x0, b, d4, d), y[r + 1] * finish_dot(p1, x1, b, d4, d),
                   y[r + 2] * finish_dot(p2, x2, b, d4, d),
                   y[r + 3] * finish_dot(p3, x3, b, d4, d)};
    double ll[4];
#if defined(PRIVLEARN_QG_LANE_TERMS)
    {
      const V4 zv = v4_load(z), yv = v4_load(y + r);
      const auto pos = zv >= v4_zero();
      const V4 e = v4_exp_nonpositive(pos ? -zv : zv);
      const V4 u = v4_splat(1.0) + e;
      const V4 lg = v4_log1p_unit(e, u);
      v4_store(w, ((pos ? e : v4_splat(1.0)) / u) * yv);
      v4_store(ll, pos ? -lg : zv - lg);
    }
#else
    for (int l = 0; l < 4; ++l) {
      double s;
      logistic_terms(z[l], s, ll[l]);
      w[l] = s * y[r + l];
    }
#endif
    acc[d] += ll[0];
    acc[d] += ll[1];
    acc[d] += ll[2];
    acc[d] += ll[3];
    const V4 v0 = v4_splat(w[0]), v1 = v4_splat(w[1]), v2 = v4_splat(w[2]), v3 = v4_splat(w[3]);
    Index j = 0;
    for (; j < d4; j += 4) {
      V4 a = v4_load(acc + j);
      a = a + v0 * v4_load(x0 + j);
      a = a + v1 * v4_load(x1 + j);
      a = a + v2 * v4_load(x2 + j);
      a = a + v3 * v4_load(x3 + j);
      v4_store(acc + j, a);
    }
    for (; j < d; ++j)
      acc[j] = (((acc[j] + w[0] * x0[j]) + w[1] * x1[j]) + w[2] * x2[j]) + w[3] * x3[j];
  }
  for (; r < rows; ++r) {
    const double* x0 = X + r * stride;
    V4 p0 = v4_zero();
    for (Index k = 0; k < d4; k += 4) p0 = p0 + v4_load(x0 + k) * v4_load(b + k);
    to_weight(r, finish_dot(p0, x0, b, d4, d), w[0]);
    for (Index j = 0; j < d; ++j) acc[j] += w[0] * x0[j];
  }
}

// add_block_gram's dense kernel (G row-major d x d, upper triangle): four rows at a time, entry
// (a, b) += x_0a x_0b, then x_1a x_1b, x_2a x_2b, x_3a x_3b, in that order: the same sums in the
// same (row) order as one row at a time, with a quarter of the loads and stores of G (which
// need not fit in L1: 80 KB at d = 100); the rows left over (rows % 4) one at a time.
PRIVLEARN_VEC4_CLONES
void dense_gram_block(const double* X, Index stride, Index rows, Index d, double* G) {
  Index r = 0;
  for (; r + 4 <= rows; r += 4) {
    const double* x0 = X + r * stride;
    const double* x1 = x0 + stride;
    const double* x2 = x1 + stride;
    const double* x3 = x2 + stride;
    for (Index a = 0; a < d; ++a) {
      const double a0 = x0[a], a1 = x1[a], a2 = x2[a], a3 = x3[a];
      double* g = G + a * d;
      for (Index b = a; b < d; ++b)
        g[b] = (((g[b] + a0 * x0[b]) + a1 * x1[b]) + a2 * x2[b]) + a3 * x3[b];
    }
  }
  for (; r < rows; ++r) {
    const double* x = X + r * stride;
    for (Index a = 0; a < d; ++a) {
      const double xa = x[a];
      double* g = G + a * d;
      for (Index b = a; b < d; ++b) g[b] += xa * x[b];
    }
  }
}

void loglik_gradient_block(const DenseRows& X, const double* y, const VectorXd& b, Index lo,
                           Index hi, double* acc) {
  const Index stride = X.X.outerStride();
  dense_logistic_block(X.X.data() + lo * stride, stride, hi - lo, X.rows() - lo, X.cols(), y + lo,
                       b.data(), acc);
}

}  // namespace

template <class Rows>
VectorXd gram_abs_row_sums(const Rows& X, int n_threads) {
  const Index n = X.rows(), d = X.cols();
  VectorXd out(d);
  if (all_non_negative(X)) {
    // (X^T X) 1 = X^T (X 1): every entry of X^T X is >= 0, so this is the row sum of |X^T X|.
    // Row sums added entry by entry in column order (not Eigen's vectorised dot, whose order
    // the numpy twin could not repeat).
    reduce_rows(
        n, d, n_threads, entries(X) * parallel::kNsPerEntry,
        [&](Index i, VecMut acc) { X.axpy(i, row_sum(X, i), acc); }, out);
    return out;
  }
  const RowMatrixXd G = blocked_gram(X, n_threads);
  for (Index k = 0; k < d; ++k) {
    double s = 0.0;
    for (Index j = 0; j < d; ++j) s += std::abs(G(k, j));
    out[k] = s;
  }
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
  const VectorXd yv = y;
  VectorXd acc_out(d + 1);
  reduce_blocks(
      n, d + 1, n_threads, entries(X) * parallel::kNsPerEntry,
      [&](Index lo, Index hi, double* acc) { loglik_gradient_block(X, yv.data(), b, lo, hi, acc); },
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
    interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
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
