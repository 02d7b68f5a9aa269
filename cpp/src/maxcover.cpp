// Private greedy max cover on grids (see privlearn/cluster/maxcover.hpp).

#include "privlearn/cluster/maxcover.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "privlearn/checks.hpp"

namespace privlearn::cluster {

namespace {

// raw(row, offset) with a one-block cache (row addressing of privlearn/random.hpp).
class RowReader {
 public:
  RowReader(const random::Key& key, std::uint64_t stream) : key_(key), stream_(stream) {}
  std::uint64_t raw(std::uint64_t row, std::uint64_t offset) noexcept {
    const std::uint64_t block = (row << 32) + (offset >> 3);
    if (block != cached_) {
      random::chacha20_block(key_, block, stream_, words_);
      cached_ = block;
    }
    const std::uint64_t q = offset & 7u;
    return static_cast<std::uint64_t>(words_[2 * q]) |
           (static_cast<std::uint64_t>(words_[2 * q + 1]) << 32);
  }
  double gumbel(std::uint64_t row, std::uint64_t offset) noexcept {
    const double u = (static_cast<double>(raw(row, offset) >> 12) + 0.5) * 0x1.0p-52;
    return -std::log(-std::log(u));
  }

 private:
  random::Key key_;
  std::uint64_t stream_;
  std::uint64_t cached_ = ~std::uint64_t{0};
  std::uint32_t words_[16];
};

// log(expm1(x)) for x > 0, without overflow.
inline double log_expm1(double x) noexcept {
  return x > 30.0 ? x + std::log1p(-std::exp(-x)) : std::log(std::expm1(x));
}

struct Buckets {
  std::vector<std::vector<std::int32_t>> members;  // members[c]: grid ids with cover c
  std::vector<std::int64_t> cover;
  std::vector<std::int64_t> pos;
  std::int64_t cmax = 0;

  explicit Buckets(const GridCover& gc) {
    const Index n_grid = gc.n_grid();
    cover.resize(static_cast<std::size_t>(n_grid));
    pos.resize(static_cast<std::size_t>(n_grid));
    for (Index g = 0; g < n_grid; ++g) {
      cover[static_cast<std::size_t>(g)] =
          gc.grid_ptr[static_cast<std::size_t>(g) + 1] - gc.grid_ptr[static_cast<std::size_t>(g)];
      cmax = std::max(cmax, cover[static_cast<std::size_t>(g)]);
    }
    members.resize(static_cast<std::size_t>(cmax) + 1);
    for (Index g = 0; g < n_grid; ++g) {
      auto& b = members[static_cast<std::size_t>(cover[static_cast<std::size_t>(g)])];
      pos[static_cast<std::size_t>(g)] = static_cast<std::int64_t>(b.size());
      b.push_back(static_cast<std::int32_t>(g));
    }
  }

