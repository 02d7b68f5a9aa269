// Private greedy max cover on grids (see privlearn/cluster/maxcover.hpp).

#include "privlearn/cluster/maxcover.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "privlearn/parallel.hpp"

#include "privlearn/checks.hpp"

namespace privlearn::cluster {

namespace {

// Hands the heap's free memory back to the system (glibc keeps the freed per-block vectors of
// grid_cover in its arenas, so the next radius would start above the previous one's peak).
// Memory only: no effect on any result.
inline void release_free_memory() noexcept {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Covers of the grid points and the class sizes size[c] = #{g : cover[g] = c}. Only these
// integers determine the picks (a class member is the j-th smallest grid id of the class), so
// the order in which the decrements are applied, and their split over threads, is irrelevant.
struct CoverState {
  std::vector<std::int32_t> cover;
  std::vector<std::int64_t> size;
  std::int64_t cmax = 0;

  explicit CoverState(const GridCover& gc) {
    cover.assign(static_cast<std::size_t>(gc.n_grid()), 0);
    for (std::int32_t g : gc.point_grid) ++cover[static_cast<std::size_t>(g)];
    for (std::int32_t c : cover) cmax = std::max<std::int64_t>(cmax, c);
    size.assign(static_cast<std::size_t>(cmax) + 1, 0);
    for (std::int32_t c : cover) ++size[static_cast<std::size_t>(c)];
  }
};

// Hash of p int32 coordinates (FNV-1a, then a 64-bit finaliser).
inline std::uint64_t coord_hash(const std::int32_t* c, Index p) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (Index j = 0; j < p; ++j) {
    h ^= static_cast<std::uint32_t>(c[j]);
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

// Grid id of the coordinates z, or -1 (open addressing over the ids, load factor <= 1/2).
class CoordIndex {
 public:
  explicit CoordIndex(const GridCover& gc) : gc_(&gc) {
    const Index n_grid = gc.n_grid();
    std::size_t cap = 16;
    while (cap < 2 * static_cast<std::size_t>(n_grid)) cap *= 2;
    slots_.assign(cap, -1);
    mask_ = cap - 1;
    const Index p = gc.dim;
    for (Index g = 0; g < n_grid; ++g) {
      std::size_t s = coord_hash(gc.coords.data() + g * p, p) & mask_;
      while (slots_[s] >= 0) s = (s + 1) & mask_;
      slots_[s] = static_cast<std::int32_t>(g);
    }
  }
  std::int64_t find(const std::int32_t* z) const noexcept {
    const Index p = gc_->dim;
    std::size_t s = coord_hash(z, p) & mask_;
    while (slots_[s] >= 0) {
      if (std::equal(z, z + p, gc_->coords.data() + static_cast<std::ptrdiff_t>(slots_[s]) * p))
        return slots_[s];
      s = (s + 1) & mask_;
    }
    return -1;
  }

 private:
  const GridCover* gc_;
  std::vector<std::int32_t> slots_;
  std::size_t mask_ = 0;
};

// The points by grid cell floor(y / u) (cells numbered by first discovery, points increasing
// within a cell), to find the points within r of a grid point g: a point of cell b can only be
// covered by g = b + z for z in the offset set, so the candidates are the cells g - z.
class CellIndex {
 public:
  CellIndex(const MatRef& Y, double unit) : p_(Y.cols()) {
    const Index n = Y.rows();
    std::vector<std::int32_t> cell_of(static_cast<std::size_t>(n));
    std::size_t cap = 16;
    while (cap < 2 * static_cast<std::size_t>(n)) cap *= 2;
    slots_.assign(cap, -1);
    mask_ = cap - 1;
    std::int32_t b[kMaxGridDim];
    std::vector<std::int64_t> count;
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < p_; ++j) b[j] = static_cast<std::int32_t>(std::floor(Y(i, j) / unit));
      std::int64_t id = find(b);
      if (id < 0) {
        id = static_cast<std::int64_t>(count.size());
        cells_.insert(cells_.end(), b, b + p_);
        count.push_back(0);
        std::size_t s = coord_hash(b, p_) & mask_;
        while (slots_[s] >= 0) s = (s + 1) & mask_;
        slots_[s] = static_cast<std::int32_t>(id);
      }
      cell_of[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(id);
      ++count[static_cast<std::size_t>(id)];
    }
    ptr_.assign(count.size() + 1, 0);
    for (std::size_t c = 0; c < count.size(); ++c) ptr_[c + 1] = ptr_[c] + count[c];
    points_.resize(static_cast<std::size_t>(n));
    std::vector<std::int64_t> fill(ptr_.begin(), ptr_.end() - 1);
    for (Index i = 0; i < n; ++i) {
      const auto c = static_cast<std::size_t>(cell_of[static_cast<std::size_t>(i)]);
      points_[static_cast<std::size_t>(fill[c]++)] = static_cast<std::int32_t>(i);
    }
  }
  std::int64_t find(const std::int32_t* b) const noexcept {
    std::size_t s = coord_hash(b, p_) & mask_;
    while (slots_[s] >= 0) {
      if (std::equal(b, b + p_, cells_.data() + static_cast<std::ptrdiff_t>(slots_[s]) * p_))
        return slots_[s];
      s = (s + 1) & mask_;
    }
    return -1;
  }
  const std::int32_t* begin(std::int64_t c) const noexcept {
    return points_.data() + ptr_[static_cast<std::size_t>(c)];
  }
  const std::int32_t* end(std::int64_t c) const noexcept {
    return points_.data() + ptr_[static_cast<std::size_t>(c) + 1];
  }

 private:
  Index p_;
  std::vector<std::int32_t> cells_;
  std::vector<std::int32_t> slots_;
  std::size_t mask_ = 0;
  std::vector<std::int64_t> ptr_;
  std::vector<std::int32_t> points_;
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
  checks::require(exact_greedy || static_cast<bool>(params.select),
                  "maxcover: a finite eps_pick needs the class selection (select)");
  std::vector<std::int64_t> sizes;
  parallel::check_threads(params.n_threads);

  MaxCoverResult res;
  res.centers.resize(n_levels * params.picks, p);
  Index out = 0;
  for (Index l = 0; l < n_levels; ++l) {
    if (l > 0) release_free_memory();  // the previous radius's cover
    const double radius = params.radii[static_cast<std::size_t>(l)];
    const double unit = params.grid_factor * radius / std::sqrt(static_cast<double>(p));
    const double m_real = std::floor((1.0 + radius) / unit) + 1.0;
    checks::require(m_real < 1e9, "radius too small for the grid (unit below 1e-9)");
    const auto m = static_cast<std::int64_t>(m_real);
    const std::vector<std::int32_t> offsets =
        grid_offsets(p, radius / unit, params.max_offsets);
    res.n_offsets.push_back(static_cast<std::int64_t>(offsets.size()) / p);
    const GridCover gc = grid_cover(Y, radius, unit, offsets, params.n_threads, false);
    release_free_memory();  // grid_cover's work arrays
    const CellIndex cells(Y, unit);
    const Index n_off = static_cast<Index>(offsets.size()) / p;
    const double r2 = radius * radius;
    res.n_grid.push_back(gc.n_grid());
    CoverState st(gc);
    std::vector<std::uint8_t> covered(static_cast<std::size_t>(n), 0);
    std::unique_ptr<CoordIndex> lookup;  // built on the first remainder pick
    const Index n_grid = gc.n_grid();
    std::vector<std::int32_t> fresh;  // newly covered points of a pick
    const Index chunk = 1 << 16;      // grid ids per block of the member search
    const Index n_chunks = (n_grid + chunk - 1) / chunk;
    std::vector<std::int64_t> chunk_count(static_cast<std::size_t>(n_chunks));
    // The member search of a pick reads n_grid covers (~kNsPerEntry each): one thread below
    // parallel::kMinThreadWorkNs per thread (a few million grid points). One region per pick,
    // not one around the pick loop: each pick depends on the covers the previous one changed,
    // so a persistent region would still need a barrier per pick (the cost the policy avoids).
    const int threads =
        parallel::threads_for(params.n_threads, static_cast<double>(n_grid) * parallel::kNsPerEntry);

    for (Index t = 0; t < params.picks; ++t) {
      interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
      const auto row = static_cast<std::uint64_t>(l * params.picks + t);
      std::int64_t choice = 0;  // 0: uniform remainder, c >= 1: class c
      if (exact_greedy) {
        choice = st.cmax;
      } else {
        sizes.assign(st.size.begin(), st.size.begin() + st.cmax + 1);
        choice = params.select(l, row, m, sizes);
        checks::require(choice >= 0 && choice <= st.cmax &&
                            (choice == 0 || st.size[static_cast<std::size_t>(choice)] > 0),
                        "maxcover: the class selection returned an empty class");
      }
      random::RowCursor cursor(params.key, params.stream, row, kMemberOffset);
      std::int64_t picked = -1;  // grid id, or -1 for a grid point with zero cover
      if (choice > 0) {
        // the j-th smallest grid id with cover == choice: counts per fixed chunk of ids, then a
        // scan of the chunk that holds it
        const auto n_choice =
            static_cast<std::uint64_t>(st.size[static_cast<std::size_t>(choice)]);
        const auto j = static_cast<std::int64_t>(cursor.next_below(n_choice));
        const auto want = static_cast<std::int32_t>(choice);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && n_chunks >= 4)
#endif
        for (Index b = 0; b < n_chunks; ++b) {
          std::int64_t c = 0;
          for (Index g = b * chunk; g < std::min(n_grid, (b + 1) * chunk); ++g)
            c += st.cover[static_cast<std::size_t>(g)] == want;
          chunk_count[static_cast<std::size_t>(b)] = c;
        }
        std::int64_t rest = j;
        Index b = 0;
        while (rest >= chunk_count[static_cast<std::size_t>(b)])
          rest -= chunk_count[static_cast<std::size_t>(b++)];
        for (Index g = b * chunk;; ++g) {
          if (st.cover[static_cast<std::size_t>(g)] != want) continue;
          if (rest-- == 0) {
            picked = g;
            break;
          }
        }
        for (Index d = 0; d < p; ++d)
          res.centers(out, d) =
              unit * static_cast<double>(gc.coords[static_cast<std::size_t>(picked * p + d)]);
      } else {
        // a uniform grid point of the cube with zero cover (rejection: redraw while covered)
        std::int32_t z[kMaxGridDim];
        while (true) {
          for (Index d = 0; d < p; ++d)
            z[d] = static_cast<std::int32_t>(
                static_cast<std::int64_t>(
                    cursor.next_below(static_cast<std::uint64_t>(2 * m + 1))) -
                m);
          std::int64_t g = -1;
          if (n_grid > 0) {
            if (!lookup) lookup = std::make_unique<CoordIndex>(gc);
            g = lookup->find(z);
          }
          if (g < 0 || st.cover[static_cast<std::size_t>(g)] == 0) break;
        }
        for (Index d = 0; d < p; ++d) res.centers(out, d) = unit * static_cast<double>(z[d]);
      }
      std::int64_t newly = 0;
      if (picked >= 0) {
        // the still uncovered points within r of g (the distance check of grid_cover, with
        // the same operations), in any order: only the covers matter
        fresh.clear();
        const std::int32_t* g = gc.coords.data() + picked * p;
        std::int32_t b[kMaxGridDim];
        for (Index o = 0; o < n_off; ++o) {
          for (Index d = 0; d < p; ++d) b[d] = g[d] - offsets[static_cast<std::size_t>(o * p + d)];
          const std::int64_t cell = cells.find(b);
          if (cell < 0) continue;
          for (const std::int32_t* x = cells.begin(cell); x != cells.end(cell); ++x) {
            if (covered[static_cast<std::size_t>(*x)]) continue;
            double s = 0.0;
            for (Index d = 0; d < p; ++d) {
              const double dd = Y(*x, d) - unit * static_cast<double>(g[d]);
              s += dd * dd;
            }
            if (s <= r2) {
              covered[static_cast<std::size_t>(*x)] = 1;
              fresh.push_back(*x);
            }
          }
        }
        newly = static_cast<std::int64_t>(fresh.size());
        for (std::int32_t x : fresh)
          for (std::int64_t e = gc.point_ptr[static_cast<std::size_t>(x)];
               e < gc.point_ptr[static_cast<std::size_t>(x) + 1]; ++e) {
            const std::int32_t c =
                st.cover[static_cast<std::size_t>(gc.point_grid[static_cast<std::size_t>(e)])]--;
            --st.size[static_cast<std::size_t>(c)];
            ++st.size[static_cast<std::size_t>(c) - 1];
          }
        while (st.cmax > 0 && st.size[static_cast<std::size_t>(st.cmax)] == 0) --st.cmax;
      }
      res.level.push_back(l);
      res.covered.push_back(newly);
      res.remainder.push_back(choice == 0 ? 1 : 0);
      ++out;
    }
  }
  release_free_memory();  // the last radius's cover
  return res;
}

}  // namespace privlearn::cluster
