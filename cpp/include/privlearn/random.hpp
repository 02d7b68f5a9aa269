#pragma once
// Counter-based random generation with ChaCha20 (RFC 8439 block function, 20 rounds), shared
// bit for bit with the pure-numpy reference (privlearn.reference.random).
//
// Layout of the 16-word ChaCha20 state (the original 64-bit counter / 64-bit stream layout):
//   words 0-3 "expand 32-byte k", words 4-11 the 256-bit key (little-endian words),
//   words 12-13 the 64-bit block counter (low, high), words 14-15 the 64-bit stream id.
//
// Addressing (DESIGN.md, "Randomness"). Every random quantity has an address that does not depend
// on the thread computing it, so results are identical for any number of threads:
//   word(w)      = block(key, counter = w / 16, stream)[w % 16]
//   raw(j)       = word(2j) | word(2j + 1) << 32            (64-bit draw j of the stream)
//   uniform(j)   = (raw(j) >> 11) * 2^-53                   in [0, 1), 53 random bits
//   row(i, j)    = 64-bit draw j of row i (i < 2^32, j < 2^35): words 2(j mod 8), 2(j mod 8)+1
//                  of block counter i * 2^32 + floor(j / 8), i.e. raw(i * 2^35 + j) in the
//                  unbounded index space; rows serve draws of variable length (rejection)
// Transforms (all fixed, documented in privlearn.random):
//   exponential(j) = -log(1 - uniform(j)) * scale
//   laplace(j)     = +/- exponential built from raw(j): magnitude from its top 53 bits, sign from
//                    its lowest bit (set = negative)
//   normal(i)      = Box-Muller on the pair (uniform(2p), uniform(2p + 1)), p = i / 2:
//                    r = sqrt(-2 log(1 - u1)), theta = 2 pi u2; even i -> r cos theta,
//                    odd i -> r sin theta
//   gamma(i)       = row i: integer shape k <= kGammaSumMaxShape (2^16) -> sum of k
//                    exponentials from row(i, 0..k-1), added in order (O(k) per draw);
//                    other shapes, including integers > 2^16 -> Marsaglia-Tsang (2000), O(1)
//                    expected per draw; attempt m uses row(i, o+3m),
//                    row(i, o+3m+1) (Box-Muller cosine normal) and row(i, o+3m+2) (uniform);
//                    shape < 1 is boosted: Gamma(a+1) * (1 - uniform(row(i, 0)))^(1/a), o = 1,
//                    otherwise o = 0.
//   l2_laplace(i)  = row i: radius Gamma(dim, 2/epsilon) from row(i, 0...) as gamma(), times
//                    the direction of dim Box-Muller normals from row(i, 2^34 + ...). The
//                    radius is a sum of dim exponentials for dim <= 2^16 and Marsaglia-Tsang
//                    above (before this change every integer shape up to 2^34 was a sum: draws for
//                    dim > 2^16 changed then).
//   discrete_gaussian(i) = the discrete Gaussian N_Z(0, s2) on the integers (Canonne, Kamath,
//                    Steinke 2020, Algorithm 3; von Neumann 1951 for the exponentials), sampled
//                    exactly from the 16-bit digit string of draw i: the words of blocks
//                    counter = i * 2^8 + b, b = 0, 1, ..., 255 (i < 2^56), each word as its low
//                    then its high half. See "Discrete Gaussian" below.

#include <array>
#include <cstddef>
#include <cstdint>

