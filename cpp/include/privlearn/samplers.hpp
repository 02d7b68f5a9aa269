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
// Gaps between inclusions are geometric: with x_j = log(1 - uniform(row(index, j))) / log1p(-q)
// for j = 0, 1, ..., the next included index is pos + floor(x_j) + 1 (pos starts at -1); the
// walk stops at the first index >= population. Each element is then included independently
// with probability q (up to the rounding of log, ~1e-16 relative).
std::vector<std::int64_t> poisson_sample(const random::Key& key, std::uint64_t stream,
                                         std::uint64_t index, std::int64_t population, double q);

// Poisson subsampling as a mask, O(population): element e is included iff
// uniform(row(index, e)) < q.
void poisson_mask(const random::Key& key, std::uint64_t stream, std::uint64_t index,
                  std::int64_t population, double q, bool* out, int n_threads);

}  // namespace privlearn::samplers
