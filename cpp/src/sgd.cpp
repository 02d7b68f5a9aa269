#include "privlearn/linear/sgd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "privlearn/checks.hpp"
#include "privlearn/fixed_sum.hpp"
#include "privlearn/lattice_noise.hpp"
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
  checks::all_finite_values(y.data(), n, "y");
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
  if (p.mechanism == Mechanism::gaussian && p.sigma > 0.0)
    checks::require(static_cast<double>(steps) * static_cast<double>(d) <
                        static_cast<double>(random::kDiscreteGaussianIndexLimit),
                    "too many steps for the noise address space (steps * n_features >= 2^56)");
  checks::require(steps < static_cast<Index>(random::kRowCount), "too many SGD steps (>= 2^32)");
  checks::require(p.epochs < static_cast<Index>(random::kRowCount), "too many epochs");
  if (p.record_every > 0)
    checks::require(steps / p.record_every < (Index{1} << 24), "record_every is too small");
}

// Noise, step and projection of step t from the real batch gradient sum (noise is added to it).
void apply_step(VectorXd& w, VectorXd& grad, double denom, Index t, const SgdParams& p) {
  const Index d = w.size();
  if (p.mechanism == Mechanism::l2_laplace && std::isfinite(p.epsilon)) {
    const double noise_unit = p.clip > 0.0 ? p.clip : 1.0;  // Song: sensitivity 2C of the sum
    VectorXd noise(d);
    random::l2_laplace(p.key, p.noise_stream, static_cast<std::uint64_t>(t), 1,
                       static_cast<std::size_t>(d), p.epsilon, noise.data(), 1);
    grad += noise_unit * noise;
  }
  // (the Gaussian mechanism's noise is added on the lattice, to the exact sum: noisy_units)
  const double eta = sgd_learning_rate(p, t);
  w -= eta * (p.lam * w + grad / denom);
  if (p.radius > 0.0 && std::isfinite(p.radius)) {
    const ScaledNorm norm = scaled_norm(w);  // no overflow of ||w||^2 (rows.hpp)
    if (norm.value() > p.radius) w *= (p.radius / norm.scale) / norm.root;
  }
}

bool lattice_noise(const SgdParams& p) {
  return p.mechanism == Mechanism::gaussian && p.sigma > 0.0 && p.clip > 0.0;
}

// The released gradient sum of step t from its exact fixed-point units (2^-30 C): with the
// Gaussian mechanism, the units rounded to the noise lattice C 2^-k plus exact discrete
// Gaussian noise (random.hpp, noise_lattice: draws t d + j of the noise stream), converted to
// reals only then (post-processing); otherwise the units themselves.
// `ahead` (sgd_train): the same draws made a block of steps at a time (lattice_noise.hpp).
void noisy_units(std::int64_t* units, Index d, Index t, const SgdParams& p, double* grad,
                 random::LatticeNoiseAhead* ahead = nullptr) {
  if (lattice_noise(p)) {
    const random::NoiseLattice lattice =
        ahead ? ahead->lattice() : random::noise_lattice(p.sigma, static_cast<std::uint64_t>(d));
    if (ahead)
      ahead->add(t, units);
    else
      random::add_lattice_noise(p.key, p.noise_stream, static_cast<std::uint64_t>(t) * d,
                                static_cast<std::size_t>(d), lattice, units, 1);
    const double unit = std::ldexp(p.clip, -lattice.frac_bits);
    for (Index k = 0; k < d; ++k) grad[k] = static_cast<double>(units[k]) * unit;
  } else {
    fixed::to_real(units, d, fixed::Scale(p.clip), grad);
  }
}

template <class Rows>
double entries(const Rows& X, Index i) {
  if constexpr (std::is_same_v<Rows, CsrRows>)
    return static_cast<double>(X.row_nnz(i));
  else
    return static_cast<double>(X.cols());
}

// Rows per chunk of clipped_units.
constexpr Index kBatchChunk = 16;

