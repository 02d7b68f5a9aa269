// Row passes of the private LSH-tree coreset (see privlearn/cluster/coreset.hpp).

#include "privlearn/cluster/coreset.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#include "privlearn/interrupt.hpp"
#include "privlearn/parallel.hpp"

namespace privlearn::cluster {

namespace {

constexpr int kFixedBits = 52;
constexpr int kHalfBits = 26;
constexpr std::int64_t kHalfMask = (std::int64_t{1} << kHalfBits) - 1;
constexpr Index kRowBlock = 1024;

// u = x - c, projected onto B(0, radius) when ||u|| > radius (the norm summed in order);
// false for a row with a non-finite entry (u is then not used).
bool centred_clipped(const double* x, const double* c, Index d, double radius, double* u) {
  double sq = 0.0;
  for (Index k = 0; k < d; ++k) {
    u[k] = x[k] - c[k];
    sq += u[k] * u[k];
  }
  if (!std::isfinite(sq)) return false;
  if (sq > radius * radius) {
    // one binade-safe scale; the slack keeps the projected norm at or below radius after
    // rounding (the fixed-point truncation toward zero only shrinks it further)
    const double scale = radius / std::sqrt(sq) * (1.0 - 0x1p-50);
    for (Index k = 0; k < d; ++k) u[k] *= scale;
  }
  return true;
}

}  // namespace

std::vector<std::uint64_t> lsh_codes(const MatRef& X, const VecRef& centre, const MatRef& H,
                                     const VecRef& thresholds, int n_threads) {
  const Index n = X.rows(), d = X.cols(), depth = H.rows();
  if (depth < 1 || depth > kMaxCodeBits)
    throw std::invalid_argument("lsh_codes: the code length must lie in [1, 64], got " +
                                std::to_string(depth));
  if (H.cols() != d || centre.size() != d || thresholds.size() != depth)
    throw std::invalid_argument("lsh_codes: H must be (depth, d), centre d, thresholds depth");
  std::vector<std::uint64_t> codes(static_cast<std::size_t>(n), 0);
  // <x - c, h_j> = <x, h_j> - <c, h_j>: the centre's products once, the rows' in column order
  std::vector<double> ch(static_cast<std::size_t>(depth), 0.0);
  for (Index j = 0; j < depth; ++j) {
    double s = 0.0;
    for (Index k = 0; k < d; ++k) s += centre[k] * H(j, k);
    ch[static_cast<std::size_t>(j)] = s;
  }
  const Index blocks = (n + kRowBlock - 1) / kRowBlock;
  for (Index k = 0; k < d; ++k)
    if (!std::isfinite(centre[k])) throw std::invalid_argument("lsh_codes: the centre must be finite");
  std::atomic<bool> bad{false};
  const int threads = parallel::threads_for(
      n_threads, static_cast<double>(n) * static_cast<double>(d * depth) * parallel::kNsPerEntry);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
  for (Index b = 0; b < blocks; ++b) {
    const Index lo = b * kRowBlock, hi = std::min(n, lo + kRowBlock);
    for (Index i = lo; i < hi; ++i) {
      const double* x = X.row(i).data();
      std::uint64_t code = 0;
      for (Index j = 0; j < depth; ++j) {
        const double* h = H.row(j).data();
        double s = 0.0;
        for (Index k = 0; k < d; ++k) s += x[k] * h[k];
        if (!std::isfinite(s)) bad.store(true, std::memory_order_relaxed);
        const bool bit = (s - ch[static_cast<std::size_t>(j)]) > thresholds[j];
        code = (code << 1) | static_cast<std::uint64_t>(bit);
      }
      codes[static_cast<std::size_t>(i)] = code;
    }
  }
  (void)threads;
  if (bad.load()) throw std::invalid_argument("lsh_codes: X or H has a non-finite entry");
  return codes;
}

CellSums clipped_cluster_sums(const MatRef& X, const std::int64_t* labels, Index n_cells,
                              const VecRef& centre, double radius, int exponent, int n_threads) {
  const Index n = X.rows(), d = X.cols();
  if (centre.size() != d)
    throw std::invalid_argument("clipped_cluster_sums: centre must have one entry per column");
  if (!(radius > 0.0) || !std::isfinite(radius))
    throw std::invalid_argument("clipped_cluster_sums: radius must be finite and > 0");
  if (n_cells < 0) throw std::invalid_argument("clipped_cluster_sums: n_cells must be >= 0");
  if (exponent > 1000 || !(radius < std::ldexp(1.0, exponent - 1)))
    throw std::invalid_argument(
        "clipped_cluster_sums: exponent must give one binade of headroom above the radius "
        "(fixed_point_exponent(radius)), got " + std::to_string(exponent));
  for (Index k = 0; k < d; ++k)
    if (!std::isfinite(centre[k]))
      throw std::invalid_argument("clipped_cluster_sums: the centre must be finite");
  for (Index i = 0; i < n; ++i)
    if (labels[i] < -1 || labels[i] >= n_cells)
      throw std::invalid_argument("clipped_cluster_sums: the label of row " + std::to_string(i) +
                                  " is outside [-1, n_cells)");  // never the label itself
  CellSums out;
  out.n_cells = n_cells;
  out.dim = d;
  const std::size_t cells = static_cast<std::size_t>(n_cells);
  const std::size_t width = static_cast<std::size_t>(d);
  out.counts.assign(cells, 0);
  out.hi.assign(cells * width, 0);
  out.lo.assign(cells * width, 0);
  // integer sums: any split of the rows among threads gives the same result; a thread gets its
  // own accumulators only when they are small next to its share of the rows
  const double work = static_cast<double>(n) * static_cast<double>(d) * 4.0 * parallel::kNsPerEntry;
  int threads = parallel::threads_for(n_threads, work);
  if (static_cast<double>(cells * width) * 16.0 > static_cast<double>(n * d)) threads = 1;
  const double to_units = std::ldexp(1.0, kFixedBits - exponent);
  const Index blocks = (n + kRowBlock - 1) / kRowBlock;
  std::atomic<bool> bad{false};
  auto add_rows = [&](Index b_lo, Index b_hi, std::int64_t* cnt, std::int64_t* shi,
                      std::int64_t* slo, std::vector<double>& u, bool poll) {
    for (Index b = b_lo; b < b_hi; ++b) {
      const Index lo = b * kRowBlock, hi = std::min(n, lo + kRowBlock);
      for (Index i = lo; i < hi; ++i) {
        const std::int64_t lab = labels[i];
        if (lab < 0) continue;
        if (!centred_clipped(X.row(i).data(), centre.data(), d, radius, u.data())) {
          bad.store(true, std::memory_order_relaxed);
          continue;
        }
        cnt[lab] += 1;
        std::int64_t* ph = shi + static_cast<std::size_t>(lab) * width;
        std::int64_t* pl = slo + static_cast<std::size_t>(lab) * width;
        for (Index k = 0; k < d; ++k) {
          const auto q = static_cast<std::int64_t>(std::trunc(u[k] * to_units));
          ph[k] += q >> kHalfBits;  // arithmetic shift (floor), as numpy's >> on int64
          pl[k] += q & kHalfMask;
        }
      }
      if (poll) interrupt::poll();  // only outside a parallel region (it may throw)
    }
  };
  if (threads <= 1) {
    std::vector<double> u(width);
    add_rows(0, blocks, out.counts.data(), out.hi.data(), out.lo.data(), u, true);
    if (bad.load()) throw std::invalid_argument("clipped_cluster_sums: X has a non-finite entry");
    return out;
  }
  std::vector<std::vector<std::int64_t>> pc(threads), ph(threads), pl(threads);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    pc[t].assign(cells, 0);
    ph[t].assign(cells * width, 0);
    pl[t].assign(cells * width, 0);
    std::vector<double> u(width);
    const Index per = (blocks + nt - 1) / nt;
    add_rows(std::min(blocks, t * per), std::min(blocks, (t + 1) * per), pc[t].data(),
             ph[t].data(), pl[t].data(), u, false);
  }
#endif
  if (bad.load()) throw std::invalid_argument("clipped_cluster_sums: X has a non-finite entry");
  for (int t = 0; t < threads; ++t) {
    if (pc[t].empty()) continue;
    for (std::size_t j = 0; j < cells; ++j) out.counts[j] += pc[t][j];
    for (std::size_t j = 0; j < cells * width; ++j) {
      out.hi[j] += ph[t][j];
      out.lo[j] += pl[t][j];
    }
  }
  return out;
}

