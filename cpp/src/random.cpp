#include "privlearn/random.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>
#include <vector>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"

#if defined(__linux__)
#include <sys/random.h>
#endif

namespace privlearn::random {

namespace {

constexpr std::uint32_t kSigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
constexpr double kTwoPi = 6.283185307179586;  // the double nearest 2 pi (== 2 * numpy.pi)
constexpr std::size_t kChunkBlocks = 64;      // blocks generated per work item
// Costs for the thread policy (parallel::threads_for; ns of one thread, cheap end, measured with
// bench_random.py on the machine of parallel.hpp): a 64-bit draw's transform on top of its
// ChaCha20 words, a Box-Muller normal, a Gamma row (Marsaglia-Tsang, a few draws).
constexpr double kNsPerUniformTransform = 0.5;
constexpr double kNsPerLogTransform = 8.0;  // exponential, Laplace: one log
constexpr double kNsPerNormal = 12.0;
constexpr double kNsPerGammaRow = 30.0;
constexpr std::uint64_t kU64Max = ~std::uint64_t{0};

inline std::uint32_t rotl(std::uint32_t v, int n) noexcept { return (v << n) | (v >> (32 - n)); }

#define PRIVLEARN_QR(a, b, c, d) \
  a += b;                        \
  d ^= a;                        \
  d = ROT(d, 16);                \
  c += d;                        \
  b ^= c;                        \
  b = ROT(b, 12);                \
  a += b;                        \
  d ^= a;                        \
  d = ROT(d, 8);                 \
  c += d;                        \
  b ^= c;                        \
  b = ROT(b, 7);

#define PRIVLEARN_DOUBLE_ROUND(x)                \
  PRIVLEARN_QR(x[0], x[4], x[8], x[12])          \
  PRIVLEARN_QR(x[1], x[5], x[9], x[13])          \
  PRIVLEARN_QR(x[2], x[6], x[10], x[14])         \
  PRIVLEARN_QR(x[3], x[7], x[11], x[15])         \
  PRIVLEARN_QR(x[0], x[5], x[10], x[15])         \
  PRIVLEARN_QR(x[1], x[6], x[11], x[12])         \
  PRIVLEARN_QR(x[2], x[7], x[8], x[13])          \
  PRIVLEARN_QR(x[3], x[4], x[9], x[14])

inline void init_state(const Key& key, std::uint64_t counter, std::uint64_t stream,
                       std::uint32_t s[16]) noexcept {
  for (int w = 0; w < 4; ++w) s[w] = kSigma[w];
  for (int w = 0; w < 8; ++w) s[4 + w] = key[w];
  s[12] = static_cast<std::uint32_t>(counter);
  s[13] = static_cast<std::uint32_t>(counter >> 32);
  s[14] = static_cast<std::uint32_t>(stream);
  s[15] = static_cast<std::uint32_t>(stream >> 32);
}

#if defined(__GNUC__) || defined(__clang__)
// Eight blocks at once, one block per vector lane (GCC/Clang vector extensions: SSE2 pairs on
// baseline x86-64, one AVX2 register where available).
typedef std::uint32_t v8u __attribute__((vector_size(32)));

// The vector body is compiled three times on x86-64 Linux with GCC: with AVX-512VL (one
// register per state word, single-instruction rotations), with AVX2, and for baseline x86-64
// (SSE2 pairs); the first call picks the best the CPU supports. Integer-only code: all give
// identical bits.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define PRIVLEARN_BLOCKS8_DISPATCH 1
#define PRIVLEARN_BLOCKS8_BODY __attribute__((always_inline)) inline
#else
#define PRIVLEARN_BLOCKS8_DISPATCH 0
#define PRIVLEARN_BLOCKS8_BODY inline
#endif

// L blocks at arbitrary counters (lane l: counters[l]); V: a vector of L 32-bit lanes.
template <class V, int L>
PRIVLEARN_BLOCKS8_BODY void blocks_body(const Key& key, const std::uint64_t* counters,
                                        std::uint64_t stream, std::uint32_t* out) noexcept {
  V s[16];
  for (int w = 0; w < 4; ++w) s[w] = V{} + kSigma[w];
  for (int w = 0; w < 8; ++w) s[4 + w] = V{} + key[w];
  for (int l = 0; l < L; ++l) {
    const std::uint64_t c = counters[l];
    s[12][l] = static_cast<std::uint32_t>(c);
    s[13][l] = static_cast<std::uint32_t>(c >> 32);
  }
  s[14] = V{} + static_cast<std::uint32_t>(stream);
  s[15] = V{} + static_cast<std::uint32_t>(stream >> 32);
  V x[16];
  for (int w = 0; w < 16; ++w) x[w] = s[w];
#define ROT(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
  for (int r = 0; r < 10; ++r) {
    PRIVLEARN_DOUBLE_ROUND(x)
  }
#undef ROT
  for (int w = 0; w < 16; ++w) x[w] += s[w];
  for (int l = 0; l < L; ++l)
    for (int w = 0; w < 16; ++w) out[16 * l + w] = x[w][l];
}

PRIVLEARN_BLOCKS8_BODY void blocks8_body(const Key& key, const std::uint64_t* counters,
                                         std::uint64_t stream, std::uint32_t* out) noexcept {
  blocks_body<v8u, 8>(key, counters, stream, out);
}

#if PRIVLEARN_BLOCKS8_DISPATCH
using Blocks8Fn = void (*)(const Key&, const std::uint64_t*, std::uint64_t,
                           std::uint32_t*) noexcept;
__attribute__((target("avx512f,avx512vl"))) void blocks8_avx512(
    const Key& key, const std::uint64_t* counters, std::uint64_t stream,
    std::uint32_t* out) noexcept {
  blocks8_body(key, counters, stream, out);
}
__attribute__((target("avx2"))) void blocks8_avx2(const Key& key, const std::uint64_t* counters,
                                                  std::uint64_t stream,
                                                  std::uint32_t* out) noexcept {
  blocks8_body(key, counters, stream, out);
}
void blocks8_baseline(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                      std::uint32_t* out) noexcept {
  blocks8_body(key, counters, stream, out);
}
bool has_avx512vl() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
}
Blocks8Fn pick_blocks8() noexcept {
  if (has_avx512vl()) return blocks8_avx512;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return blocks8_avx2;
  return blocks8_baseline;
}
void blocks8_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                std::uint32_t* out) noexcept {
  static const Blocks8Fn fn = pick_blocks8();
  fn(key, counters, stream, out);
}
// Sixteen blocks in one pass of 512-bit registers where the CPU has AVX-512.
typedef std::uint32_t v16u __attribute__((vector_size(64)));
__attribute__((target("avx512f,avx512vl"))) void blocks16_avx512(
    const Key& key, const std::uint64_t* counters, std::uint64_t stream,
    std::uint32_t* out) noexcept {
  blocks_body<v16u, 16>(key, counters, stream, out);
}
void blocks16_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                 std::uint32_t* out) noexcept {
  static const bool wide = has_avx512vl();
  if (wide) {
    blocks16_avx512(key, counters, stream, out);
  } else {
    blocks8_at(key, counters, stream, out);
    blocks8_at(key, counters + 8, stream, out + 16 * 8);
  }
}
#else
void blocks8_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                std::uint32_t* out) noexcept {
  blocks8_body(key, counters, stream, out);
}
void blocks16_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                 std::uint32_t* out) noexcept {
  blocks8_at(key, counters, stream, out);
  blocks8_at(key, counters + 8, stream, out + 16 * 8);
}
#endif
#else
void blocks8_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                std::uint32_t* out) noexcept {
  for (int l = 0; l < 8; ++l) chacha20_block(key, counters[l], stream, out + 16 * l);
}
void blocks16_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                 std::uint32_t* out) noexcept {
  for (int l = 0; l < 16; ++l) chacha20_block(key, counters[l], stream, out + 16 * l);
}
#endif