// Requests the first two chunks of a batch (rows[r] - offset of X) from memory: a dense row's
// lines, a CSR row's extent (clipped_units requests its values when it is a chunk ahead), and
// the labels. sgd_partial_sum calls it just before clipped_units; sgd_train requests step
// t + 1's batch before step t's noise and update (request_next_batch: this for CSR rows), so
// those lines arrive while they run (issue 32, 1M rows, paired medians of 21 and 11 rounds:
// dense 1M x 101 epoch 0.91x, a9a-like CSR 0.98x).
template <class Rows>
void request_first_rows(const Rows& X, const VecRef& y, const std::int64_t* rows, Index count,
                        Index offset) {
  for (Index r = 0; r < std::min(count, 2 * kBatchChunk); ++r) {
    const Index i = rows[r] - offset;
    if constexpr (std::is_same_v<Rows, DenseRows>)
      X.prefetch(i);
    else
      X.prefetch_extent(i);
    __builtin_prefetch(y.data() + i);
  }
}

// Step t + 1's batch requested by sgd_train before step t's noise and update, so that it
// arrives while they run. Dense rows: every row into L2 by its first two lines (the L2 streamer
// fetches the rest: DenseRows::request_l2), and the first two chunks' labels; clipped_units
// then requests each chunk into L1 a chunk ahead, from L2 (issue 32, 1M x 101 dense, paired
// medians against request_first_rows alone: every row after the first two chunks into L2 0.96x
// (13 rounds); then the first two chunks into L2 as well, not into L1, 0.98x (11 rounds);
// every line, one line or four lines of a row alike within 1.5%; the requests spread over step
// t's chunks instead of one burst: 1.01x). CSR rows: every extent into L2 (a row's lines are
// known only once its extent has arrived; request_rest_l2 requests them after the noise), and
// request_first_rows.
template <class Rows>
void request_next_batch(const Rows& X, const VecRef& y, const std::int64_t* rows, Index count) {
  if constexpr (std::is_same_v<Rows, DenseRows>) {
    for (Index r = 0; r < count; ++r) X.request_l2(rows[r]);
    for (Index r = 0; r < std::min(count, 2 * kBatchChunk); ++r)
      __builtin_prefetch(y.data() + rows[r]);
  } else {
    for (Index r = 0; r < count; ++r) X.request_extent_l2(rows[r]);  // see request_rest_l2
    request_first_rows(X, y, rows, count, 0);
  }
}

// CSR rows of step t + 1 after its first two chunks: their values and column indices into L2,
// once step t's noise has been drawn (request_next_batch requested their extents into L2 before
// it, so they have arrived); dense rows were requested whole by request_next_batch. (Issue 32,
// a9a-like 1M x 123, paired medians of 11 rounds, four runs: CSR epoch 0.98-1.00x; the first two
// chunks as well 1.00x.)
template <class Rows>
void request_rest_l2(const Rows& X, const std::int64_t* rows, Index count) {
  if constexpr (!std::is_same_v<Rows, DenseRows>)
    for (Index r = 2 * kBatchChunk; r < count; ++r) X.request_l2(rows[r]);
}

