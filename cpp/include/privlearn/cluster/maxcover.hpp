#pragma once
// Private thresholded max cover on grids (Chaturvedi, Nguyen & Xu 2021, Algorithm 3, with the
// exponential mechanism implemented as in Claim 4.2) and its candidate-set driver (Algorithm 2,
// steps over geometrically increasing radii).
//
// For each radius r_l (l = 0, 1, ...) on a grid of unit u_l = grid_factor * r_l / sqrt(p): every
// point starts uncovered; `picks` times, a grid point g is drawn with probability proportional
// to exp(eps_pick * c(g)), c(g) = the number of still-uncovered points within r_l of g (the
// Gupta-Ligett-McSherry-Roth-Talwar 2010 weights for unweighted set cover: sensitivity 1,
// monotone), over the whole grid cube G_l = {-m..m}^p * u_l, m = floor((1 + r_l) / u_l) + 1,
// which contains every grid point within r_l of the unit ball. Then the points it covers are
// marked covered.
//
// Exact sampling (issue 30, item 9): group the whole cube G_l by cover c = 0, 1, ..., cmax;
// class c has N_c members (N_0 = |G_l| - sum_{c>=1} N_c, |G_l| = (2m + 1)^p), so the class is
// drawn with probability N_c exp(eps c) / Z = N_c exp(-eps (cmax - c)) / Z', the form of the
// package's exact selection (privlearn.mechanisms._select: rational exponents, exact
// Bernoulli(exp(-gamma)) acceptance, no candidate ever at probability 0). The class draw is
// made by the caller's `select(level, row, m, sizes)` (sizes[c] = N_c for c = 1..cmax; sizes[0]
// unused), called from the picking thread; then a member uniformly.
//
// Random addresses (ChaCha20 rows of `stream`, row index = pick_row_base + l * picks + t):
//   the class: `select`'s own draws, words of row `row` below kMemberOffset (the Python side);
//   the member: next_below(N_c) (exact rejection) from offset kMemberOffset; the member is the
//     j-th grid point of the class in lexicographic order of its integer coordinates;
//   class 0: p coordinates next_below(2m + 1) - m, consumed in order from offset
//     kMemberOffset, redrawn while the point has a non-zero cover (exact rejection; such a
//     pick covers nothing new).
// eps_pick = +inf gives the non-private greedy (class = the largest cover; member as above).
//
// Memory (issue 30, item 6): per radius, only the grid points with non-zero cover are kept, as
// sorted packed coordinate keys with their covers, in slabs of the first coordinate built
// independently (in parallel; no (point, grid point) incidence is ever stored): a key is its
// low 16 bits (2 bytes) under a directory of its high bits (whole keys, 4 or 8 bytes, where
// that directory would hold more than max(n, 2^16) entries), a cover 1 byte (2 or 4 only in
// slabs whose largest cover needs it): about 3 bytes a grid point, plus the rows sorted by
// cell (about 12 bytes a row). After a pick, the grid points of each newly covered
// point are recomputed from the offset set with the distance check of the build (the same
// operations) and found by search. Coordinates that do not pack into 63 bits (many projected
// dimensions with a fine grid) fall back to grid_cover's full incidence, its ids renumbered in
// lexicographic order: the same picks, more memory.

#include <cstdint>
#include <functional>
#include <vector>

#include "privlearn/cluster/grid.hpp"
#include "privlearn/random.hpp"
#include "privlearn/types.hpp"

namespace privlearn::cluster {

inline constexpr std::uint64_t kMemberOffset = std::uint64_t{1} << 34;

struct MaxCoverParams {
  std::vector<double> radii;  // threshold radii, each in (0, 4]
  double grid_factor = 1.0;   // unit = grid_factor * radius / sqrt(p)
  Index picks = 1;            // picks per radius
  double eps_pick = 1.0;      // per-pick epsilon (> 0, may be +inf)
  random::Key key{};
  std::uint64_t stream = 0;
  Index max_offsets = 50'000'000;
  int n_threads = 0;
  // the class draw (required unless eps_pick is +inf): (level, row, m, sizes) -> class
  std::function<std::int64_t(std::int64_t, std::uint64_t, std::int64_t,
                             const std::vector<std::int64_t>&)>
      select;
};

struct MaxCoverResult {
  RowMatrixXd centers;                 // (n_radii * picks, p) picked grid points u * g
  std::vector<std::int64_t> level;     // radius index of each pick
  std::vector<std::int64_t> covered;   // newly covered points of each pick (NOT private:
                                       // diagnostics for tests, never released)
  std::vector<std::uint8_t> remainder; // 1 when the pick came from class 0 (zero cover)
  std::vector<std::int64_t> n_grid;    // grid points with non-zero cover, per radius
  std::vector<std::int64_t> n_offsets; // |O| per radius
};

// Y: (n, p) points in the closed unit ball (checked). Throws std::invalid_argument on bad input.
MaxCoverResult maxcover_candidates(const MatRef& Y, const MaxCoverParams& params);

}  // namespace privlearn::cluster
