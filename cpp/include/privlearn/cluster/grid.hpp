#pragma once
// Grids for the DP k-means of Chaturvedi, Nguyen & Xu (2021), Section 4: the offset set of
// Claim 4.1 and the enumeration of the grid points within a threshold radius of each point.
//
// A grid of unit length u is u * Z^p. A point y has cell b = floor(y / u) and fraction
// f = y / u - b in [0, 1)^p. The grid point u (b + z) lies within distance r of y iff
// sum_j (z_j - f_j)^2 <= (r / u)^2. Since min over f_j in [0, 1] of |z_j - f_j| is
// dist(z_j, [0, 1]) = max(0, -z_j, z_j - 1), every such z lies in the offset set
//     O(p, rho) = { z in Z^p : sum_j dist(z_j, [0, 1])^2 <= rho^2 },  rho = r / u,
// which does not depend on y (the role of Claim 4.1's set; ours is the exact superset, smaller
// than the paper's L1 bound). Enumerating O and keeping the z that pass the exact distance
// check gives exactly the grid points within r: no misses and no false positives.

#include <cstdint>
#include <vector>

#include "privlearn/types.hpp"

namespace privlearn::cluster {

// Largest projected dimension accepted by the grid routines (the offset set grows like
// (2 pi e)^(p/2) / grid_factor^p; beyond this the enumeration is not practical anyway).
inline constexpr Index kMaxGridDim = 16;

// The offset set O(p, rho) in lexicographic order, as a (|O|, p) row-major int32 array.
// Throws std::invalid_argument when p is outside [1, kMaxGridDim], rho <= 0 or |O| would exceed
// max_offsets.
std::vector<std::int32_t> grid_offsets(Index p, double rho, Index max_offsets = 50'000'000);

// Coverage incidence of one grid: for every row y_i of Y (n, p), the grid points u * g with
// ||y_i - u g|| <= r. Grid points get ids 0, 1, ... in order of first discovery (points in row
// order, each point's offsets in the lexicographic order of grid_offsets), so the ids do not
// depend on the number of threads. Phase 1 (the distance checks) runs in parallel over fixed
// blocks of points; the numbering is sequential. with_reverse = false leaves grid_ptr and
// grid_point empty.
struct GridCover {
  Index dim = 0;
  double unit = 0.0;
  double radius = 0.0;
  std::vector<std::int32_t> coords;      // (n_grid, dim) integer coordinates g
  std::vector<std::int64_t> point_ptr;   // CSR point -> grid ids, length n + 1
  std::vector<std::int32_t> point_grid;  // ids, each point's list in discovery order
  std::vector<std::int64_t> grid_ptr;    // CSR grid id -> points, length n_grid + 1 (optional)
  std::vector<std::int32_t> grid_point;  // point indices, increasing within each list (optional)
  Index n_grid() const noexcept { return dim == 0 ? 0 : static_cast<Index>(coords.size()) / dim; }
};

GridCover grid_cover(const MatRef& Y, double radius, double unit,
                     const std::vector<std::int32_t>& offsets, int n_threads,
                     bool with_reverse = true);

}  // namespace privlearn::cluster