namespace privlearn::random {

using Key = std::array<std::uint32_t, 8>;

// Address space limits (see above).
inline constexpr std::uint64_t kRowCount = std::uint64_t{1} << 32;      // rows i < 2^32
inline constexpr std::uint64_t kRowLength = std::uint64_t{1} << 35;     // raws per row
inline constexpr std::uint64_t kDirectionOffset = std::uint64_t{1} << 34;  // l2_laplace
// Largest integer Gamma shape drawn as a sum of exponentials (larger: Marsaglia-Tsang).
inline constexpr std::uint64_t kGammaSumMaxShape = std::uint64_t{1} << 16;

// RFC 8439 block function: 16 output words.
void chacha20_block(const Key& key, std::uint64_t counter, std::uint64_t stream,
                    std::uint32_t out[16]) noexcept;

// n consecutive blocks starting at block `counter` (the counter wraps modulo 2^64), written
// block after block into out[16 * n]. Vectorised over 16 blocks at a time (AVX-512) or 8.
void chacha20_blocks(const Key& key, std::uint64_t counter, std::uint64_t stream, std::size_t n,
                     std::uint32_t* out) noexcept;

// Key from 32 bytes (little-endian words).
Key key_from_bytes(const std::uint8_t bytes[32]) noexcept;
// Deterministic expansion of an integer seed to a 256-bit key: the first 8 words of
// chacha20_block(all-zero key, counter = seed, stream = kSeedStream).
Key key_from_seed(std::uint64_t seed) noexcept;
inline constexpr std::uint64_t kSeedStream = 0x6465657320796b70ULL;  // "pky seed" little-endian
// Key from the operating system's entropy (getrandom / std::random_device).
Key key_from_os();

// ---- Bulk transforms over a contiguous address range -------------------------------------
// Each writes out[k] = transform(start + k) for k < n; n_threads <= 0 means the default.
// All are bit-identical for every thread count.
void words(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
           std::uint32_t* out, int n_threads);
void raws(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
          std::uint64_t* out, int n_threads);
void uniform(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n, double* out,
             int n_threads);
void normal(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n, double* out,
            int n_threads);
void exponential(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                 double scale, double* out, int n_threads);
void laplace(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
             double scale, double* out, int n_threads);
// Row-addressed draws: out[k] uses row start + k.
void gamma(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n, double shape,
           double scale, double* out, int n_threads);
// out is (n, dim) row-major: Song, Chaudhuri, Sarwate (2013) noise, density prop. to
// exp(-(epsilon/2) ||z||).
void l2_laplace(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                std::size_t dim, double epsilon, double* out, int n_threads);

// ---- Scalar access for kernels -------------------------------------------------------------
// A cursor over one row: row(i, offset), row(i, offset + 1), ... with an 8-raw block cache.
class RowCursor {
 public:
  RowCursor(const Key& key, std::uint64_t stream, std::uint64_t row, std::uint64_t offset = 0);
  std::uint64_t next_raw() noexcept;
  double next_uniform() noexcept { return static_cast<double>(next_raw() >> 11) * 0x1.0p-53; }
  // Box-Muller normal (cosine branch) from the next two raws.
  double next_normal_cos() noexcept;
  // Uniform integer in [0, m), m >= 1, by rejection (exact): reject raw x when
  // x >= 2^64 - (2^64 mod m), then x mod m.
  std::uint64_t next_below(std::uint64_t m) noexcept;
  std::uint64_t position() const noexcept { return offset_; }