// Eight consecutive blocks from `counter`.
void blocks8(const Key& key, std::uint64_t counter, std::uint64_t stream,
             std::uint32_t* out) noexcept {
  std::uint64_t counters[8];
  for (int l = 0; l < 8; ++l) counters[l] = counter + static_cast<std::uint64_t>(l);
  blocks8_at(key, counters, stream, out);
}

// Calls body(first_block, words, n_blocks) on consecutive chunks of the block range
// [first_block, first_block + n_blocks), in parallel; each chunk's words are generated locally.
// ns_per_block: the cost of one block with body's work on it (for parallel::threads_for).
template <class Body>
void for_block_chunks(const Key& key, std::uint64_t stream, std::uint64_t first_block,
                      std::uint64_t n_blocks, int n_threads, double ns_per_block, Body&& body) {
  if (n_blocks == 0) return;
  const std::uint64_t n_chunks = (n_blocks + kChunkBlocks - 1) / kChunkBlocks;
  const int threads =
      parallel::threads_for(n_threads, static_cast<double>(n_blocks) * ns_per_block);
  const std::int64_t chunks = static_cast<std::int64_t>(n_chunks);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1 && chunks >= parallel::kMinParallelItems)
#endif
  {
    std::uint32_t buffer[16 * kChunkBlocks];
    // Dynamic chunks of 4 x 64 blocks (~10-30 us): a thread on a quiet core takes over the work
    // of a descheduled one; the barrier waits for one chunk at most.
#if PRIVLEARN_HAS_OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::uint64_t b0 = first_block + static_cast<std::uint64_t>(c) * kChunkBlocks;
      const std::uint64_t nb =
          std::min<std::uint64_t>(kChunkBlocks, n_blocks - static_cast<std::uint64_t>(c) * kChunkBlocks);
      chacha20_blocks(key, b0, stream, static_cast<std::size_t>(nb), buffer);
      body(b0 - first_block, buffer, nb);
    }
  }
  (void)threads;
}

// Calls f(k, raw) for k in [0, n), raw = 64-bit draw (base_raw + k) where draw j lives in block
// block_base + j / 8. Parallel and order-independent.
template <class F>
void for_raws(const Key& key, std::uint64_t stream, std::uint64_t block_base, std::uint64_t start,
              std::uint64_t n, int n_threads, double ns_per_raw, F&& f) {
  if (n == 0) return;
  const std::uint64_t last = start + (n - 1);
  const std::uint64_t first_block = start >> 3;
  const std::uint64_t n_blocks = (last >> 3) - first_block + 1;
  for_block_chunks(key, stream, block_base + first_block, n_blocks, n_threads,
                   parallel::kNsPerChachaBlock + 8.0 * ns_per_raw, [&](std::uint64_t block_offset, const std::uint32_t* w, std::uint64_t nb) {
                     const std::uint64_t raw0 = (first_block + block_offset) << 3;
                     const std::uint64_t lo = std::max(raw0, start);
                     const std::uint64_t hi = std::min(raw0 + nb * 8 - 1, last);
                     for (std::uint64_t j = lo; j <= hi; ++j) {
                       const std::uint64_t q = j - raw0;
                       const std::uint64_t raw = static_cast<std::uint64_t>(w[2 * q]) |
                                                 (static_cast<std::uint64_t>(w[2 * q + 1]) << 32);
                       f(j - start, raw);
                     }
                   });
}