// The clipped gradient sum over rows[0..count) (indices into X, minus `offset`) in fixed-point
// units of C (fixed_sum.hpp).
//
// Issue 32, item 1: the batch runs in chunks of kChunk rows; per chunk first every row's clipped
// coefficient a (x_i^T w in dot_fixed's order and ||x_i||^2: one visit of a dense row, dot_sq;
// the loss derivative, the clip), then the rows' fixed-point terms. The coefficients of a chunk
// are independent, so the latency of one row's exp, division and square root overlaps the next
// row's dot product; the chunk's rows are still in L1 for the second visit. The rows of the
// next chunk are requested while this one runs (dense: every line of the row; CSR: its extent
// 2 kChunk ahead, then its values and indices), and dense rows are first copied into a buffer
// (DenseRows::gathered: independent copies keep many lines in flight; measured 400k x 101,
// out of cache: the epoch without noise 2.9x -> 2.1x the floor). The integer sum does not depend on the order of its terms. A term is
// truncated through int32 (SIMD lanes for dense rows) when every term is small (|a| ||x_i|| <
// 2^31: every clipped term, |a| ||x_i|| <= 2^30), without the saturation branch when bounded
// (< 2^61: then to_units is the plain truncation), else by add_units.
template <class Rows>
void clipped_units(const Rows& X, const VecRef& y, const VectorXd& w, const std::int64_t* rows,
                   Index count, Index offset, const SgdParams& p, std::int64_t* out) {
  constexpr bool kDense = std::is_same_v<Rows, DenseRows>;
  constexpr Index kChunk = kBatchChunk;
  const fixed::Scale scale(p.clip);
  const double work = count > 0 ? static_cast<double>(count) * entries(X, rows[0] - offset) : 0.0;
  auto row = [&](Index r) { return rows[r] - offset; };
  auto request = [&](Index r) {  // row r of the batch will be read soon
    if constexpr (kDense) {
      X.prefetch(row(r));
    } else {
      X.prefetch_all(row(r));
    }
  };
  // The caller has requested the batch (request_first_rows, request_next_batch); CSR rows'
  // values need their extent first, so the first chunk's are requested here.
  if constexpr (!kDense)
    for (Index r = 0; r < std::min(count, kChunk); ++r) request(r);
  const Index chunks = (count + kChunk - 1) / kChunk;

  // The chunk [r0, r1) on rows R (X itself, or the chunk's copies), row r of the batch being
  // row at(r) of R: the coefficients, then the fixed-point terms.
  auto chunk_units = [&](const Rows& R, auto at, auto contiguous, Index r0, Index r1,
                         std::int64_t* acc) {
    constexpr bool kContiguous = decltype(contiguous)::value;  // row at(r) of R is r - r0
    double coef[kChunk], bound[kChunk], label[kChunk];
    // The chunk's labels read first, in one loop of independent loads (requested two chunks
    // ahead): read inside the coefficient loop, each label's cache miss stalled that loop
    // (perf at 1M x 101: the hottest instruction of the batch kernel; epoch 0.80x the time).
    for (Index r = r0; r < r1; ++r) label[r - r0] = y[row(r)];
    // dense: the chunk's dot products and squared norms two rows at a time (dot_sq_pair: the
    // bits of dot_sq; the two rows' chains of adds interleave; issue 32, 1M x 101, paired
    // medians of 13 and 15 rounds: epoch 0.89x and 0.91x)
    double dots[kChunk], squares[kChunk];
    if constexpr (kDense) {
      Index r = r0;
      for (; r + 1 < r1; r += 2)
        dots[r - r0] = R.dot_sq_pair(at(r), at(r + 1), w, squares[r - r0], dots[r + 1 - r0],
                                     squares[r + 1 - r0]);
      if (r < r1) dots[r - r0] = R.dot_sq(at(r), w, squares[r - r0]);
    }
    for (Index r = r0; r < r1; ++r) {
      const Index i = at(r);
      double dot = 0.0, sq = 0.0;
      if constexpr (kDense) {
        dot = dots[r - r0];
        sq = squares[r - r0];
      } else {
        // both sums in one pass over the row (dot_sq: the bits of dot_fixed and of
        // scaled_norm's plain sum of squares, their two chains of adds interleaved)
        dot = R.dot_sq(i, w, sq);
      }
      const ScaledNorm norm = make_scaled_norm(
          sq, [&] { return R.max_abs(i); }, [&](double m) { return R.scaled_squares(i, m); });
      const double c = clip_coefficient(loss_derivative(p.loss, dot, label[r - r0]), norm,
                                        p.clip);  // losses.hpp
      coef[r - r0] = c * scale.to_units;
      bound[r - r0] = std::fabs(coef[r - r0]) * norm.value();  // >= max_k |a x_ik|
    }
    if constexpr (kDense) {
      // a gathered chunk (rows 0 .. r1 - r0 of R) of small terms (always, when clipped: |a|
      // ||x_i|| <= 2^30): its terms in one pass, acc's blocks in registers across the rows
      // (DenseRows::axpy_units_small_rows; issue 32, 1M x 101, paired median of 9 rounds
      // against a row at a time: epoch 0.92x; 2,000 rows, in cache: 0.86x)
      bool small = kContiguous;
      for (Index r = r0; r < r1 && small; ++r) small = fixed::small_terms_bound(bound[r - r0]);
      if (small) {
        R.axpy_units_small_rows(0, r1 - r0, coef, acc);
        return;
      }
    }
    for (Index r = r0; r < r1; ++r) {
      const Index i = at(r);
      const double a = coef[r - r0], b = bound[r - r0];
      if (fixed::small_terms_bound(b)) {
        R.axpy_units_small(i, a, acc);  // rows.hpp (dense: SIMD; also a view (s_i x_i, c))
      } else if constexpr (kDense) {
        if (b < 0x1p61)
          R.axpy_units_bounded(i, a, acc);
        else
          R.axpy_units(i, a, acc);
      } else {
        R.axpy_units(i, a, acc);
      }
    }
  };
  fixed::sum(
      chunks, X.cols(), p.n_threads, work,
      [&](Index ch, std::int64_t* acc) {
        const Index r0 = ch * kChunk, r1 = std::min(count, r0 + kChunk);
        for (Index r = r0; r < r1; ++r) {  // the next chunk's rows
          if constexpr (!kDense)
            if (r + 2 * kChunk < count) X.prefetch_extent(row(r + 2 * kChunk));
          if (r + kChunk < count) request(r + kChunk);
          if (r + 2 * kChunk < count) __builtin_prefetch(y.data() + row(r + 2 * kChunk));
        }
        if constexpr (kDense) {
          // The chunk's rows gathered into a buffer first (DenseRows::gathered), both visits
          // on the copies, each copy on its own 64-byte lines (issue 32, 1M x 101, paired
          // median of 11 rounds against copies 808 bytes apart: epoch 0.96x). Rows wider than
          // DenseRows::kGatherMaxCols are read in place.
          if (X.X.cols() <= DenseRows::kGatherMaxCols) {
            thread_local std::vector<double> buf, scales;
            double* copies = DenseRows::aligned_buffer(buf, kChunk * X.gather_stride());
            scales.resize(static_cast<std::size_t>(kChunk));
            const DenseRows B = X.gathered(rows + r0, r1 - r0, offset, copies, scales.data());
            chunk_units(B, [&](Index r) { return r - r0; }, std::true_type{}, r0, r1, acc);
            return;
          }
        }
        chunk_units(X, row, std::false_type{}, r0, r1, acc);
      },
      out);
}

