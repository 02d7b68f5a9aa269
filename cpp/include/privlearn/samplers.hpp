#pragma once
// Index samplers for mini-batches, addressed by an index (e.g. the iteration t) so any thread
// can recompute the batch of any iteration. Both draw from row `index` of the stream
// (privlearn/random.hpp).

#include <cstdint>
#include <vector>

#include "privlearn/random.hpp"

namespace privlearn::samplers {

// k distinct integers from [0, population) in the order of a partial Fisher-Yates shuffle:
// for j = 0..k-1, r = uniform integer in [0, population - j) (RowCursor::next_below, raws
// consumed in order), swap positions j and j + r, emit position j. k == population gives a
// uniformly random permutation. Memory O(min(population, k)).
std::vector<std::int64_t> choice_without_replacement(const random::Key& key, std::uint64_t stream,
                                                     std::uint64_t index, std::int64_t population,
                                                     std::int64_t k);

// Poisson subsampling in O(q * population) time: the sorted indices of the included elements.
//
// Address layout (version kPoissonLayoutVersion = 2; version 1 was one walk from element 0, so
// that a machine holding a slice of the rows could not produce its part of the sample): the
// population is cut into blocks of kPoissonBlock = 2^20 elements, and block b has its own
// geometric walk, reading raws row(index, b * 2^21 + j) for j = 0, 1, ... (a walk needs at most
// 2^20 + 1 raws: every raw moves it forward). With x_j = log(1 - uniform) / log1p(-q), the next
// included element is pos + floor(x_j) + 1 (pos starts at b * 2^20 - 1); the walk stops at the
// first element >= min(population, (b + 1) * 2^20). Each element is then included
// independently with probability q (up to the rounding of log, ~1e-16 relative), and any range
// of elements is sampled by walking only the blocks that meet it (poisson_sample_range), with
// the same result as the whole sample restricted to the range: a distributed fit whose workers
// hold slices of the rows samples exactly the single-machine batch. Population < 2^34.
inline constexpr std::int64_t kPoissonBlockLog2 = 20;
inline constexpr std::int64_t kPoissonBlock = std::int64_t{1} << kPoissonBlockLog2;
inline constexpr int kPoissonLayoutVersion = 2;
std::vector<std::int64_t> poisson_sample(const random::Key& key, std::uint64_t stream,
                                         std::uint64_t index, std::int64_t population, double q);
// The elements of poisson_sample(key, stream, index, population, q) in [lo, hi), sorted, in
// time O(q * (blocks meeting [lo, hi)) * 2^20). Requires 0 <= lo <= hi <= population.
std::vector<std::int64_t> poisson_sample_range(const random::Key& key, std::uint64_t stream,
                                               std::uint64_t index, std::int64_t population,
                                               double q, std::int64_t lo, std::int64_t hi);

// Poisson subsampling as a mask, O(population): element e is included iff
// uniform(row(index, e)) < q.
void poisson_mask(const random::Key& key, std::uint64_t stream, std::uint64_t index,
                  std::int64_t population, double q, bool* out, int n_threads);

}  // namespace privlearn::samplers
