#pragma once
// Exact sums of bounded contributions in fixed point, so that a batch sum does not depend on
// the order of its terms: not on the thread count, and not on how the rows are split among
// machines (a distributed fit adds the workers' partial sums and gets the single-machine sum
// bit for bit).
//
// A contribution vector u with |u_k| <= bound (DP-SGD's clipped gradient c x_i with
// ||c x_i|| <= C; DP-SCD's scaled update zeta_j x_j with |zeta_j| <= C, ||x_j|| <= 1) is
// stored as the integers trunc(u_k * 2^30 / bound) (kFractionBits = 30), rounded toward zero so
// that |stored value| <= |u_k| and the norm of a quantised contribution never exceeds the
// norm bound the privacy proof uses. Integer addition is associative, so any partition of the
// terms gives the same int64 sums; the sum of n terms fits while n < 2^32 (|term| <= 2^30 + 1).
// The real sum is then double(sum_k) * bound * 2^-30 (one rounding). The resolution,
// bound * 2^-30 ~ 1e-9 bound per term, is nine orders of magnitude below the noise
// (sigma * bound) the mechanisms add.
//
// Quantisation of a product a * x_k, a = c * (2^30 / bound) precomputed per row: t = a * x_k
// (one IEEE multiply, the same in the numpy twin), then trunc(t) as int64; a NaN term is 0 and
// terms beyond +-2^62 saturate (neither occurs for validated, clipped contributions).

#include <cmath>
#include <cstdint>
#include <vector>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"
#include "privlearn/types.hpp"

namespace privlearn::fixed {

inline constexpr int kFractionBits = 30;
// Largest number of terms whose sum is guaranteed to fit in int64.
inline constexpr std::int64_t kMaxTerms = std::int64_t{1} << 32;

// Multiplier from a real term to fixed-point units, and back.
struct Scale {
  double to_units;  // 2^30 / bound
  double to_real;   // bound * 2^-30 (exact)
  explicit Scale(double bound)
      : to_units(std::ldexp(1.0, kFractionBits) / bound),
        to_real(std::ldexp(bound, -kFractionBits)) {}
};

// trunc(t) as int64 (toward zero); NaN -> 0; saturated at +-2^62.
inline std::int64_t to_units(double t) noexcept {
  constexpr double kLimit = 0x1p62;
  if (t < kLimit && t > -kLimit) return static_cast<std::int64_t>(t);
  if (t != t) return 0;
  return t > 0 ? (std::int64_t{1} << 62) : -(std::int64_t{1} << 62);
}

// acc += to_units(t), as modular (two's complement) int64 addition: exact whenever the final
// sum fits, whatever the order, and never undefined behaviour.
inline void add_units(std::int64_t& acc, double t) noexcept {
  acc = static_cast<std::int64_t>(static_cast<std::uint64_t>(acc) +
                                  static_cast<std::uint64_t>(to_units(t)));
}

// add_units for a term known to satisfy |t| < 2^31 (then trunc(t) fits int32, and NaN cannot
// occur): the same integer without the range branches, so loops over a row vectorise.
inline void add_small_units(std::int64_t& acc, double t) noexcept {
  acc = static_cast<std::int64_t>(
      static_cast<std::uint64_t>(acc) +
      static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(t))));
}
// Whether every term a * x_k of a row with squared norm q (computed) satisfies |a x_k| < 2^31:
// |a x_k| <= |a| sqrt(q) up to ~100 ulps (the rounding of q, its root and the products), far
// inside the 3% margin below 2^31 left here. True for every term of a unit-norm row with
// |a| <= 2^30 (an update |zeta| <= C in units of C 2^-30).
inline constexpr double kSmallTermsBound = 0x1.fp30;
inline bool small_terms(double a, double q) noexcept {
  return std::fabs(a) * std::sqrt(q) < kSmallTermsBound;  // false for NaN / inf
}
// The same test from a computed bound |a| ||x|| (a ScaledNorm's value()).
inline bool small_terms_bound(double a_norm) noexcept { return a_norm < kSmallTermsBound; }

// out[k] = double(sum[k]) * scale.to_real.
inline void to_real(const std::int64_t* sum, Index dim, const Scale& scale, double* out) {
  for (Index k = 0; k < dim; ++k) out[k] = static_cast<double>(sum[k]) * scale.to_real;
}

// out[0..dim) = sum over terms r in [0, count) of add_term(r, acc) (each adds its fixed-point
// units to acc, an int64 array of length dim). The result does not depend on the thread count.
// add_term must not throw. `work` estimates count * (entries per term): the thread count is
// parallel::threads_for(n_threads, work * kNsPerEntry) (parallel.hpp: one thread unless every
// thread gets enough work to amortise a wake-up on a busy machine).
template <class AddTerm>
void sum(Index count, Index dim, int n_threads, double work, AddTerm&& add_term,
         std::int64_t* out) {
  checks::require(count < kMaxTerms, "too many terms for an exact fixed-point sum (>= 2^32)");
  for (Index k = 0; k < dim; ++k) out[k] = 0;
  if (count == 0) return;
  const int threads = parallel::threads_for(n_threads, work * parallel::kNsPerEntry);
  if (threads <= 1) {
    for (Index r = 0; r < count; ++r) add_term(r, out);
    return;
  }
  std::vector<std::int64_t> partial(static_cast<std::size_t>(threads) * dim, 0);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel num_threads(threads)
  {
    std::int64_t* acc = partial.data() + static_cast<std::size_t>(omp_get_thread_num()) * dim;
#pragma omp for schedule(dynamic, 64) nowait
    for (Index r = 0; r < count; ++r) add_term(r, acc);
  }
#endif
  for (int t = 0; t < threads; ++t)
    for (Index k = 0; k < dim; ++k)
      out[k] = static_cast<std::int64_t>(
          static_cast<std::uint64_t>(out[k]) +
          static_cast<std::uint64_t>(partial[static_cast<std::size_t>(t) * dim + k]));
}

}  // namespace privlearn::fixed