  void decrement(std::int32_t g) {
    const auto gi = static_cast<std::size_t>(g);
    const std::int64_t c = cover[gi];
    auto& b = members[static_cast<std::size_t>(c)];
    const std::int32_t last = b.back();
    b[static_cast<std::size_t>(pos[gi])] = last;
    pos[static_cast<std::size_t>(last)] = pos[gi];
    b.pop_back();
    cover[gi] = c - 1;
    if (c - 1 > 0) {
      auto& nb = members[static_cast<std::size_t>(c - 1)];
      pos[gi] = static_cast<std::int64_t>(nb.size());
      nb.push_back(g);
    }
    while (cmax > 0 && members[static_cast<std::size_t>(cmax)].empty()) --cmax;
  }
};

}  // namespace

MaxCoverResult maxcover_candidates(const MatRef& Y, const MaxCoverParams& params) {
  const Index n = Y.rows(), p = Y.cols();
  checks::require(n >= 1, "Y must have at least one row");
  checks::require(p >= 1 && p <= kMaxGridDim, "Y must have between 1 and 16 columns");
  checks::all_finite(Y, "Y");
  for (Index i = 0; i < n; ++i)
    checks::require(Y.row(i).squaredNorm() <= 1.0 + 1e-9,
                    "row " + std::to_string(i) + " of Y lies outside the unit ball");
  checks::require(!params.radii.empty(), "radii must not be empty");
  for (double r : params.radii) {
    checks::positive(r, "radius");
    checks::require(r <= 4.0, "radii must be <= 4 (the unit ball has diameter 2)");
  }
  checks::positive(params.grid_factor, "grid_factor");
  checks::require(params.picks >= 1, "picks must be >= 1");
  checks::require(params.eps_pick > 0.0 && !std::isnan(params.eps_pick),
                  "eps_pick must be > 0 (or +inf)");
  const auto n_levels = static_cast<Index>(params.radii.size());
  checks::require(n_levels * params.picks < (Index{1} << 32), "too many picks");
  const bool exact_greedy = std::isinf(params.eps_pick);

  MaxCoverResult res;
  res.centers.resize(n_levels * params.picks, p);
  RowReader reader(params.key, params.stream);
  Index out = 0;
  for (Index l = 0; l < n_levels; ++l) {
    const double radius = params.radii[static_cast<std::size_t>(l)];
    const double unit = params.grid_factor * radius / std::sqrt(static_cast<double>(p));
    const double m_real = std::floor((1.0 + radius) / unit) + 1.0;
    checks::require(m_real < 1e9, "radius too small for the grid (unit below 1e-9)");
    const auto m = static_cast<std::int64_t>(m_real);
    const double log_grid = static_cast<double>(p) * std::log(static_cast<double>(2 * m + 1));
    const std::vector<std::int32_t> offsets =
        grid_offsets(p, radius / unit, params.max_offsets);
    res.n_offsets.push_back(static_cast<std::int64_t>(offsets.size()) / p);
    const GridCover gc = grid_cover(Y, radius, unit, offsets, params.n_threads);
    res.n_grid.push_back(gc.n_grid());
    Buckets buckets(gc);
    std::vector<std::uint8_t> covered(static_cast<std::size_t>(n), 0);
    std::vector<std::int32_t> lex;  // grid ids sorted by coordinates (built on first need)

    for (Index t = 0; t < params.picks; ++t) {
      const auto row = static_cast<std::uint64_t>(l * params.picks + t);
      std::int64_t choice = 0;  // 0: uniform remainder, c >= 1: class c
      if (exact_greedy) {
        choice = buckets.cmax;
      } else {
        double best = log_grid + reader.gumbel(row, 0);
        for (std::int64_t c = 1; c <= buckets.cmax; ++c) {
          const auto& b = buckets.members[static_cast<std::size_t>(c)];
          if (b.empty()) continue;
          const double v = std::log(static_cast<double>(b.size())) +
                           log_expm1(params.eps_pick * static_cast<double>(c)) +
                           reader.gumbel(row, static_cast<std::uint64_t>(c));
          if (v > best) {
            best = v;
            choice = c;
          }
        }
      }
      random::RowCursor cursor(params.key, params.stream, row, kMemberOffset);
      std::int64_t picked = -1;  // grid id, or -1 for a grid point with zero cover
      if (choice > 0) {
        std::vector<std::int32_t> cls = buckets.members[static_cast<std::size_t>(choice)];
        const auto j = static_cast<std::ptrdiff_t>(cursor.next_below(cls.size()));
        std::nth_element(cls.begin(), cls.begin() + j, cls.end());
        picked = cls[static_cast<std::size_t>(j)];
        for (Index d = 0; d < p; ++d)
          res.centers(out, d) =
              unit * static_cast<double>(gc.coords[static_cast<std::size_t>(picked * p + d)]);
      } else {
        std::int32_t z[kMaxGridDim];
        for (Index d = 0; d < p; ++d) {
          z[d] = static_cast<std::int32_t>(
              static_cast<std::int64_t>(cursor.next_below(static_cast<std::uint64_t>(2 * m + 1))) -
              m);
          res.centers(out, d) = unit * static_cast<double>(z[d]);
        }
        if (gc.n_grid() > 0) {
          if (lex.empty()) {
            lex.resize(static_cast<std::size_t>(gc.n_grid()));
            std::iota(lex.begin(), lex.end(), 0);
            std::sort(lex.begin(), lex.end(), [&](std::int32_t a, std::int32_t b) {
              return std::lexicographical_compare(
                  gc.coords.begin() + a * p, gc.coords.begin() + (a + 1) * p,
                  gc.coords.begin() + b * p, gc.coords.begin() + (b + 1) * p);
            });
          }
          auto it = std::lower_bound(lex.begin(), lex.end(), 0, [&](std::int32_t a, int) {
            return std::lexicographical_compare(gc.coords.begin() + a * p,
                                                gc.coords.begin() + (a + 1) * p, z, z + p);
          });
          if (it != lex.end() &&
              std::equal(z, z + p, gc.coords.begin() + static_cast<std::ptrdiff_t>(*it) * p))
            picked = *it;
        }
      }
      std::int64_t newly = 0;
      if (picked >= 0) {
        for (std::int64_t q = gc.grid_ptr[static_cast<std::size_t>(picked)];
             q < gc.grid_ptr[static_cast<std::size_t>(picked) + 1]; ++q) {
          const auto x = static_cast<std::size_t>(gc.grid_point[static_cast<std::size_t>(q)]);
          if (covered[x]) continue;
          covered[x] = 1;
          ++newly;
          for (std::int64_t e = gc.point_ptr[x]; e < gc.point_ptr[x + 1]; ++e)
            buckets.decrement(gc.point_grid[static_cast<std::size_t>(e)]);
        }
      }
      res.level.push_back(l);
      res.covered.push_back(newly);
      res.remainder.push_back(choice == 0 ? 1 : 0);
      ++out;
    }
  }
  return res;
}

}  // namespace privlearn::cluster