inline double to_unit(std::uint64_t raw) noexcept {
  return static_cast<double>(raw >> 11) * 0x1.0p-53;
}

inline double std_exponential(std::uint64_t raw) noexcept { return -std::log(1.0 - to_unit(raw)); }

inline void box_muller(std::uint64_t a, std::uint64_t b, double& c, double& s) noexcept {
  const double r = std::sqrt(-2.0 * std::log(1.0 - to_unit(a)));
  const double t = kTwoPi * to_unit(b);
  c = r * std::cos(t);
  s = r * std::sin(t);
}

void check_range(std::uint64_t start, std::size_t n, std::uint64_t limit, const char* what) {
  if (start > limit || static_cast<std::uint64_t>(n) > limit - start)
    checks::fail(std::string(what) + ": start + n exceeds the address space (" +
                 std::to_string(limit) + ")");
}

// Integer shapes up to kGammaSumMaxShape are sums of exponentials (see random.hpp).
bool is_integer_shape(double shape) noexcept {
  return shape >= 1.0 && shape == std::floor(shape) &&
         shape <= static_cast<double>(kGammaSumMaxShape);
}

}  // namespace

void chacha20_block(const Key& key, std::uint64_t counter, std::uint64_t stream,
                    std::uint32_t out[16]) noexcept {
  std::uint32_t s[16], x[16];
  init_state(key, counter, stream, s);
  std::memcpy(x, s, sizeof(s));
#define ROT(v, n) rotl(v, n)
  for (int r = 0; r < 10; ++r) {
    PRIVLEARN_DOUBLE_ROUND(x)
  }
#undef ROT
  for (int w = 0; w < 16; ++w) out[w] = x[w] + s[w];
}

void chacha20_blocks(const Key& key, std::uint64_t counter, std::uint64_t stream, std::size_t n,
                     std::uint32_t* out) noexcept {
  std::size_t b = 0;
  for (; b + 16 <= n; b += 16) {
    std::uint64_t counters[16];
    for (int l = 0; l < 16; ++l) counters[l] = counter + b + static_cast<std::uint64_t>(l);
    blocks16_at(key, counters, stream, out + 16 * b);
  }
  for (; b + 8 <= n; b += 8) blocks8(key, counter + b, stream, out + 16 * b);
  if (b < n) {
    std::uint32_t tmp[16 * 8];
    blocks8(key, counter + b, stream, tmp);
    std::memcpy(out + 16 * b, tmp, sizeof(std::uint32_t) * 16 * (n - b));
  }
}

Key key_from_bytes(const std::uint8_t bytes[32]) noexcept {
  Key key;
  for (int w = 0; w < 8; ++w)
    key[w] = static_cast<std::uint32_t>(bytes[4 * w]) |
             (static_cast<std::uint32_t>(bytes[4 * w + 1]) << 8) |
             (static_cast<std::uint32_t>(bytes[4 * w + 2]) << 16) |
             (static_cast<std::uint32_t>(bytes[4 * w + 3]) << 24);
  return key;
}

Key key_from_seed(std::uint64_t seed) noexcept {
  const Key zero{};
  std::uint32_t block[16];
  chacha20_block(zero, seed, kSeedStream, block);
  Key key;
  for (int w = 0; w < 8; ++w) key[w] = block[w];
  return key;
}

