#pragma once
// Statistics of the private LSH-tree coreset of DPKMeans(method="lsh") (python/privlearn/
// cluster/lsh_coreset.py), after the prefix-tree idea of Chang, Ghazi, Kumar & Manurangsi
// (2021), "Locally private k-means in one round" (Section 3: a tree of LSH prefixes, a node
// kept when its noisy count clears a threshold, the leaves' noisy counts and sums as a
// weighted coreset).
//
// Two row passes, both deterministic per row (a partition of the rows, e.g. the chunks of a
// Dask array, gets the bits of the whole array):
//   * lsh_codes: the hash code of every row, bit (depth - 1 - j) = [<x - c, h_j> > t_j], the
//     dot product summed over the columns in order;
//   * clipped_cluster_sums: per cell, the row count and the exact fixed-point sums of the rows
//     moved to the centre c and projected onto the ball B(0, r) (a per-row map: sensitivity r).
// Fixed point: the parts of python/privlearn/fixed_point.py (q = trunc(v 2^(52 - e)) as int64,
// hi = q >> 26, lo = q & (2^26 - 1)), so the numpy twin (privlearn.reference.cluster) and a
// distributed fit get the same integers.

#include <cstdint>
#include <vector>

#include "privlearn/types.hpp"

namespace privlearn::cluster {

// Largest code length (bits of one uint64 code word).
inline constexpr Index kMaxCodeBits = 64;

// Hash codes of the rows of X (n, d): H is (depth, d), thresholds has depth entries, centre d.
// Throws std::invalid_argument on mismatched shapes or depth outside [1, kMaxCodeBits].
std::vector<std::uint64_t> lsh_codes(const MatRef& X, const VecRef& centre, const MatRef& H,
                                     const VecRef& thresholds, int n_threads);

// Per-cell statistics of the rows of X moved to the centre and projected onto B(0, radius):
// labels[i] in [0, n_cells) or -1 (row not counted). exponent is fixed_point_exponent(radius).
struct CellSums {
  Index n_cells = 0;
  Index dim = 0;
  std::vector<std::int64_t> counts;  // n_cells
  std::vector<std::int64_t> hi;      // (n_cells, dim) row-major
  std::vector<std::int64_t> lo;      // (n_cells, dim)
};

CellSums clipped_cluster_sums(const MatRef& X, const std::int64_t* labels, Index n_cells,
                              const VecRef& centre, double radius, int exponent, int n_threads);

// Index of the nearest row of C (k, d) for every row of X (squared distances summed over the
// columns in order; ties: the lowest index). Throws std::invalid_argument on a shape mismatch,
// an empty C or a non-finite distance.
std::vector<std::int64_t> nearest_centres(const MatRef& X, const MatRef& C, int n_threads);

}  // namespace privlearn::cluster