 private:
  Key key_;
  std::uint64_t stream_;
  std::uint64_t row_;
  std::uint64_t offset_;
  std::uint64_t cached_block_ = ~std::uint64_t{0};
  std::uint32_t block_[16];
};

// normal(index) of the stream (the same value as normal(key, stream, index, 1, ...)) from one
// ChaCha20 block: for kernels that need single draws at scattered addresses.
double normal_at(const Key& key, std::uint64_t stream, std::uint64_t index) noexcept;
// normal_at for n scattered addresses at once (eight ChaCha20 blocks per vector pass): out[i] =
// normal_at(key, stream, index[i]), bit for bit.
void normals_at(const Key& key, std::uint64_t stream, const std::uint64_t* index, std::size_t n,
                double* out) noexcept;

// Box-Muller on n pairs of raws: pair j is a = words[4j] | words[4j+1] << 32, b = words[4j+2] |
// words[4j+3] << 32 (a block's words 4p .. 4p+3 hold pair p); cos_out[j] = r cos t, sin_out[j]
// = r sin t, r = sqrt(-2 log(1 - uniform(a))), t = 2 pi uniform(b) (as normal(i) above). The log,
// sine and cosine are our own branch-free kernels (box_muller.cpp; fdlibm's method), eight pairs
// per vector pass, the same bits for any n and any split of the pairs; within a few ulps of libm.
void box_muller_pairs(const std::uint32_t* words, std::size_t n, double* cos_out,
                      double* sin_out) noexcept;

// One Gamma(shape, scale) draw from row `row` (see the header comment).
double gamma_row(const Key& key, std::uint64_t stream, std::uint64_t row, double shape,
                 double scale) noexcept;


// ---- Discrete Gaussian (exact) -------------------------------------------------------------
// N_Z(0, s2): P(Y = y) proportional to exp(-y^2 / (2 s2)) on the integers, for an integer
// variance parameter s2 in [1, 2^100] that is a multiple of t = 2^m, m = floor(bitlen(s2) / 2)
// (t lies in [sqrt(s2 / 2), sqrt(2 s2)]: the proposal's scale near sigma). Canonne, Kamath,
// Steinke (2020), "The discrete Gaussian for differential privacy", NeurIPS, Algorithm 3:
//   repeat
//     X = floor(t E), E ~ Exp(1) exactly            (X: P(X = x) prop. to exp(-x / t), x >= 0)
//     S = next bit;  if S = 1 and X = 0: retry;     Y = S ? -X : X
//     accept with B(exp(-g)), g = (X - c)^2 / (2 s2), c = s2 / t (an integer)
// Randomness (draw i; identical in the numpy twin). The digit string d_0, d_1, ... (16 bits
// each; at most 256 blocks = 8192 digits). A lazy uniform V = sum_j v_j 2^(-16 (j + 1)) takes
// v_0 from the string when it is created and v_j (j >= 1) when a comparison first needs it.
// next bit: the lowest unused bit of a reservoir digit, a new reservoir taken from the string
// when the 16 bits of the last are used.
//   U < V (lazy): compare digits j = 0, 1, ...; at the first j where either lacks digit j, U's
//     missing digit is drawn first, then V's; the first unequal pair decides.
//   V < a/b (rational, 0 < a < b): D_j = the base-2^16 digits of a/b (long division); the first
//     j with v_j != D_j decides; if v_j = D_j and the remainder is 0, V >= a/b.
//   run(V_1) = max{n : V_1 > V_2 > ... > V_n}, drawing fresh lazy V_2, V_3, ... until the first
//     V_{n+1} not below V_n (von Neumann 1951).
//   floor(t E): K = 0; repeat { U_1 fresh; if run(U_1) odd: break; K += 1 };
//     X = K t + floor(t U_1), floor(t U_1) = the top m bits of U_1's digits 0 .. ceil(m/16) - 1
//     (P(run odd | U_1 = u) = exp(-u), so K + U_1 ~ Exp(1)).
//   B(exp(-g)): whole = floor(g), rest = (X - c)^2 mod 2 s2 (exact integers); whole times
//     B(exp(-1)) (all must succeed), then B(exp(-rest / (2 s2))) unless rest = 0.
//   B(exp(-1)): run(V_1) even for a fresh V_1.
//   B(exp(-x)), 0 < x < 1 rational: V_1 fresh; if not V_1 < x: success (run length 0); else
//     success iff run(V_1) is even (P(x > V_1 > ... > V_n) = x^n / n!, so P(even) = exp(-x)).
// The core decides V_1 < x from a floating-point estimate of x 2^16 (error < 2^-34, margin
// 2^-30) when v_0 is clearly on one side and by the exact long division otherwise (probability
// < 2^-15); both consume the same digits, so the draws do not depend on the shortcut.
// Implementation (the draws are the same bit for bit whichever path computes them; random.cpp,
// "Fast path" and "Sixteen draws at once"): a draw that ends within its first block (about 97%
// at s2 = 2^60) or its first two, with no two equal adjacent digits among those it compares and
// no first digit in a comparison's guard band, keeps every lazy uniform at one digit; each
// decreasing run is then read off bit masks of the block (d[j+1] < d[j], d[j+1] == d[j]). The
// AVX-512 path steps 16 such draws together, a lane taking the next draw when its draw ends
// (variances with 16 <= m <= 46: x < 2^53, the acceptance in doubles with guards that leave
// every decision exact); a scalar path does the same per draw; the draws that need a second
// block get it sixteen at a time; any draw that meets a tie, a guard band or a third block is
// redone from its first digit by the general sampler above.
// Limits (never reached in practice; the draw then raises instead of returning a value): K t
// reaching 2^62 (K >= 2^62 / t: probability below exp(-2^12)); a comparison undecided after 64
// digits (1024 bits: probability 2^-1024 each); more than 8192 digits for one draw. Each raises
// std::runtime_error, so a returned value has exactly the discrete Gaussian distribution
// conditioned on no error (total variation from N_Z below 2^-1000).
using Uint128 = unsigned __int128;
inline constexpr std::uint64_t kDiscreteGaussianIndexLimit = std::uint64_t{1} << 56;
inline constexpr int kDiscreteGaussianBlocks = 256;
inline constexpr int kDiscreteGaussianMaxVarianceBits = 100;  // s2 <= 2^100
// m with t = 2^m for a variance s2 >= 1 (see above).
int discrete_gaussian_scale_bits(Uint128 s2) noexcept;
// Throws std::invalid_argument unless s2 is a valid variance (range, multiple of t).
void check_discrete_gaussian_variance(Uint128 s2);
// The smallest valid variance >= s2 (s2 rounded up to a multiple of its t).
Uint128 discrete_gaussian_round_variance(Uint128 s2);
// out[k] = discrete_gaussian(start + k), k < n (draw i addressed by i < 2^56, see above).
void discrete_gaussian(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                       Uint128 s2, std::int64_t* out, int n_threads);
// One draw from a given word string in place of ChaCha20 (tests of the rare paths: ties of
// lazy uniforms, the exact fallback of a ratio comparison, long tails): words[0 .. n_words) are
// the draw's words (whole blocks, n_words a multiple of 16, at most 4096; each word gives its
// low then its high 16-bit digit); *used receives the number of DIGITS consumed. Throws
// std::runtime_error when the words run out. path: 0 = the paths discrete_gaussian takes (the
// AVX-512 lock-step path where the CPU and variance allow it, then the scalar fast path, then
// the general sampler); 1 = the scalar fast path with the portable (non-vector) digit masks,
// then the general sampler; 2 = the general sampler alone. All give the same draw (see "Implementation" below).
std::int64_t discrete_gaussian_scripted(const std::uint32_t* words, std::size_t n_words,
                                        Uint128 s2, std::size_t* used, int path = 0);

// The noise lattice of a Gaussian mechanism on an exact fixed-point sum (fixed_sum.hpp: units
// of bound * 2^-30) with noise multiplier sigma (noise standard deviation / L2 sensitivity
// `bound`) over dim coordinates. The noisy sum is released on the lattice bound * 2^-frac_bits:
//   shift = max(0, e - 15), e = the exponent with 2^(e-1) <= sigma < 2^e; frac_bits = 30 - shift;
//   R = the exact sum rounded to the lattice: S itself (shift 0), else S / 2^shift rounded half
//       to even (exact integer arithmetic);
//   noise Y ~ N_Z(0, variance), variance = ceil(x)^2 rounded up to a multiple of its t, where
//       x = sigma * (2^frac_bits + r) exactly, r = 0 for shift 0 and r = ceil(sqrt(dim)) else.
// Privacy: neighbouring sums differ by a vector of L2 norm <= 2^30 units (one clipped
// contribution, quantised toward zero); rounding to the coarser lattice adds at most 1/2 per
// coordinate to each sum, so the lattice sums differ by at most 2^frac_bits + sqrt(dim) <=
// 2^frac_bits + r. With variance >= (sigma (2^frac_bits + r))^2 the release R + Y has the
// discrete Gaussian's Renyi divergence alpha Delta^2 / (2 variance) <= alpha / (2 sigma^2)
// (Canonne, Kamath, Steinke 2020, Section 2: the same bound as the continuous Gaussian for an
// integer shift, and additive over independent coordinates; the rounding's extra sensitivity
// is paid with more noise, so the accountant's noise multiplier stays sigma).
// sigma must lie in (0, 2^40].
struct NoiseLattice {
  int frac_bits = 30;
  int shift = 0;
  Uint128 variance = 1;
};
NoiseLattice noise_lattice(double sigma, std::uint64_t dim);
// Rounds the exact units (2^-30) to the lattice in place and adds the discrete Gaussian of
// draws start .. start + n - 1; out[k] is then an integer in units of bound * 2^-frac_bits.
void add_lattice_noise(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                       const NoiseLattice& lattice, std::int64_t* units, int n_threads);
// The same release from noise already drawn: units[k] = round_shift_even(units[k],
// lattice.shift) + noise[k] for k < n (modular int64 addition; lattice_noise.hpp draws ahead).
void add_drawn_lattice_noise(const NoiseLattice& lattice, const std::int64_t* noise,
                             std::size_t n, std::int64_t* units) noexcept;
// S / 2^shift rounded half to even (shift in [0, 62]).
std::int64_t round_shift_even(std::int64_t s, int shift) noexcept;

}  // namespace privlearn::random
