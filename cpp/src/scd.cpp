#include "privlearn/linear/scd.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "privlearn/checks.hpp"
#include "privlearn/fixed_sum.hpp"
#include "privlearn/lattice_noise.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/samplers.hpp"

namespace privlearn::linear {

ScdVariant scd_variant_from_string(const std::string& name) {
  if (name == "dual") return ScdVariant::dual;
  if (name == "seq") return ScdVariant::seq;
  if (name == "scd") return ScdVariant::scd;
  if (name == "primal") return ScdVariant::primal;
  checks::fail("unknown variant '" + name + "' (expected dual, seq, scd or primal)");
}

Index scd_step_count(Index n, Index m, const ScdParams& p) {
  if (p.steps > 0) return p.steps;
  if (p.variant == ScdVariant::scd) return p.epochs * n;
  const Index units = p.variant == ScdVariant::primal ? m : n;
  return (p.epochs * units + p.batch_size - 1) / p.batch_size;
}

namespace {

constexpr double kBetaMin = 1e-4;
constexpr Index kPrefetchAhead = 4;  // rows of the batch requested ahead of use (random access)
constexpr Index kScdAhead = 8;  // SDCA: rows requested this many steps ahead (extent: twice)
constexpr double kBetaMax = 1.0 - 1e-4;
constexpr double kNewtonTol = 1e-12;  // newton_steps > 1: stop once beta moves less

// The batch of the next step (sampled ahead: the batches depend on the key and t only, never on
// the data), requested into L2 while the current step visits its own rows, so that its visits
// start from cache rather than memory. set() at the start of the step requests the CSR row
// extents; visit a of `count` then requests the upcoming rows [a size / count,
// (a + 1) size / count) (stateless in a: any thread may call it), or all() every upcoming row
// at once. Only the cache is touched: the results do not change. The dual fit with bounded
// updates (dual_batch_units, the default estimator's) requests them all() after its visits,
// before the step's jitter, alpha update and v's noise: spread over the visits, the requests
// waited for line-fill buffers that the visits' own misses held (perf, 1M x 100: 71% of the
// visit loop on one prefetcht1); as one burst they overlap the jitter's arithmetic (issue 32,
// paired A/Bs at 1M of 9 and 13 rounds: epoch 0.94x and 0.96x; 200k: 0.97x).
template <class Rows>
struct Upcoming {
  const Rows& X;
  const double* alpha;  // the rows [offset, offset + X.rows())
  const double* y;
  Index offset = 0;
  const std::int64_t* rows = nullptr;  // global indices
  Index size = 0;
  void set(const std::vector<std::int64_t>& next) {
    rows = next.data();
    size = static_cast<Index>(next.size());
    for (Index b = 0; b < size; ++b) X.request_extent_l2(rows[b] - offset);  // CSR only
  }
  void all() const { during(0, 1); }
  void during(Index a, Index count) const {
    if (size == 0 || count <= 0) return;
    const Index lo = a * size / count, hi = (a + 1) * size / count;
    for (Index b = lo; b < hi; ++b) {
      const Index j = rows[b] - offset;
      X.request_l2(j);
      prefetch_l2(alpha + j);
      prefetch_l2(y + j);
    }
  }
};

// Exact (ridge, hinge) or one-Newton-step (logistic) minimiser of the local dual subproblem
// G*_j with sigma' = s (see scd.hpp); z = x_j^T theta, q = ||x_j||^2.
double dual_step(Loss loss, double alpha, double y, double q, double z, double s, double lam_n,
                 int newton_steps) {
  switch (loss) {
    case Loss::squared:
      return (y - z - alpha) / (1.0 + s * q / lam_n);
    case Loss::hinge: {
      if (q <= 0.0) return 0.0;
      const double b = std::clamp(y * alpha + lam_n * (1.0 - y * z) / (s * q), 0.0, 1.0);
      return y * b - alpha;
    }
    case Loss::log_loss: {
      const double c = s * q / lam_n;
      double b = std::clamp(y * alpha, kBetaMin, kBetaMax);
      if (newton_steps == 1) {  // the paper's step: one Newton step in beta
        const double g = std::log(b / (1.0 - b)) + y * z + c * (b - y * alpha);
        const double h = 1.0 / (b * (1.0 - b)) + c;
        return y * std::clamp(b - g / h, kBetaMin, kBetaMax) - alpha;
      }
      // Newton in the log-odds u = logit(beta): the stationarity condition
      // u + y z + c (sigma(u) - y alpha) = 0 has a derivative in [1, 1 + c/4], so Newton converges
      // from any start in a few steps (in beta, the log barrier makes it crawl away from 1e-4).
      double u = std::log(b / (1.0 - b));
      const double rhs = y * z - c * (y * alpha);
      for (int it = 0; it < newton_steps; ++it) {
        const double sg = 1.0 / (1.0 + std::exp(-u));
        const double g = u + c * sg + rhs;
        const double h = 1.0 + c * (sg * (1.0 - sg));
        const double next = u - g / h;
        const bool done = std::fabs(next - u) <= kNewtonTol;
        u = next;
        if (done) break;
      }
      return y * std::clamp(1.0 / (1.0 + std::exp(-u)), kBetaMin, kBetaMax) - alpha;
    }
  }
  return 0.0;
}

// An update scaled to |zeta| <= C (clip > 0): sign(zeta) min(|zeta|, C), exact for an infinite
// zeta; a NaN update (e.g. inf - inf in a closed form) is 0. Any update with |zeta| <= C keeps
// the privacy proof. clip = 0 leaves the value as is (non-private runs).
double scale_to(double value, double clip) {
  if (clip > 0.0) {
    if (std::isnan(value)) return 0.0;
    if (std::fabs(value) > clip) return std::copysign(clip, value);
  }
  return value;
}

// -l*(-alpha) for one example (the dual's per-example term); -inf outside the domain.
double neg_conjugate(Loss loss, double alpha, double y) {
  switch (loss) {
    case Loss::squared:
      return -(0.5 * alpha * alpha - alpha * y);
    case Loss::hinge: {
      const double b = y * alpha;
      return (b < 0.0 || b > 1.0) ? -std::numeric_limits<double>::infinity() : b;
    }
    case Loss::log_loss: {
      const double b = y * alpha;
      if (b < 0.0 || b > 1.0) return -std::numeric_limits<double>::infinity();
      double s = 0.0;
      if (b > 0.0) s += b * std::log(b);
      if (b < 1.0) s += (1.0 - b) * std::log(1.0 - b);
      return -s;
    }
  }
  return 0.0;
}

// Column access for the primal variant: strided for dense rows, a CSC copy for CSR rows.
template <class Rows>
struct Columns;

template <>
struct Columns<DenseRows> {
  const DenseRows& X;
  explicit Columns(const DenseRows& rows) : X(rows) {}
  template <class F>
  void for_each(Index k, F&& f) const {
    for (Index i = 0; i < X.rows(); ++i) f(i, X.X(i, k));
  }
};

template <>
struct Columns<CsrRows> {
  std::vector<std::int64_t> colptr, row;
  std::vector<double> val;
  explicit Columns(const CsrRows& X) : colptr(static_cast<std::size_t>(X.cols()) + 1, 0) {
    const std::int64_t nnz = X.indptr[X.rows()];
    for (std::int64_t k = 0; k < nnz; ++k) ++colptr[static_cast<std::size_t>(X.indices[k]) + 1];
    for (Index c = 0; c < X.cols(); ++c)
      colptr[static_cast<std::size_t>(c) + 1] += colptr[static_cast<std::size_t>(c)];
    row.resize(static_cast<std::size_t>(nnz));
    val.resize(static_cast<std::size_t>(nnz));
    std::vector<std::int64_t> next(colptr.begin(), colptr.end() - 1);
    for (Index i = 0; i < X.rows(); ++i)
      for (std::int64_t k = X.indptr[i]; k < X.indptr[i + 1]; ++k) {
        const std::size_t at = static_cast<std::size_t>(next[static_cast<std::size_t>(X.indices[k])]++);
        row[at] = i;
        val[at] = X.data[k];
      }
  }
  template <class F>
  void for_each(Index k, F&& f) const {
    for (std::int64_t a = colptr[static_cast<std::size_t>(k)];
         a < colptr[static_cast<std::size_t>(k) + 1]; ++a)
      f(row[static_cast<std::size_t>(a)], val[static_cast<std::size_t>(a)]);
  }
};

// Checks of the parameters for n rows and m columns (no data read).
void validate_params(Index n, Index m, const ScdParams& p) {
  checks::require(in_range(p.lam, kScaleMin, kScaleMax),
                  "alpha (lambda) must lie in [1e-12, 1e12], got " + std::to_string(p.lam));
  checks::require(p.rate == 0.0 || (p.rate > 0.0 && p.rate <= 1.0),
                  "rate must lie in (0, 1] (0 = batch_size / N), got " + std::to_string(p.rate));
  checks::require(p.rate == 0.0 || (p.poisson && (p.variant == ScdVariant::dual ||
                                                   p.variant == ScdVariant::seq)),
                  "rate is the Poisson sampling rate of the dual / seq variants: it needs "
                  "sampling 'poisson'");
  checks::require(p.n_scale == 0.0 || in_range(p.n_scale, 1.0, kNScaleMax),
                  "n_scale must be 0 (= N) or lie in [1, 2^53], got " + std::to_string(p.n_scale));
  const Index units = p.variant == ScdVariant::primal ? m : n;
  if (p.variant != ScdVariant::scd) {
    if (p.rate > 0.0)  // data-independent schedule: L only enters sigma' and the step count
      checks::require(p.batch_size >= 1, "batch_size must be >= 1");
    else
      checks::require(p.batch_size >= 1 && p.batch_size <= units,
                      "batch_size must lie in [1, " + std::to_string(units) + "], got " +
                          std::to_string(p.batch_size));
  }
  parallel::check_threads(p.n_threads);
  checks::require(p.epochs >= 1, "epochs must be >= 1");
  checks::require(p.clip == 0.0 || in_range(p.clip, kScaleMin, kScaleMax),
                  "clip must be 0 (no scaling) or lie in [1e-12, 1e12], got " +
                      std::to_string(p.clip));
  checks::require(in_range(p.noise_std, 0.0, kScaleMax),
                  "noise_std must lie in [0, 1e12], got " + std::to_string(p.noise_std));
  checks::require(in_range(p.alpha_jitter, 0.0, kScaleMax),
                  "alpha_jitter must lie in [0, 1e12], got " + std::to_string(p.alpha_jitter));
  checks::require(p.alpha_jitter == 0.0 ||
                      p.variant == ScdVariant::dual || p.variant == ScdVariant::seq,
                  "alpha_jitter needs variant 'dual' or 'seq' (it perturbs the dual variables)");
  checks::require(!p.hidden_alpha || (p.variant == ScdVariant::dual && p.poisson),
                  "hidden_alpha (no per-step noise on alpha) needs variant 'dual' with Poisson "
                  "batches: the hidden-state argument (scd.hpp) does not cover seq or fixed "
                  "batches");
  checks::require(!(p.variant == ScdVariant::scd && (p.clip > 0.0 || p.noise_std > 0.0)),
                  "the 'scd' variant is the non-private baseline: no clip, no noise");
  checks::require(!(p.variant == ScdVariant::primal && p.loss == Loss::hinge),
                  "the primal variant supports the squared and logistic losses only");
  checks::require(p.record_every >= 0, "record_every must be >= 0");
  checks::require(p.newton_steps >= 1 && p.newton_steps <= 100, "newton_steps must lie in [1, 100]");
  checks::require(p.noise_stream <= ~std::uint64_t{0} - 2,
                  "noise_stream must be <= 2^64 - 3 (streams noise_stream + 1, + 2 are used)");
  const Index steps = scd_step_count(n, m, p);
  checks::require(steps < static_cast<Index>(random::kRowCount), "too many steps (>= 2^32)");
  if (p.variant == ScdVariant::dual && p.clip > 0.0 && p.noise_std > 0.0 &&
      p.noise_std / p.clip <= 0x1p39) {  // lattice noise (scd_apply_units)
    checks::require(static_cast<double>(steps) * static_cast<double>(m) <
                        static_cast<double>(random::kDiscreteGaussianIndexLimit),
                    "too many steps for the noise address space (steps * n_features >= 2^56)");
  }
  checks::require(static_cast<double>(steps + 1) * static_cast<double>(std::max(n, m)) < 4.0e18,
                  "too many steps for the noise address space");
}

template <class Rows>
void validate(const Rows& X, const VecRef& y, const ScdParams& p) {
  const Index n = X.rows(), m = X.cols();
  checks::require(n >= 1 && m >= 1, "X must have at least one row and one column");
  checks::require(y.size() == n, "y must have one entry per row of X");
  // One branch-free pass over y; the messages are built only on failure (a std::string per
  // entry, as checks::require(bool, std::string) builds it, cost ~3% of a default epoch).
  bool finite = true, labels = true;
  for (Index i = 0; i < n; ++i) {
    finite &= std::isfinite(y[i]);
    labels &= (y[i] == 1.0) | (y[i] == -1.0);
  }
  if (!finite) checks::all_finite_values(y.data(), n, "y");  // its message, never the value
  if (p.loss != Loss::squared && !labels) checks::fail("labels must be -1 or +1 for this loss");
  validate_params(n, m, p);
}

}  // namespace

template <class Rows>
double primal_objective(const Rows& X, const VecRef& y, Loss loss, double lam,
                        const VecRef& theta) {
  const VectorXd t = theta;
  double s = 0.0;
  for (Index i = 0; i < X.rows(); ++i) s += loss_value(loss, X.dot(i, t), y[i]);
  return s / static_cast<double>(X.rows()) + 0.5 * lam * t.squaredNorm();
}

template <class Rows>
double dual_objective(const Rows& X, const VecRef& y, Loss loss, double lam,
                      const VecRef& alpha) {
  const Index n = X.rows();
  VectorXd u = VectorXd::Zero(X.cols());
  double s = 0.0;
  for (Index i = 0; i < n; ++i) {
    s += neg_conjugate(loss, alpha[i], y[i]);
    X.axpy(i, alpha[i], u);
  }
  const double lam_n = lam * static_cast<double>(n);
  return s / static_cast<double>(n) - u.squaredNorm() / (2.0 * lam_n * static_cast<double>(n));
}

namespace {

// Lazy per-row noise on alpha (scd.hpp, "Noise on alpha") for the rows of a batch (global
// indices `rows`; alpha, last hold the rows [offset, offset + alpha.size())): each row gets the
// noise of the steps since its previous visit, drawn for the whole batch at once (normals_at: 8
// blocks per pass), before its update; addresses t N + j with N = n_total.
struct CatchUp {
  std::vector<std::int64_t> due_rows;
  std::vector<std::uint64_t> due_index;
  std::vector<double> due_noise;
  void operator()(const std::vector<std::int64_t>& rows, Index t, Index offset, Index n_total,
                  double* alpha, std::int64_t* last, const ScdParams& p) {
    due_rows.clear();
    due_index.clear();
    for (const std::int64_t j : rows) {
      if (static_cast<std::int64_t>(t) > last[j - offset]) {
        due_rows.push_back(j);
        due_index.push_back(static_cast<std::uint64_t>(t) * static_cast<std::uint64_t>(n_total) +
                            static_cast<std::uint64_t>(j));
      }
    }
    due_noise.resize(due_rows.size());
    random::normals_at(p.key, p.noise_stream + 2, due_index.data(), due_index.size(),
                       due_noise.data());
    for (std::size_t i = 0; i < due_rows.size(); ++i) {
      const std::int64_t j = due_rows[i] - offset;
      alpha[j] += p.noise_std * std::sqrt(static_cast<double>(static_cast<std::int64_t>(t) - last[j])) *
                  due_noise[i];
    }
    for (const std::int64_t j : rows) last[j - offset] = static_cast<std::int64_t>(t);
  }
};

// The per-record jitter (scd.hpp, "alpha_jitter"): alpha_j += alpha_jitter * N(0, 1) for every
// row j of the batch (global indices `rows`; alpha holds the rows [offset, ...)), after its
// update; address t N + j of noise_stream + 1 (N = n_total). The buffers are kept across steps.
struct Jitter {
  std::vector<std::uint64_t> index;
  std::vector<double> noise;
  void operator()(const std::vector<std::int64_t>& rows, Index t, Index offset, Index n_total,
                  double* alpha, const ScdParams& p) {
    if (!(p.alpha_jitter > 0.0) || rows.empty()) return;
    index.resize(rows.size());
    noise.resize(rows.size());
    const std::uint64_t base = static_cast<std::uint64_t>(t) * static_cast<std::uint64_t>(n_total);
    for (std::size_t i = 0; i < rows.size(); ++i)
      index[i] = base + static_cast<std::uint64_t>(rows[i]);
    random::normals_at(p.key, p.noise_stream + 1, index.data(), index.size(), noise.data());
    for (std::size_t i = 0; i < rows.size(); ++i)
      alpha[rows[i] - offset] += p.alpha_jitter * noise[i];
  }
};

// Whether alpha receives the lazily drawn per-step noise of std noise_std (scd.hpp, "Noise on
// alpha"): every noisy run except the hidden-state dual variant.
bool lazy_alpha_noise(const ScdParams& p) { return p.noise_std > 0.0 && !p.hidden_alpha; }

// The buffers of a step, kept across steps (no allocation per step).
struct StepScratch {
  CatchUp catch_up;
  Jitter jitter;
  std::vector<double> zeta;
};

// One step of Algorithm 1 on the batch rows `rows` (global indices; the worker holds rows
// [offset, offset + X.rows())): catch-up noise, every zeta_j from the same (alpha, v) scaled to
// C, their sum sum_j zeta_j x_j exactly in fixed-point units of C into `units` (fixed_sum.hpp;
// ||x_j|| <= 1), then alpha_j += zeta_j. Returns the first non-finite row (global) or -1.
// `upcoming` (or nullptr): the next step's rows, requested into L2 after the visits.
template <class Rows>
Index dual_batch_units(const Rows& X, const VecRef& y, double* alpha, std::int64_t* last,
                       const VectorXd& v, const std::vector<std::int64_t>& rows, Index t,
                       Index offset, Index n_total, double lam_n, const ScdParams& p,
                       StepScratch& scratch, std::int64_t* units,
                       const Upcoming<Rows>* upcoming) {
  if (lazy_alpha_noise(p)) scratch.catch_up(rows, t, offset, n_total, alpha, last, p);
  const Index count = static_cast<Index>(rows.size());
  std::vector<double>& zeta = scratch.zeta;
  zeta.resize(rows.size());
  const double sigma_prime = static_cast<double>(p.batch_size);
  const fixed::Scale scale(p.clip);
  std::atomic<Index> bad_row{-1};
  double work = 0.0;
  if (count > 0) {
    if constexpr (std::is_same_v<Rows, CsrRows>)
      work = static_cast<double>(count) * static_cast<double>(X.row_nnz(rows[0] - offset) + 1);
    else
      work = static_cast<double>(count) * static_cast<double>(X.cols());
  }
  fixed::sum(
      count, X.cols(), p.n_threads, work,
      [&](Index a, std::int64_t* acc) {
        if (a + 2 * kPrefetchAhead < count)
          X.prefetch_extent(rows[static_cast<std::size_t>(a + 2 * kPrefetchAhead)] - offset);
        if (a + kPrefetchAhead < count) {
          const Index ahead = rows[static_cast<std::size_t>(a + kPrefetchAhead)] - offset;
          X.prefetch_all(ahead);
          prefetch_line(alpha + ahead);
          prefetch_line(y.data() + ahead);
        }
        const Index j = rows[static_cast<std::size_t>(a)] - offset;
        double q;
        const double z = X.dot_sq(j, v, q) / lam_n;
        if (!std::isfinite(q) || !std::isfinite(z)) {
          Index none = -1;
          bad_row.compare_exchange_strong(none, j + offset);
        }
        const double step =
            scale_to(dual_step(p.loss, alpha[j], y[j], q, z, sigma_prime, lam_n, p.newton_steps),
                     p.clip);
        zeta[static_cast<std::size_t>(a)] = step;
        const double mult = step * scale.to_units;
        if (fixed::small_terms(mult, q))  // always for ||x_j|| <= 1 (|mult| <= 2^30)
          X.axpy_units_small(j, mult, acc);
        else
          X.axpy_units(j, mult, acc);
      },
      units);
  if (upcoming != nullptr) upcoming->all();  // the next step's rows, one burst (see Upcoming)
  for (Index a = 0; a < count; ++a)
    alpha[rows[static_cast<std::size_t>(a)] - offset] += zeta[static_cast<std::size_t>(a)];
  scratch.jitter(rows, t, offset, n_total, alpha, p);
  return bad_row.load();
}

double scd_rate(Index n, const ScdParams& p) {
  return p.rate > 0.0 ? p.rate : static_cast<double>(p.batch_size) / static_cast<double>(n);
}

double scd_lam_n(Index n, const ScdParams& p) {
  return p.lam * (p.n_scale > 0.0 ? p.n_scale : static_cast<double>(n));
}

void bad_row_error(Index j) {
  checks::fail("row " + std::to_string(j) +
               " of X contains NaN or infinite values or has a squared norm beyond DBL_MAX "
               "(DP-SCD assumes ||x_j|| <= 1: scale the rows), or v overflowed");
}

}  // namespace

void scd_check_distributed(Index n_total, Index m, const ScdParams& p) {
  checks::require(n_total >= 1 && m >= 1, "X must have at least one row and one column");
  checks::require(p.variant == ScdVariant::dual && p.poisson && p.clip > 0.0,
                  "a distributed DP-SCD run needs variant 'dual', Poisson batches and clip > 0");
  checks::require(p.record_every == 0, "a distributed DP-SCD run records no path");
  validate_params(n_total, m, p);
}

template <class Rows>
Index scd_partial_step(const Rows& X, const VecRef& y, double* alpha, std::int64_t* last,
                       const VectorXd& v, Index t, Index offset, Index n_total,
                       const ScdParams& p, std::int64_t* units) {
  checks::require(offset >= 0 && offset + X.rows() <= n_total && y.size() == X.rows() &&
                      v.size() == X.cols(),
                  "scd_partial_step: the rows, labels and v do not match");
  const std::vector<std::int64_t> rows = samplers::poisson_sample_range(
      p.key, p.batch_stream, static_cast<std::uint64_t>(t), n_total, scd_rate(n_total, p), offset,
      offset + X.rows());
  StepScratch scratch;
  return dual_batch_units<Rows>(X, y, alpha, last, v, rows, t, offset, n_total,
                                scd_lam_n(n_total, p), p, scratch, units, nullptr);
}

// The noise multiplier of v's lattice noise: noise_std / clip (the estimator passes
// noise_std = sigma * C), enlarged by 2^-50 so that the two roundings (sigma * C, then / C)
// can never make the noise smaller than the accountant's sigma.
double lattice_sigma(const ScdParams& p) { return (p.noise_std / p.clip) * (1.0 + 0x1p-50); }

namespace {

// Whether v's noise is the exact lattice noise (dual with clip > 0; see scd_apply_units).
bool lattice_noise(const ScdParams& p) {
  return p.noise_std > 0.0 && p.noise_std / p.clip <= 0x1p39;
}

// v += N C 2^-frac_bits: the released update of one step on the noise lattice, from the noisy
// units N = R + Y (the exact units rounded to the lattice plus the step's discrete Gaussian
// draws t m + k: random::add_lattice_noise, or LatticeNoiseAhead in scd_train), converted to
// reals only then (post-processing).
void add_lattice_release(VectorXd& v, const std::int64_t* noisy,
                         const random::NoiseLattice& lattice, double clip) {
  const double unit = std::ldexp(clip, -lattice.frac_bits);
  for (Index k = 0; k < v.size(); ++k) v[k] += static_cast<double>(noisy[k]) * unit;
}

}  // namespace

void scd_apply_units(VectorXd& v, const std::int64_t* units, Index t, const ScdParams& p) {
  const Index m = v.size();
  if (lattice_noise(p)) {
    // The released update: the exact sum rounded to the noise lattice C 2^-k plus exact
    // discrete Gaussian noise (random.hpp, noise_lattice; draws t m + k of the noise stream),
    // converted to reals only then (post-processing).
    const random::NoiseLattice lattice =
        random::noise_lattice(lattice_sigma(p), static_cast<std::uint64_t>(m));
    std::vector<std::int64_t> noisy(units, units + m);
    random::add_lattice_noise(p.key, p.noise_stream, static_cast<std::uint64_t>(t) * m,
                              static_cast<std::size_t>(m), lattice, noisy.data(), 1);
    add_lattice_release(v, noisy.data(), lattice, p.clip);
    return;
  }
  VectorXd update(m);
  fixed::to_real(units, m, fixed::Scale(p.clip), update.data());
  if (p.noise_std > 0.0) {  // noise multiplier above 2^39: floating-point noise
    v += update;
    random::normal(p.key, p.noise_stream, static_cast<std::uint64_t>(t) * m,
                   static_cast<std::size_t>(m), update.data(), 1);
    update *= p.noise_std;
  }
  v += update;
}

void scd_finish_alpha(double* alpha, const std::int64_t* last, Index count, Index steps,
                      Index offset, Index n_total, const ScdParams& p) {
  if (!lazy_alpha_noise(p) || count == 0) return;
  std::vector<double> noise(static_cast<std::size_t>(count));
  random::normal(p.key, p.noise_stream + 2,
                 static_cast<std::uint64_t>(steps) * static_cast<std::uint64_t>(n_total) +
                     static_cast<std::uint64_t>(offset),
                 static_cast<std::size_t>(count), noise.data(), 1);
  for (Index j = 0; j < count; ++j) {
    const std::int64_t missed = static_cast<std::int64_t>(steps) - last[j];
    if (missed > 0)
      alpha[j] += p.noise_std * std::sqrt(static_cast<double>(missed)) *
                  noise[static_cast<std::size_t>(j)];
  }
}

template <class Rows>
ScdResult scd_train(const Rows& X, const VecRef& y, const ScdParams& p) {
  validate(X, y, p);
  const Index n = X.rows(), m = X.cols();
  const Index steps = scd_step_count(n, m, p);
  // lambda N' with N' = n_scale (a public or noisy size) or the true N when n_scale = 0
  const double n_eff = p.n_scale > 0.0 ? p.n_scale : static_cast<double>(n);
  const double lam_n = p.lam * n_eff;

  ScdResult r;
  r.steps = steps;
  r.v = VectorXd::Zero(m);
  VectorXd& v = r.v;
  VectorXd noise_v(m);
  std::vector<double> noise_b;

  // ||x_j||^2 is computed when row j is visited (it is in cache then), and the visit re-checks
  // that the row is finite: no extra pass over X. A non-finite row is reported after the step.
  std::atomic<Index> bad_row{-1};
  // z_j = x_j^T v / (lambda N) and q_j = ||x_j||^2 from one visit of row j.
  auto visit = [&](Index j, double& q) {
    const double z = X.dot_sq(j, v, q) / lam_n;
    if (!std::isfinite(q) || !std::isfinite(z)) {  // a non-finite row, ||x_j||^2 > DBL_MAX, or v
      Index none = -1;
      bad_row.compare_exchange_strong(none, j);
    }
    return z;
  };
  auto check_rows = [&]() {
    const Index j = bad_row.load();
    if (j >= 0) bad_row_error(j);
  };

  auto record = [&](Index done, const VectorXd& theta, const VectorXd* alpha) {
    r.path_steps.push_back(static_cast<std::int64_t>(done));
    r.primal_path.push_back(primal_objective(X, y, p.loss, p.lam, theta));
    r.dual_path.push_back(alpha ? dual_objective(X, y, p.loss, p.lam, *alpha)
                                : std::numeric_limits<double>::quiet_NaN());
  };
  auto check_finite = [&](const VectorXd& vec, const char* what) {
    for (Index k = 0; k < vec.size(); ++k)
      if (!std::isfinite(vec[k]))
        checks::fail(std::string("DP-SCD produced a non-finite ") + what + " (overflow at entry " +
                     std::to_string(k) +
                     "): scale X and y, raise alpha, or set clip > 0 to bound the updates");
  };
  auto due = [&](Index t) {
    return p.record_every > 0 && ((t + 1) % p.record_every == 0 || t + 1 == steps);
  };

  if (p.variant == ScdVariant::primal) {
    const Columns<Rows> cols(X);
    VectorXd theta = VectorXd::Zero(m);
    VectorXd w = VectorXd::Zero(n);  // X theta
    for (Index t = 0; t < steps; ++t) {
      interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
      const std::vector<std::int64_t> coords = samplers::choice_without_replacement(
          p.key, p.batch_stream, static_cast<std::uint64_t>(t), m, p.batch_size);
      for (const std::int64_t k : coords) {
        double g = 0.0, h = 0.0;
        cols.for_each(k, [&](Index i, double x) {
          if (p.loss == Loss::squared) {
            g += x * (w[i] - y[i]);
            h += x * x;
          } else {
            const double e = 1.0 / (1.0 + std::exp(y[i] * w[i]));  // sigma(-y w)
            g += x * (-y[i] * e);
            h += x * x * e * (1.0 - e);
          }
        });
        const double grad = g / n_eff + p.lam * theta[k];
        const double hess = h / n_eff + p.lam;
        const double delta = scale_to(-grad / hess, p.clip);
        theta[k] += delta;
        cols.for_each(k, [&](Index i, double x) { w[i] += delta * x; });
      }
      if (p.noise_std > 0.0) {
        noise_b.resize(coords.size());
        random::normal(p.key, p.noise_stream, static_cast<std::uint64_t>(t) * m, coords.size(),
                       noise_b.data(), 1);
        for (std::size_t a = 0; a < coords.size(); ++a) {
          const double e = p.noise_std * noise_b[a];
          theta[coords[a]] += e;
          cols.for_each(coords[a], [&](Index i, double x) { w[i] += e * x; });
        }
      }
      if (due(t)) record(t + 1, theta, nullptr);
    }
    check_finite(theta, "coefficient");
    v = theta * lam_n;
    return r;
  }

  r.alpha = VectorXd::Zero(n);
  VectorXd& alpha = r.alpha;
  std::vector<std::int64_t> batch, next, perm;
  const double q_rate =
      p.rate > 0.0 ? p.rate : static_cast<double>(p.batch_size) / static_cast<double>(n);
  // Lazy per-row noise (scd.hpp, "Noise on alpha"): last[j] = the number of steps whose noise
  // row j's coordinate has received (CatchUp above).
  const bool noisy = p.noise_std > 0.0;
  const bool lazy = lazy_alpha_noise(p);  // hidden_alpha: no noise on alpha
  std::vector<std::int64_t> last(lazy ? static_cast<std::size_t>(n) : 0, 0);
  StepScratch scratch;
  std::vector<double>& zeta = scratch.zeta;
  std::vector<std::int64_t> units(static_cast<std::size_t>(m));
  const double sigma_prime = p.variant == ScdVariant::dual ? static_cast<double>(p.batch_size) : 1.0;

  if (p.variant == ScdVariant::scd) {
    // Non-private SDCA: one example per step along a permutation per epoch. A tight loop per
    // epoch (no per-step modulo or bookkeeping) that requests the rows a few steps ahead of use
    // (the order is known for the whole epoch). An update that is exactly zero (a hinge dual
    // variable staying at its bound) is skipped: adding +-0 leaves alpha_j and v unchanged bit
    // for bit (they start at +0 and, rounding to nearest, a sum is -0 only when both terms are),
    // so the run equals the plain loop's.
    const int newton = p.newton_steps;
    for (Index t0 = 0; t0 < steps; t0 += n) {
      perm = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                  static_cast<std::uint64_t>(t0 / n), n, n);
      const std::int64_t* order = perm.data();
      const Index len = std::min(n, steps - t0);
      for (Index k = 0; k < len; ++k) {
        if ((k & 255) == 0) interrupt::poll();  // Ctrl-C; steps of ~0.1 us: every 256
        if (k + 2 * kScdAhead < n) X.prefetch_extent(order[k + 2 * kScdAhead]);
        if (k + kScdAhead < n) {
          const Index ahead = order[k + kScdAhead];
          X.prefetch_all(ahead);
          prefetch_line(alpha.data() + ahead);
          prefetch_line(y.data() + ahead);
        }
        const Index j = order[k];
        double q;
        const double z = X.dot_sq(j, v, q) / lam_n;
        if (!std::isfinite(q) || !std::isfinite(z)) bad_row_error(j);
        const double step = dual_step(p.loss, alpha[j], y[j], q, z, 1.0, lam_n, newton);
        if (step != 0.0) {
          alpha[j] += step;
          X.axpy(j, step, v);
        }
        if (due(t0 + k)) record(t0 + k + 1, VectorXd(v / lam_n), &alpha);
      }
    }
    check_finite(v, "coefficient");
    check_finite(alpha, "dual variable");
    return r;
  }

