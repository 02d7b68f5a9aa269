#pragma once
// The lattice noise of an iterative mechanism drawn ahead (issue 32, item 1): step t of a run
// releases dim coordinates with the discrete Gaussian draws t dim + k of its noise stream
// (random.hpp: add_lattice_noise). One discrete_gaussian call per step pays the call's set-up
// and leaves most of the sampler's sixteen-draw vector passes empty for small dim; drawing a
// block of steps at once gives the same integers (each draw has its own address) at the bulk
// rate. Used by the DP-SGD and dual DP-SCD trainers.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "privlearn/random.hpp"
#include "privlearn/types.hpp"

namespace privlearn::random {

class LatticeNoiseAhead {
 public:
  // Steps [0, steps) of dim draws each; a block holds at most max_steps steps and about
  // kMaxDraws draws (at least one step).
  LatticeNoiseAhead(const Key& key, std::uint64_t stream, const NoiseLattice& lattice,
                    std::uint64_t dim, Index steps, int n_threads, Index max_steps = 64);
  // add_lattice_noise(key, stream, t dim, dim, lattice, units, n_threads), bit for bit. Steps
  // are best requested in increasing order (a step outside the block drawn refills it from t).
  void add(Index t, std::int64_t* units);
  const NoiseLattice& lattice() const noexcept { return lattice_; }

  static constexpr std::size_t kMaxDraws = std::size_t{1} << 15;

 private:
  Key key_;
  std::uint64_t stream_;
  NoiseLattice lattice_;
  std::uint64_t dim_;
  Index steps_, block_steps_;
  int n_threads_;
  Index first_ = 0, count_ = 0;  // the steps [first_, first_ + count_) are drawn
  std::vector<std::int64_t> draws_;
};

}  // namespace privlearn::random