std::vector<std::int64_t> nearest_centres(const MatRef& X, const MatRef& C, int n_threads) {
  const Index n = X.rows(), d = X.cols(), k = C.rows();
  if (k < 1) throw std::invalid_argument("nearest_centres: C must have at least one row");
  if (C.cols() != d) throw std::invalid_argument("nearest_centres: C must have X's columns");
  std::vector<std::int64_t> out(static_cast<std::size_t>(n), 0);
  std::atomic<bool> bad{false};
  const Index blocks = (n + kRowBlock - 1) / kRowBlock;
  const int threads = parallel::threads_for(
      n_threads, static_cast<double>(n) * static_cast<double>(d * k) * parallel::kNsPerEntry);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
  for (Index b = 0; b < blocks; ++b) {
    const Index lo = b * kRowBlock, hi = std::min(n, lo + kRowBlock);
    for (Index i = lo; i < hi; ++i) {
      const double* x = X.row(i).data();
      double best = 0.0;
      std::int64_t arg = 0;
      for (Index j = 0; j < k; ++j) {
        const double* c = C.row(j).data();
        double s = 0.0;
        for (Index q = 0; q < d; ++q) {
          const double diff = x[q] - c[q];
          s += diff * diff;
        }
        if (!std::isfinite(s)) bad.store(true, std::memory_order_relaxed);
        if (j == 0 || s < best) {
          best = s;
          arg = j;
        }
      }
      out[static_cast<std::size_t>(i)] = arg;
    }
  }
  (void)threads;
  if (bad.load())
    throw std::invalid_argument("nearest_centres: a squared distance is not finite");
  return out;
}

}  // namespace privlearn::cluster