Key key_from_os() {
  std::uint8_t bytes[32];
  std::size_t got = 0;
#if defined(__linux__)
  while (got < sizeof(bytes)) {
    const ssize_t r = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
#endif
  if (got < sizeof(bytes)) {
    std::random_device device;
    for (auto& b : bytes) b = static_cast<std::uint8_t>(device());
  }
  return key_from_bytes(bytes);
}

void words(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
           std::uint32_t* out, int n_threads) {
  check_range(start, n, kU64Max, "words");
  if (n == 0) return;
  const std::uint64_t last = start + (n - 1);
  const std::uint64_t first_block = start >> 4;
  const std::uint64_t n_blocks = (last >> 4) - first_block + 1;
  for_block_chunks(key, stream, first_block, n_blocks, n_threads, parallel::kNsPerChachaBlock,
                   [&](std::uint64_t block_offset, const std::uint32_t* w, std::uint64_t nb) {
                     const std::uint64_t w0 = (first_block + block_offset) << 4;
                     const std::uint64_t lo = std::max(w0, start);
                     const std::uint64_t hi = std::min(w0 + nb * 16 - 1, last);
                     std::memcpy(out + (lo - start), w + (lo - w0),
                                 sizeof(std::uint32_t) * static_cast<std::size_t>(hi - lo + 1));
                   });
}

void raws(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
          std::uint64_t* out, int n_threads) {
  check_range(start, n, kU64Max >> 1, "raws");
  for_raws(key, stream, 0, start, n, n_threads, 0.0,
           [out](std::uint64_t k, std::uint64_t raw) { out[k] = raw; });
}

void uniform(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n, double* out,
             int n_threads) {
  check_range(start, n, kU64Max >> 1, "uniform");
  for_raws(key, stream, 0, start, n, n_threads, kNsPerUniformTransform,
           [out](std::uint64_t k, std::uint64_t raw) { out[k] = to_unit(raw); });
}

void exponential(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                 double scale, double* out, int n_threads) {
  checks::positive(scale, "scale");
  check_range(start, n, kU64Max >> 1, "exponential");
  for_raws(key, stream, 0, start, n, n_threads, kNsPerLogTransform,
           [out, scale](std::uint64_t k, std::uint64_t raw) { out[k] = std_exponential(raw) * scale; });
}

void laplace(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
             double scale, double* out, int n_threads) {
  checks::positive(scale, "scale");
  check_range(start, n, kU64Max >> 1, "laplace");
  for_raws(key, stream, 0, start, n, n_threads, kNsPerLogTransform,
           [out, scale](std::uint64_t k, std::uint64_t raw) {
    const double e = std_exponential(raw) * scale;
    out[k] = (raw & 1u) ? -e : e;
  });
}

void normal(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n, double* out,
            int n_threads) {
  check_range(start, n, kU64Max >> 2, "normal");
  if (n == 0) return;
  const std::uint64_t last = start + (n - 1);
  const std::uint64_t first_pair = start >> 1;
  const std::uint64_t last_pair = last >> 1;
  // A block holds 8 raws = 4 Box-Muller pairs, so pair p lives in block p / 4.
  const std::uint64_t first_block = first_pair >> 2;
  const std::uint64_t n_blocks = (last_pair >> 2) - first_block + 1;
  // A block feeds 8 normals.
  for_block_chunks(key, stream, first_block, n_blocks, n_threads, 8.0 * kNsPerNormal,
                   [&](std::uint64_t block_offset, const std::uint32_t* w, std::uint64_t nb) {
                     const std::uint64_t p0 = (first_block + block_offset) << 2;
                     const std::uint64_t lo = std::max(p0, first_pair);
                     const std::uint64_t hi = std::min(p0 + nb * 4 - 1, last_pair);
                     for (std::uint64_t p = lo; p <= hi; ++p) {
                       const std::uint32_t* q = w + 4 * (p - p0);
                       const std::uint64_t a = static_cast<std::uint64_t>(q[0]) |
                                               (static_cast<std::uint64_t>(q[1]) << 32);
                       const std::uint64_t b = static_cast<std::uint64_t>(q[2]) |
                                               (static_cast<std::uint64_t>(q[3]) << 32);
                       double c, s;
                       box_muller(a, b, c, s);
                       const std::uint64_t i0 = 2 * p;  // normal index of the cosine branch
                       if (i0 >= start) out[i0 - start] = c;
                       if (i0 + 1 <= last) out[i0 + 1 - start] = s;
                     }
                   });
}

RowCursor::RowCursor(const Key& key, std::uint64_t stream, std::uint64_t row, std::uint64_t offset)
    : key_(key), stream_(stream), row_(row), offset_(offset) {}

std::uint64_t RowCursor::next_raw() noexcept {
  const std::uint64_t block = (row_ << 32) + (offset_ >> 3);
  if (block != cached_block_) {
    chacha20_block(key_, block, stream_, block_);
    cached_block_ = block;
  }
  const std::uint64_t q = offset_ & 7u;
  ++offset_;
  return static_cast<std::uint64_t>(block_[2 * q]) | (static_cast<std::uint64_t>(block_[2 * q + 1]) << 32);
}

double RowCursor::next_normal_cos() noexcept {
  const std::uint64_t a = next_raw();
  const std::uint64_t b = next_raw();
  const double r = std::sqrt(-2.0 * std::log(1.0 - to_unit(a)));
  return r * std::cos(kTwoPi * to_unit(b));
}

std::uint64_t RowCursor::next_below(std::uint64_t m) noexcept {
  const std::uint64_t t = (0 - m) % m;  // 2^64 mod m
  std::uint64_t x = next_raw();
  while (t != 0 && x >= 0 - t) x = next_raw();
  return x % m;
}

double normal_at(const Key& key, std::uint64_t stream, std::uint64_t index) noexcept {
  const std::uint64_t pair = index >> 1;  // Box-Muller pair p = i / 2 lives in block p / 4
  std::uint32_t w[16];
  chacha20_block(key, pair >> 2, stream, w);
  const std::uint32_t* q = w + 4 * (pair & 3);
  const std::uint64_t a = static_cast<std::uint64_t>(q[0]) | (static_cast<std::uint64_t>(q[1]) << 32);
  const std::uint64_t b = static_cast<std::uint64_t>(q[2]) | (static_cast<std::uint64_t>(q[3]) << 32);
  double c, s;
  box_muller(a, b, c, s);
  return (index & 1) ? s : c;
}

void normals_at(const Key& key, std::uint64_t stream, const std::uint64_t* index, std::size_t n,
                double* out) noexcept {
  std::uint64_t counters[8];
  std::uint32_t w[16 * 8];
  for (std::size_t i0 = 0; i0 < n; i0 += 8) {
    const std::size_t k = std::min<std::size_t>(8, n - i0);
    for (std::size_t l = 0; l < 8; ++l) counters[l] = (index[i0 + std::min(l, k - 1)] >> 1) >> 2;
    blocks8_at(key, counters, stream, w);
    for (std::size_t l = 0; l < k; ++l) {
      const std::uint64_t i = index[i0 + l];
      const std::uint32_t* q = w + 16 * l + 4 * ((i >> 1) & 3);
      const std::uint64_t a = static_cast<std::uint64_t>(q[0]) | (static_cast<std::uint64_t>(q[1]) << 32);
      const std::uint64_t b = static_cast<std::uint64_t>(q[2]) | (static_cast<std::uint64_t>(q[3]) << 32);
      double c, sn;
      box_muller(a, b, c, sn);
      out[i0 + l] = (i & 1) ? sn : c;
    }
  }
}

double gamma_row(const Key& key, std::uint64_t stream, std::uint64_t row, double shape,
                 double scale) noexcept {
  if (is_integer_shape(shape)) {
    RowCursor cursor(key, stream, row, 0);
    const std::uint64_t k = static_cast<std::uint64_t>(shape);
    double sum = 0.0;
    for (std::uint64_t j = 0; j < k; ++j) sum += std_exponential(cursor.next_raw());
    return sum * scale;
  }
  // Marsaglia & Tsang (2000), "A simple method for generating gamma variables".
  double a = shape;
  double boost = 1.0;
  std::uint64_t offset = 0;
  if (a < 1.0) {
    RowCursor first(key, stream, row, 0);
    boost = std::pow(1.0 - first.next_uniform(), 1.0 / shape);
    a += 1.0;
    offset = 1;
  }
  const double d = a - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  RowCursor cursor(key, stream, row, offset);
  for (;;) {
    const double x = cursor.next_normal_cos();
    const double u = cursor.next_uniform();
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) {
      double g = d * v;
      if (offset == 1) g = g * boost;
      return g * scale;
    }
  }
}

