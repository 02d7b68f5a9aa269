#include "privlearn/lattice_noise.hpp"

#include <algorithm>

#include "privlearn/checks.hpp"

namespace privlearn::random {

LatticeNoiseAhead::LatticeNoiseAhead(const Key& key, std::uint64_t stream,
                                     const NoiseLattice& lattice, std::uint64_t dim, Index steps,
                                     int n_threads, Index max_steps)
    : key_(key), stream_(stream), lattice_(lattice), dim_(dim), steps_(steps),
      n_threads_(n_threads) {
  checks::require(dim >= 1 && steps >= 0 && max_steps >= 1,
                  "lattice noise ahead: needs dim >= 1, steps >= 0 and max_steps >= 1");
  const auto by_draws = static_cast<Index>(std::max<std::uint64_t>(1, kMaxDraws / dim));
  block_steps_ = std::min(max_steps, by_draws);
}

void LatticeNoiseAhead::add(Index t, std::int64_t* units) {
  if (t < first_ || t >= first_ + count_) {
    first_ = t;
    count_ = std::max<Index>(1, std::min(block_steps_, steps_ - t));
    draws_.resize(static_cast<std::size_t>(count_) * dim_);
    discrete_gaussian(key_, stream_, static_cast<std::uint64_t>(t) * dim_, draws_.size(),
                      lattice_.variance, draws_.data(), n_threads_);
  }
  add_drawn_lattice_noise(lattice_, draws_.data() + static_cast<std::size_t>(t - first_) * dim_,
                          static_cast<std::size_t>(dim_), units);
}

}  // namespace privlearn::random
