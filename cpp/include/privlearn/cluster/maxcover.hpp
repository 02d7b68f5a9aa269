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
// Exact sampling (Claim 4.2): exp(eps c) = 1 + (exp(eps c) - 1), so the distribution is the
// mixture of "uniform over G_l" (total weight |G_l| = (2m + 1)^p) and "g with c(g) >= 1, weight
// expm1(eps c(g))". Grouping the explicit grid points by their cover c, a class c with N_c
// members has weight N_c expm1(eps c). The class (or the uniform remainder) is drawn by
// Gumbel-max over log weights; then a member uniformly.
//
// Random addresses (ChaCha20 rows of `stream`, row index = pick_row_base + l * picks + t):
//   Gumbel of class c (c >= 1) at row offset c, of the uniform remainder at offset 0, each
//     -log(-log(((raw >> 12) + 1/2) 2^-52)) (as privlearn.mechanisms.exponential);
//   the member: next_below(N_c) (exact rejection) from offset kMemberOffset; the member is the
//     j-th smallest grid id of the class;
//   a remainder pick: p coordinates next_below(2m + 1) - m, consumed in order from offset
//     kMemberOffset.
// eps_pick = +inf gives the non-private greedy (class = the largest cover; member as above).

#include <cstdint>
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
};

struct MaxCoverResult {
  RowMatrixXd centers;                 // (n_radii * picks, p) picked grid points u * g
  std::vector<std::int64_t> level;     // radius index of each pick
  std::vector<std::int64_t> covered;   // newly covered points of each pick (NOT private:
                                       // diagnostics for tests, never released)
  std::vector<std::uint8_t> remainder; // 1 when the pick came from the uniform remainder
  std::vector<std::int64_t> n_grid;    // grid points with non-zero cover, per radius
  std::vector<std::int64_t> n_offsets; // |O| per radius
};

// Y: (n, p) points in the closed unit ball (checked). Throws std::invalid_argument on bad input.
MaxCoverResult maxcover_candidates(const MatRef& Y, const MaxCoverParams& params);

}  // namespace privlearn::cluster