double poisson_rate(Index n, const SgdParams& p) {
  return p.rate > 0.0 ? p.rate : static_cast<double>(p.batch_size) / static_cast<double>(n);
}

}  // namespace

void sgd_check_distributed(Index n_total, Index d, const SgdParams& p) {
  checks::require(n_total >= 1 && d >= 1, "X must have at least one row and one column");
  checks::require(p.sampling == Sampling::poisson && p.clip > 0.0,
                  "a distributed SGD run needs sampling 'poisson' and clip > 0");
  checks::require(p.mechanism != Mechanism::l2_laplace,
                  "the l2-laplace mechanism needs disjoint batches: not distributed");
  check_sgd_schedule(n_total, p);
  check_gaussian_noise(p);
  checks::require(static_cast<double>(sgd_step_count(n_total, p)) * static_cast<double>(d) <
                      static_cast<double>(random::kDiscreteGaussianIndexLimit),
                  "too many steps for the noise address space (steps * n_features >= 2^56)");
}

template <class Rows>
void sgd_partial_sum(const Rows& X, const VecRef& y, const VectorXd& w, Index t, Index offset,
                     Index n_total, const SgdParams& p, std::int64_t* out) {
  checks::require(offset >= 0 && offset + X.rows() <= n_total && y.size() == X.rows() &&
                      w.size() == X.cols(),
                  "sgd_partial_sum: the rows, labels and iterate do not match");
  const std::vector<std::int64_t> rows = samplers::poisson_sample_range(
      p.key, p.batch_stream, static_cast<std::uint64_t>(t), n_total, poisson_rate(n_total, p),
      offset, offset + X.rows());
  request_first_rows(X, y, rows.data(), static_cast<Index>(rows.size()), offset);
  clipped_units(X, y, w, rows.data(), static_cast<Index>(rows.size()), offset, p, out);
}

void sgd_apply_units(VectorXd& w, const std::int64_t* units, Index t, const SgdParams& p) {
  VectorXd grad(w.size());
  std::vector<std::int64_t> noisy(units, units + w.size());
  noisy_units(noisy.data(), w.size(), t, p, grad.data());
  apply_step(w, grad, static_cast<double>(p.batch_size), t, p);
}

