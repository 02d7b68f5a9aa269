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
// block after block into out[16 * n]. Vectorised over 8 blocks at a time.
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

// One Gamma(shape, scale) draw from row `row` (see the header comment).
double gamma_row(const Key& key, std::uint64_t stream, std::uint64_t row, double shape,
                 double scale) noexcept;

}  // namespace privlearn::random