void gamma(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n, double shape,
           double scale, double* out, int n_threads) {
  checks::positive(shape, "shape");
  checks::positive(scale, "scale");
  check_range(start, n, kRowCount, "gamma");
  const std::int64_t count = static_cast<std::int64_t>(n);
  const int threads = parallel::threads_for(n_threads, static_cast<double>(n) * kNsPerGammaRow);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) if (threads > 1 && count >= 64 * parallel::kMinParallelItems)
#endif
  for (std::int64_t k = 0; k < count; ++k)
    out[k] = gamma_row(key, stream, start + static_cast<std::uint64_t>(k), shape, scale);
  (void)threads;
}

void l2_laplace(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                std::size_t dim, double epsilon, double* out, int n_threads) {
  checks::positive(epsilon, "epsilon");
  checks::require(dim >= 1, "dim must be >= 1");
  checks::require(static_cast<std::uint64_t>(dim) <= kDirectionOffset, "dim is too large");
  check_range(start, n, kRowCount, "l2_laplace");
  const std::int64_t count = static_cast<std::int64_t>(n);
  // a row: a Gamma(dim) radius and dim normals
  const int threads = parallel::threads_for(
      n_threads, static_cast<double>(n) * (kNsPerGammaRow + static_cast<double>(dim) * kNsPerNormal));
  const double scale = 2.0 / epsilon;
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1 && count >= 16 * parallel::kMinParallelItems)
#endif
  for (std::int64_t k = 0; k < count; ++k) {
    const std::uint64_t row = start + static_cast<std::uint64_t>(k);
    double* z = out + static_cast<std::size_t>(k) * dim;
    const double radius = gamma_row(key, stream, row, static_cast<double>(dim), scale);
    RowCursor cursor(key, stream, row, kDirectionOffset);
    for (std::size_t j = 0; j < dim; j += 2) {
      const std::uint64_t a = cursor.next_raw();
      const std::uint64_t b = cursor.next_raw();
      double c, s;
      box_muller(a, b, c, s);
      z[j] = c;
      if (j + 1 < dim) z[j + 1] = s;
    }
    double norm2 = 0.0;
    for (std::size_t j = 0; j < dim; ++j) norm2 += z[j] * z[j];
    const double norm = std::sqrt(norm2);
    if (norm > 0.0) {
      const double factor = radius / norm;
      for (std::size_t j = 0; j < dim; ++j) z[j] *= factor;
    } else {  // probability ~2^-53 per coordinate pair: fall back to the first axis
      z[0] = radius;
    }
  }
  (void)threads;
}


// ---- Discrete Gaussian (random.hpp, "Discrete Gaussian") ----------------------------------

namespace {

constexpr double kNsPerDiscreteGaussian = 80.0;  // one draw: a block plus ~8 digits of logic
constexpr int kDigitsPerBlock = 32;              // 16-bit digits of one ChaCha20 block
constexpr int kLazyDigits = 64;                  // digits a lazy uniform may grow to (1024 bits)
using Digit = std::uint16_t;

// The digit string of one discrete Gaussian draw: the 16-bit halves of the words of blocks
// (index << 8) + b, b = 0, 1, ..., in order, low half of a word first (random.hpp). The first
// block is supplied by the caller (generated eight at a time); later ones are generated on
// demand. bit() serves single bits from a reservoir digit.
class DrawDigits {
 public:
  DrawDigits(const Key& key, std::uint64_t stream, std::uint64_t index, const std::uint32_t* first)
      : key_(&key), stream_(stream), index_(index) {
    load(first);
  }
  // A scripted word string (tests): n_blocks blocks of 16 words in place of the ChaCha20 blocks.
  DrawDigits(const std::uint32_t* script, int n_blocks)
      : script_(script), script_blocks_(n_blocks) {
    load(script);
  }
  int used() const noexcept { return kDigitsPerBlock * block_id_ + pos_; }
  // The next k digits of the current block without consuming them (nullptr if fewer are left).
  const Digit* peek(int k) const noexcept {
    return pos_ + k <= kDigitsPerBlock ? digits_ + pos_ : nullptr;
  }
  void skip(int k) noexcept { pos_ += k; }
  Digit digit() {
    if (pos_ == kDigitsPerBlock) refill();
    return digits_[pos_++];
  }
  bool bit() {
    if (left_ == 0) {
      reservoir_ = digit();
      left_ = 16;
    }
    const bool b = (reservoir_ & 1u) != 0;
    reservoir_ = static_cast<Digit>(reservoir_ >> 1);
    --left_;
    return b;
  }