  // Batch t + 1 is sampled at the start of step t (it depends on the key and t only) and its
  // rows requested into cache while step t visits its own (Upcoming).
  auto sample = [&](Index t, std::vector<std::int64_t>& out) {
    if (t >= steps) {
      out.clear();
    } else if (p.poisson) {
      out = samplers::poisson_sample(p.key, p.batch_stream, static_cast<std::uint64_t>(t), n,
                                     q_rate);
    } else {
      out = samplers::choice_without_replacement(p.key, p.batch_stream,
                                                 static_cast<std::uint64_t>(t), n, p.batch_size);
    }
  };
  Upcoming<Rows> upcoming{X, alpha.data(), y.data()};
  const bool exact = p.variant == ScdVariant::dual && p.clip > 0.0;
  // v's lattice noise drawn for blocks of steps (lattice_noise.hpp: the same draws t m + k)
  std::optional<random::LatticeNoiseAhead> noise_ahead;
  if (exact && lattice_noise(p))
    noise_ahead.emplace(p.key, p.noise_stream,
                        random::noise_lattice(lattice_sigma(p), static_cast<std::uint64_t>(m)),
                        static_cast<std::uint64_t>(m), steps, p.n_threads);
  sample(0, next);
  for (Index t = 0; t < steps; ++t) {
    interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
    // ---- the batch (sampled ahead) and the next one
    batch.swap(next);
    sample(t + 1, next);
    upcoming.set(next);
    const Index count = static_cast<Index>(batch.size());
    zeta.resize(batch.size());
    if (exact) {
      // bounded updates: the exact fixed-point sum, then v's noise (the distributed fit's step,
      // bit for bit)
      const Index bad = dual_batch_units(X, y, alpha.data(), last.data(), v, batch, t, 0, n, lam_n,
                                         p, scratch, units.data(), &upcoming);
      if (bad >= 0) bad_row_error(bad);
      if (noise_ahead) {
        noise_ahead->add(t, units.data());  // units: now the noisy units of step t
        add_lattice_release(v, units.data(), noise_ahead->lattice(), p.clip);
      } else
        scd_apply_units(v, units.data(), t, p);
    } else if (p.variant == ScdVariant::dual) {
      // the steps of noise each batch row missed since its last visit, before its update
      if (lazy) scratch.catch_up(batch, t, 0, n, alpha.data(), last.data(), p);
      // Every update from the same (alpha, v), so they are independent: one fused parallel pass
      // visits each row once (z_j, ||x_j||^2, zeta_j, then zeta_j x_j into the block's partial
      // sum while the row is in cache). Blocks are summed in order: bit-identical for any
      // thread count.
      parallel::deterministic_sum(
          count, m, p.n_threads,
          [&](Index a, VecMut acc) {
            upcoming.during(a, count);
            if (a + kPrefetchAhead < count)
              X.prefetch(batch[static_cast<std::size_t>(a + kPrefetchAhead)]);
            const Index j = batch[static_cast<std::size_t>(a)];
            double q;
            const double z = visit(j, q);
            const double step =
                scale_to(dual_step(p.loss, alpha[j], y[j], q, z, sigma_prime, lam_n, p.newton_steps),
                         p.clip);
            zeta[static_cast<std::size_t>(a)] = step;
            X.axpy(j, step, acc);
          },
          noise_v);
      check_rows();
      for (Index a = 0; a < count; ++a)
        alpha[batch[static_cast<std::size_t>(a)]] += zeta[static_cast<std::size_t>(a)];
      scratch.jitter(batch, t, 0, n, alpha.data(), p);
      v += noise_v;
    } else {  // seq: each update sees the previous ones
      if (lazy) scratch.catch_up(batch, t, 0, n, alpha.data(), last.data(), p);
      for (Index a = 0; a < count; ++a) {
        upcoming.during(a, count);
        if (a + kPrefetchAhead < count) X.prefetch(batch[static_cast<std::size_t>(a + kPrefetchAhead)]);
        const Index j = batch[static_cast<std::size_t>(a)];
        double q;
        const double z = visit(j, q);
        const double step = scale_to(dual_step(p.loss, alpha[j], y[j], q, z, 1.0, lam_n, p.newton_steps),
                                  p.clip);
        alpha[j] += step;
        X.axpy(j, step, v);
      }
      check_rows();
      scratch.jitter(batch, t, 0, n, alpha.data(), p);  // each row once per batch: after the loop
    }

    if (noisy && !exact) {
      // (this step's noise on alpha reaches each row at its next visit, or at the end)
      random::normal(p.key, p.noise_stream, static_cast<std::uint64_t>(t) * m,
                     static_cast<std::size_t>(m), noise_v.data(), 1);
      v += p.noise_std * noise_v;
    }
    if (due(t)) record(t + 1, VectorXd(v / lam_n), &alpha);
  }
  // alpha is returned (a non-released diagnostic): add the outstanding catch-up noise so that
  // it has the distribution of the hypothetical mechanism's alpha (address T N + j; nothing
  // with hidden_alpha).
  scd_finish_alpha(alpha.data(), last.data(), n, steps, 0, n, p);
  check_finite(v, "coefficient");
  check_finite(alpha, "dual variable");
  return r;
}

template ScdResult scd_train<DenseRows>(const DenseRows&, const VecRef&, const ScdParams&);
template ScdResult scd_train<CsrRows>(const CsrRows&, const VecRef&, const ScdParams&);
template Index scd_partial_step<DenseRows>(const DenseRows&, const VecRef&, double*,
                                           std::int64_t*, const VectorXd&, Index, Index, Index,
                                           const ScdParams&, std::int64_t*);
template double primal_objective<DenseRows>(const DenseRows&, const VecRef&, Loss, double,
                                            const VecRef&);
template double primal_objective<CsrRows>(const CsrRows&, const VecRef&, Loss, double,
                                          const VecRef&);
template double dual_objective<DenseRows>(const DenseRows&, const VecRef&, Loss, double,
                                          const VecRef&);
template double dual_objective<CsrRows>(const CsrRows&, const VecRef&, Loss, double,
                                        const VecRef&);

}  // namespace privlearn::linear