template <class Rows>
SgdResult sgd_train(const Rows& X, const VecRef& y, const VecRef& w0, const SgdParams& p) {
  const Index n = X.rows();
  const Index d = X.cols();
  validate(n, d, y, w0, p);
  const Index steps = sgd_step_count(n, p);
  const Index per_pass = (n + p.batch_size - 1) / p.batch_size;
  const bool clipped = p.clip > 0.0;
  const double q_rate = poisson_rate(n, p);

  SgdResult result;
  result.w = w0;
  VectorXd& w = result.w;
  VectorXd grad(d);
  std::vector<std::int64_t> units(static_cast<std::size_t>(clipped ? d : 0));
  std::vector<std::int64_t> perm, batch, next_batch;
  std::vector<VectorXd> recorded;
  std::unique_ptr<random::LatticeNoiseAhead> ahead;
  if (lattice_noise(p))
    ahead = std::make_unique<random::LatticeNoiseAhead>(
        p.key, p.noise_stream, random::noise_lattice(p.sigma, static_cast<std::uint64_t>(d)),
        static_cast<std::uint64_t>(d), steps, p.n_threads);

  // The batch of step t: rows[0..count) of `perm` (disjoint) or of `into`. It depends on the
  // key and t only, so step t + 1's batch is drawn during step t (below).
  struct Batch {
    const std::int64_t* rows = nullptr;
    Index count = 0;
  };
  auto batch_of = [&](Index t, std::vector<std::int64_t>& into) {
    Batch b;
    if (p.sampling == Sampling::disjoint) {
      const Index pass = t / per_pass, k = t % per_pass;
      if (k == 0)  // step t - 1 is done with the previous pass's permutation
        perm = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                    static_cast<std::uint64_t>(pass), n, n);
      const Index lo = k * p.batch_size;
      b.rows = perm.data() + lo;
      b.count = std::min(n, lo + p.batch_size) - lo;
    } else if (p.sampling == Sampling::fixed) {
      into = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                  static_cast<std::uint64_t>(t), n, p.batch_size);
      b.rows = into.data();
      b.count = p.batch_size;
    } else {
      into = samplers::poisson_sample(p.key, p.batch_stream, static_cast<std::uint64_t>(t), n,
                                      q_rate);
      b.rows = into.data();
      b.count = static_cast<Index>(into.size());
    }
    return b;
  };
  Batch next = steps > 0 ? batch_of(0, next_batch) : Batch{};
  if (clipped && steps > 0) request_next_batch(X, y, next.rows, next.count);

  for (Index t = 0; t < steps; ++t) {
    interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
    // ---- the batch of step t (drawn during step t - 1)
    batch.swap(next_batch);  // the vectors' buffers move with them: next.rows stays valid
    const std::int64_t* rows = next.rows;
    const Index count = next.count;

    // ---- sum of (clipped) per-example gradients: exact in fixed point when the terms are
    // bounded, else a deterministic blocked float sum (both independent of n_threads)
    if (clipped) {
      clipped_units(X, y, w, rows, count, 0, p, units.data());
      // step t + 1's batch, its first rows requested while step t's noise and update run
      if (t + 1 < steps) {
        next = batch_of(t + 1, next_batch);
        request_next_batch(X, y, next.rows, next.count);
      }
      noisy_units(units.data(), d, t, p, grad.data(), ahead.get());
      if (t + 1 < steps) request_rest_l2(X, next.rows, next.count);
    } else {
      parallel::deterministic_sum(
          count, d, p.n_threads,
          [&](Index r, VecMut acc) {
            const Index i = rows[r];
            X.axpy(i, loss_derivative(p.loss, X.dot_fixed(i, w), y[i]), acc);
          },
          grad);
    }
    if (!clipped && t + 1 < steps) next = batch_of(t + 1, next_batch);

    // ---- noise, step and projection
    const double denom = p.sampling == Sampling::poisson ? static_cast<double>(p.batch_size)
                                                         : static_cast<double>(count);
    apply_step(w, grad, denom, t, p);
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
template void sgd_partial_sum<DenseRows>(const DenseRows&, const VecRef&, const VectorXd&, Index,
                                         Index, Index, const SgdParams&, std::int64_t*);

}  // namespace privlearn::linear