 private:
  void load(const std::uint32_t* words) noexcept {
    for (int w = 0; w < 16; ++w) {
      digits_[2 * w] = static_cast<Digit>(words[w]);
      digits_[2 * w + 1] = static_cast<Digit>(words[w] >> 16);
    }
    pos_ = 0;
  }
  [[gnu::noinline]] void refill() {
    if (++block_id_ == kDiscreteGaussianBlocks)
      throw std::runtime_error("discrete_gaussian: a draw used all its 131072 random bits");
    std::uint32_t block[16];
    if (script_ != nullptr) {
      if (block_id_ >= script_blocks_)
        throw std::runtime_error("discrete_gaussian: the scripted words ran out");
      std::memcpy(block, script_ + 16 * block_id_, sizeof(block));
    } else {
      chacha20_block(*key_, (index_ << 8) + static_cast<std::uint64_t>(block_id_), stream_,
                     block);
    }
    load(block);
  }
  const Key* key_ = nullptr;
  std::uint64_t stream_ = 0, index_ = 0;
  const std::uint32_t* script_ = nullptr;
  int script_blocks_ = 0;
  Digit digits_[kDigitsPerBlock];
  int block_id_ = 0;
  int pos_ = 0;
  Digit reservoir_ = 0;
  int left_ = 0;
};

// A lazy uniform V = sum_j w[j] 2^(-16 (j + 1)) in [0, 1): digit 0 is drawn when V is created,
// digit j when a comparison first needs it (random.hpp). Only w[0] and n are touched on the
// common path.
struct Lazy {
  Digit w[kLazyDigits];
  int n;
};

inline void lazy_new(DrawDigits& d, Lazy& v) {
  v.w[0] = d.digit();
  v.n = 1;
}

inline void lazy_extend(DrawDigits& d, Lazy& v, int j) {  // make digit j present (v.n >= j)
  if (j == kLazyDigits)
    throw std::runtime_error("discrete_gaussian: a comparison was undecided after 1024 bits");
  if (v.n == j) v.w[v.n++] = d.digit();
}

// a < b for two lazy uniforms, digits compared from the first; on equal digits the missing
// digit of a is drawn first, then that of b.
[[gnu::noinline]] bool lazy_less_tail(DrawDigits& d, Lazy& a, Lazy& b) {
  for (int j = 1;; ++j) {
    lazy_extend(d, a, j);
    lazy_extend(d, b, j);
    if (a.w[j] != b.w[j]) return a.w[j] < b.w[j];
  }
}

inline bool lazy_less(DrawDigits& d, Lazy& a, Lazy& b) {
  if (a.w[0] != b.w[0]) return a.w[0] < b.w[0];
  return lazy_less_tail(d, a, b);
}

// v < a / b, 0 < a < b <= 2^102, exactly: the base-2^16 digits D_j of a / b (long division)
// against the digits of v; the first that differs decides; when the remainder reaches 0 with
// equal digits, a / b equals v's prefix and v >= a / b.
[[gnu::noinline]] bool lazy_less_ratio_exact(DrawDigits& d, Lazy& v, Uint128 a, Uint128 b) {
  Uint128 r = a;
  for (int j = 0;; ++j) {
    lazy_extend(d, v, j);
    unsigned digit = 0;
    for (int i = 0; i < 16; ++i) {
      r <<= 1;
      digit <<= 1;
      if (r >= b) {
        r -= b;
        digit |= 1u;
      }
    }
    if (v.w[j] != digit) return v.w[j] < digit;
    if (r == 0) return false;
  }
}

// Margin for the estimate y of (a / b) 2^16 below, whose error is < 2^16 * 5 * 2^-53 < 2^-34.
constexpr double kRatioBand = 0x1p-30;

// v < a / b for a fresh v (one digit W), decided from y when W lies clearly on one side:
// W + 1 <= y - band implies (W + 1) 2^-16 < a / b, so v < a / b; W >= y + band implies
// W 2^-16 > a / b. Otherwise (W in a band of at most two values, probability <= 2^-15) the
// exact comparison, which consumes the same digits as this one whenever this one decides.
inline bool lazy_less_ratio(DrawDigits& d, Lazy& v, Uint128 a, Uint128 b, double y) {
  const double w = static_cast<double>(v.w[0]);
  if (w + 1.0 <= y - kRatioBand) return true;
  if (w >= y + kRatioBand) return false;
  return lazy_less_ratio_exact(d, v, a, b);
}

// n = max{k : V_1 > V_2 > ... > V_k} for V_1 = *first and fresh lazy uniforms V_2, V_3, ...,
// drawn until the first V_{k+1} that is not below V_k (von Neumann 1951). slots: scratch.
inline std::uint64_t decreasing_run(DrawDigits& d, Lazy* first, Lazy* slots) {
  // Common case without a branch per comparison: V_1 has one digit, the next three digits are
  // in the current block, no two compared digits are equal and the run ends within them
  // (n <= 3); then n digits are consumed, exactly as by the loop below.
  if (first->n == 1) {
    if (const Digit* p = d.peek(3)) {
      const unsigned w0 = first->w[0], w1 = p[0], w2 = p[1], w3 = p[2];
      const unsigned c1 = w1 < w0, c2 = w2 < w1, c3 = w3 < w2;
      const unsigned tie = (w1 == w0) | (c1 & (w2 == w1)) | (c1 & c2 & (w3 == w2));
      if ((tie | (c1 & c2 & c3)) == 0) {
        const unsigned n = 1 + c1 + (c1 & c2);
        d.skip(static_cast<int>(n));
        return n;
      }
    }
  }
  Lazy* prev = first;
  std::uint64_t n = 1;
  int s = 0;
  for (;;) {
    Lazy* next = slots + s;
    s ^= 1;
    lazy_new(d, *next);
    if (!lazy_less(d, *next, *prev)) return n;
    ++n;
    prev = next;
  }
}

// Scratch lazy uniforms of one draw.
struct Scratch {
  Lazy head;      // V_1 / U_1
  Lazy slots[2];  // the run
};

// floor(2^m E), E ~ Exp(1) (von Neumann 1951): K = 0; repeat: U_1 fresh, n = the decreasing
// run from U_1; if n odd: E = K + U_1, else K += 1. floor(2^m U_1) = the top m bits of U_1:
// its digits 0 .. ceil(m / 16) - 1 (those not yet drawn are drawn in order).
inline std::uint64_t floor_scaled_exponential(DrawDigits& d, int m, Scratch& s) {
  const std::uint64_t k_limit = (std::uint64_t{1} << 62) >> m;
  std::uint64_t k = 0;
  for (;;) {
    lazy_new(d, s.head);
    if (decreasing_run(d, &s.head, s.slots) & 1u) break;
    if (++k >= k_limit)
      throw std::runtime_error("discrete_gaussian: the Laplace proposal exceeded 2^62");
  }
  const int digits = (m + 15) / 16;
  std::uint64_t top = 0;  // the first `digits` digits of U_1
  for (int j = 0; j < digits; ++j) {
    lazy_extend(d, s.head, j);
    top = (top << 16) | s.head.w[j];
  }
  return (k << m) | (top >> (16 * digits - m));
}

// Bernoulli(exp(-1)): the decreasing run from a fresh V_1 (always below 1) has even length.
inline bool bernoulli_exp_one(DrawDigits& d, Scratch& s) {
  lazy_new(d, s.head);
  return (decreasing_run(d, &s.head, s.slots) & 1u) == 0;
}

// Bernoulli(exp(-a / b)), 0 < a < b (von Neumann): n = max{k : a/b > V_1 > ... > V_k}
// (n = 0 when V_1 >= a/b); success iff n is even. y: (a / b) 2^16 within 2^-34.
inline bool bernoulli_exp_fraction(DrawDigits& d, Uint128 a, Uint128 b, double y, Scratch& s) {
  lazy_new(d, s.head);
  if (!lazy_less_ratio(d, s.head, a, b, y)) return true;
  return (decreasing_run(d, &s.head, s.slots) & 1u) == 0;
}

// Nonnegative integer to double, rounded to nearest (the 64-bit conversion when it fits).
inline double to_double(Uint128 v) noexcept {
  return (v >> 64) == 0 ? static_cast<double>(static_cast<std::uint64_t>(v))
                        : static_cast<double>(v);
}

// Constants of one variance.
struct DgParams {
  Uint128 s2;
  int m;
  std::uint64_t c;  // s2 / t, < 2^51
  Uint128 den;      // 2 s2
  double inv_den;   // the double nearest 1 / double(den)
  explicit DgParams(Uint128 v)
      : s2(v), m(discrete_gaussian_scale_bits(v)), c(static_cast<std::uint64_t>(v >> m)),
        den(v << 1), inv_den(1.0 / to_double(v << 1)) {}
};

std::int64_t discrete_gaussian_draw(DrawDigits& d, const DgParams& p, Scratch& s) {
  const int m = p.m;
  const std::uint64_t c = p.c;
  const Uint128 den = p.den;
  const double inv_den = p.inv_den;
  for (;;) {
    const std::uint64_t x = floor_scaled_exponential(d, m, s);
    const bool negative = d.bit();
    if (negative && x == 0) continue;
    const std::uint64_t diff = x >= c ? x - c : c - x;  // < 2^62
    const Uint128 num = static_cast<Uint128>(diff) * diff;
    // whole = floor(num / den), rest = num mod den, exactly: from a floating-point estimate
    // corrected with exact products when the quotient is below 2^40 (always in practice)
    Uint128 whole, rest;
    const double g = to_double(num) * inv_den;
    if (g < 0x1p40) {
      std::uint64_t q = static_cast<std::uint64_t>(g);
      Uint128 prod = static_cast<Uint128>(q) * den;
      while (prod > num) {
        --q;
        prod -= den;
      }
      while (num - prod >= den) {
        ++q;
        prod += den;
      }
      whole = q;
      rest = num - prod;
    } else {
      whole = num / den;
      rest = num % den;
    }
    bool accept = true;
    for (; whole > 0 && accept; --whole) accept = bernoulli_exp_one(d, s);
    if (accept && rest != 0) {
      // y = (rest / den) 2^16: rest, den and 1 / den rounded (2^-53 each) and one rounded
      // product: |y - exact| < 2^16 * 5 * 2^-53 < 2^-34
      const double y = to_double(rest) * inv_den * 0x1p16;
      accept = bernoulli_exp_fraction(d, rest, den, y, s);
    }
    if (accept) return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

int bit_length(Uint128 v) noexcept {
  int b = 0;
  while (v) {
    ++b;
    v >>= 1;
  }
  return b;
}

}  // namespace

int discrete_gaussian_scale_bits(Uint128 s2) noexcept { return bit_length(s2) / 2; }

void check_discrete_gaussian_variance(Uint128 s2) {
  checks::require(s2 >= 1 && bit_length(s2) <= kDiscreteGaussianMaxVarianceBits + 1 &&
                      s2 <= (static_cast<Uint128>(1) << kDiscreteGaussianMaxVarianceBits),
                  "discrete_gaussian: the variance must be an integer in [1, 2^100]");
  const int m = discrete_gaussian_scale_bits(s2);
  checks::require((s2 & ((static_cast<Uint128>(1) << m) - 1)) == 0,
                  "discrete_gaussian: the variance must be a multiple of t = 2^floor(bitlen/2) "
                  "(round it up with discrete_gaussian_round_variance)");
}

Uint128 discrete_gaussian_round_variance(Uint128 s2) {
  if (s2 == 0) s2 = 1;
  for (;;) {  // rounding up can raise bitlen (then t doubles): repeat until stable
    const int m = discrete_gaussian_scale_bits(s2);
    const Uint128 mask = (static_cast<Uint128>(1) << m) - 1;
    const Uint128 r = (s2 + mask) & ~mask;
    if (r == s2) return s2;
    s2 = r;
  }
}

void discrete_gaussian(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                       Uint128 s2, std::int64_t* out, int n_threads) {
  check_discrete_gaussian_variance(s2);
  check_range(start, n, kDiscreteGaussianIndexLimit, "discrete_gaussian");
  if (n == 0) return;
  const DgParams params(s2);
  const std::int64_t groups = static_cast<std::int64_t>((n + 15) / 16);  // 16 draws each
  const int threads =
      parallel::threads_for(n_threads, static_cast<double>(n) * kNsPerDiscreteGaussian);
  std::atomic<bool> failed{false};
  std::string message;
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1 && groups >= 16 * parallel::kMinParallelItems)
#endif
  for (std::int64_t g = 0; g < groups; ++g) {
    std::uint64_t counters[16];
    std::uint32_t w[16 * 16];
    const std::uint64_t i0 = start + static_cast<std::uint64_t>(g) * 16;
    const std::size_t lanes = std::min<std::size_t>(16, n - static_cast<std::size_t>(g) * 16);
    for (std::size_t l = 0; l < 16; ++l) counters[l] = (i0 + std::min(l, lanes - 1)) << 8;
    blocks16_at(key, counters, stream, w);
    Scratch scratch;
    for (std::size_t l = 0; l < lanes; ++l) {
      DrawDigits digits(key, stream, i0 + l, w + 16 * l);
      try {
        out[static_cast<std::size_t>(g) * 16 + l] = discrete_gaussian_draw(digits, params, scratch);
      } catch (const std::exception& e) {
        out[static_cast<std::size_t>(g) * 16 + l] = 0;
        if (!failed.exchange(true)) {
#if PRIVLEARN_HAS_OPENMP
#pragma omp critical(privlearn_dgauss_message)
#endif
          message = e.what();
        }
      }
    }
  }
  (void)threads;
  if (failed.load()) throw std::runtime_error(message);
}

std::int64_t discrete_gaussian_scripted(const std::uint32_t* words, std::size_t n_words,
                                        Uint128 s2, std::size_t* used) {
  check_discrete_gaussian_variance(s2);
  checks::require(n_words >= 16 && n_words % 16 == 0 &&
                      n_words <= static_cast<std::size_t>(kDiscreteGaussianBlocks) * 16,
                  "discrete_gaussian_scripted: give whole blocks of 16 words (1 to 256 blocks)");
  DrawDigits d(words, static_cast<int>(n_words / 16));
  Scratch scratch;
  const std::int64_t v = discrete_gaussian_draw(d, DgParams(s2), scratch);
  if (used != nullptr) *used = static_cast<std::size_t>(d.used());
  return v;
}

std::int64_t round_shift_even(std::int64_t s, int shift) noexcept {
  if (shift <= 0) return s;
  const std::int64_t q = s >> shift;  // floor (arithmetic shift)
  const std::int64_t rem = s - static_cast<std::int64_t>(static_cast<std::uint64_t>(q) << shift);
  const std::int64_t half = std::int64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) return q + 1;
  return q;
}

NoiseLattice noise_lattice(double sigma, std::uint64_t dim) {
  checks::require(sigma > 0.0 && sigma <= 0x1p40,
                  "the noise multiplier of the lattice noise must lie in (0, 2^40]");
  checks::require(dim >= 1, "the noise needs at least one coordinate");
  int e = 0;
  const double f = std::frexp(sigma, &e);  // sigma = f 2^e, f in [0.5, 1)
  NoiseLattice L;
  L.shift = std::max(0, e - 15);
  L.frac_bits = 30 - L.shift;
  std::uint64_t r = 0;
  if (L.shift > 0) {  // r = ceil(sqrt(dim))
    r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(dim)));
    while (r * r > dim) --r;
    while (r * r < dim) ++r;
  }
  // x = sigma (2^frac_bits + r) = M (2^frac_bits + r) 2^(e - 53), M = f 2^53 an integer
  const std::uint64_t mant = static_cast<std::uint64_t>(std::ldexp(f, 53));
  const Uint128 a = (static_cast<Uint128>(1) << L.frac_bits) + r;
  const Uint128 p = static_cast<Uint128>(mant) * a;  // < 2^53 * 2^31
  const int ex = e - 53;
  Uint128 ceil_x;
  if (ex >= 0) {
    ceil_x = p << ex;
  } else if (-ex >= 120) {
    ceil_x = 1;
  } else {
    const Uint128 one = static_cast<Uint128>(1) << (-ex);
    ceil_x = (p + one - 1) >> (-ex);
  }
  if (ceil_x == 0) ceil_x = 1;
  L.variance = discrete_gaussian_round_variance(ceil_x * ceil_x);
  check_discrete_gaussian_variance(L.variance);
  return L;
}

void add_lattice_noise(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                       const NoiseLattice& lattice, std::int64_t* units, int n_threads) {
  std::vector<std::int64_t> noise(n);
  discrete_gaussian(key, stream, start, n, lattice.variance, noise.data(), n_threads);
  for (std::size_t k = 0; k < n; ++k)
    units[k] = static_cast<std::int64_t>(
        static_cast<std::uint64_t>(round_shift_even(units[k], lattice.shift)) +
        static_cast<std::uint64_t>(noise[k]));
}

}  // namespace privlearn::random
