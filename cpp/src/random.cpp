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
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns that the AVX-512 intrinsics' own "undefined" pass-through operands may be used
// uninitialized (a false positive located in the header): silenced for the header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace privlearn::random {

namespace {

constexpr std::uint32_t kSigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
constexpr std::size_t kChunkBlocks = 64;      // blocks generated per work item
// Costs for the thread policy (parallel::threads_for; ns of one thread, cheap end, measured with
// bench_random.py on the machine of parallel.hpp): a 64-bit draw's transform on top of its
// ChaCha20 words, a Box-Muller normal, a Gamma row (Marsaglia-Tsang, a few draws).
constexpr double kNsPerUniformTransform = 0.5;
constexpr double kNsPerLogTransform = 8.0;  // exponential, Laplace: one log
constexpr double kNsPerNormal = 3.0;  // box_muller.cpp, eight pairs per pass (was 12 with libm)
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
  auto chunk = [&](std::int64_t c, std::uint32_t* buffer) {  // chunk c's blocks, then body
    const std::uint64_t b0 = first_block + static_cast<std::uint64_t>(c) * kChunkBlocks;
    const std::uint64_t nb =
        std::min<std::uint64_t>(kChunkBlocks, n_blocks - static_cast<std::uint64_t>(c) * kChunkBlocks);
    chacha20_blocks(key, b0, stream, static_cast<std::size_t>(nb), buffer);
    body(b0 - first_block, buffer, nb);
  };
  if (threads <= 1 || chunks < parallel::kMinParallelItems) {  // no team (a short call's cost)
    std::uint32_t buffer[16 * kChunkBlocks];
    for (std::int64_t c = 0; c < chunks; ++c) chunk(c, buffer);
    return;
  }
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel num_threads(threads)
#endif
  {
    std::uint32_t buffer[16 * kChunkBlocks];
    // Dynamic chunks of 4 x 64 blocks (~10-30 us): a thread on a quiet core takes over the work
    // of a descheduled one; the barrier waits for one chunk at most.
#if PRIVLEARN_HAS_OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
    for (std::int64_t c = 0; c < chunks; ++c) chunk(c, buffer);
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

// One Box-Muller pair from its raws a, b (box_muller_pairs: the same bits as in a batch).
inline void box_muller(std::uint64_t a, std::uint64_t b, double& c, double& s) noexcept {
  const std::uint32_t q[4] = {static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                              static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32)};
  box_muller_pairs(q, 1, &c, &s);
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
                     constexpr std::uint64_t kPiece = 64;  // pairs per box_muller_pairs call
                     double c[kPiece], s[kPiece];
                     for (std::uint64_t p1 = lo; p1 <= hi; p1 += kPiece) {
                       const std::uint64_t m = std::min(kPiece, hi - p1 + 1);
                       box_muller_pairs(w + 4 * (p1 - p0), m, c, s);
                       for (std::uint64_t j = 0; j < m; ++j) {
                         const std::uint64_t i0 = 2 * (p1 + j);  // index of the cosine branch
                         if (i0 >= start) out[i0 - start] = c[j];
                         if (i0 + 1 <= last) out[i0 + 1 - start] = s[j];
                       }
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
  double c, s;
  box_muller(a, b, c, s);
  return c;
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
  // Sixteen blocks per pass (blocks16_at: one pass of 512-bit registers where the CPU has
  // AVX-512), eight for a tail of at most eight.
  std::uint64_t counters[16];
  std::uint32_t w[16 * 16];
  for (std::size_t i0 = 0; i0 < n; i0 += 16) {
    const std::size_t k = std::min<std::size_t>(16, n - i0);
    const std::size_t lanes = k > 8 ? 16 : 8;
    for (std::size_t l = 0; l < lanes; ++l)
      counters[l] = (index[i0 + std::min(l, k - 1)] >> 1) >> 2;
    if (lanes == 16)
      blocks16_at(key, counters, stream, w);
    else
      blocks8_at(key, counters, stream, w);
    std::uint32_t pairs[4 * 16];  // lane l's pair: words 4 ((i >> 1) mod 4) .. of its block
    for (std::size_t l = 0; l < k; ++l)
      std::memcpy(pairs + 4 * l, w + 16 * l + 4 * ((index[i0 + l] >> 1) & 3),
                  4 * sizeof(std::uint32_t));
    double c[16], sn[16];
    box_muller_pairs(pairs, k, c, sn);
    for (std::size_t l = 0; l < k; ++l) out[i0 + l] = (index[i0 + l] & 1) ? sn[l] : c[l];
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

constexpr double kNsPerDiscreteGaussian = 40.0;  // one draw: a block plus ~10 digits of logic
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

// whole = floor(num / den), rest = num mod den, exactly: from a floating-point estimate
// corrected with exact products when the quotient is below 2^40 (always in practice).
inline void split_quotient(Uint128 num, Uint128 den, double inv_den, Uint128& whole,
                           Uint128& rest) noexcept {
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
}

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
    Uint128 whole, rest;
    split_quotient(static_cast<Uint128>(diff) * diff, den, inv_den, whole, rest);
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

// ---- Fast path: the same draw from comparison masks of its first one or two blocks --------
// Most draws end within their first block (32 digits; ~97.5% at s2 = 2^60) and nearly all
// within two, without a tie between two compared digits and without a first digit in the
// guard band of a ratio comparison. On such a draw every lazy uniform keeps its single digit,
// so each decreasing run is read off two bit masks of the draw's first E digits (E = 32 or 64):
// desc (bit j: d[j+1] < d[j]) and tie (bit j: d[j+1] == d[j]), j < E - 1. A run whose first
// uniform is digit q has length n = 1 + (the number of consecutive desc bits from bit q) and
// takes the digits q + 1 .. q + n. fast_draw follows discrete_gaussian_draw step for step on
// these masks and gives up as soon as a step would compare equal digits, read beyond digit
// E - 1 or meet the guard band; the caller then retries with two blocks or runs
// discrete_gaussian_draw on the same digits from the start, so the draw is the same either way
// (and identical to the twin's).
constexpr int kFastPadWords = 24;
constexpr std::int32_t kLaneDone = 1, kLaneMore = 2;  // lock-step path outcomes  // fast_draw may read up to 44 digits past its digits

struct BlockMasks {
  std::uint64_t desc;  // bits E - 1 .. 63 zero
  std::uint64_t tie;
};
// The masks of up to 256 draws, one array per mask (gathered by the lock-step path).
struct LaneMasks {
  std::uint64_t desc[256];
  std::uint64_t tie[256];
  BlockMasks operator[](std::size_t l) const noexcept { return {desc[l], tie[l]}; }
};

// Masks of E = 32 * n_blocks digits d[0 .. E) (reads d[E], ignored).
inline BlockMasks digit_masks_scalar(const Digit* d, int n_digits) noexcept {
  std::uint64_t desc = 0, tie = 0;
  for (int j = 0; j < n_digits - 1; ++j) {
    desc |= static_cast<std::uint64_t>(d[j + 1] < d[j]) << j;
    tie |= static_cast<std::uint64_t>(d[j + 1] == d[j]) << j;
  }
  return {desc, tie};
}

// Masks of n_lanes draws, lane l's digits at words + stride l (its first 32 digits, or 64 when
// two_blocks). Reads one digit past each lane's digits.
using MasksFn = void (*)(const std::uint32_t*, int, int, bool, LaneMasks*);
void digit_masks_baseline(const std::uint32_t* words, int stride, int n_lanes, bool two_blocks,
                          LaneMasks* out) {
  for (int l = 0; l < n_lanes; ++l) {
    const BlockMasks k = digit_masks_scalar(reinterpret_cast<const Digit*>(words + stride * l),
                                            two_blocks ? 2 * kDigitsPerBlock : kDigitsPerBlock);
    out->desc[l] = k.desc;
    out->tie[l] = k.tie;
  }
}
#if PRIVLEARN_BLOCKS8_DISPATCH
__attribute__((target("avx512f,avx512bw"))) void digit_masks_avx512bw(
    const std::uint32_t* words, int stride, int n_lanes, bool two_blocks, LaneMasks* out) {
  constexpr std::uint64_t kLow31 = (std::uint64_t{1} << 31) - 1;
  // next[j] = j + 1: digit j + 1 in lane j (from a permutation, not from an unaligned load that
  // would straddle the vector stores that just wrote the block)
  const __m512i next = _mm512_add_epi16(
      _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13,
                       12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
      _mm512_set1_epi16(1));
  for (int l = 0; l < n_lanes; ++l) {
    const char* base = reinterpret_cast<const char*>(words + stride * l);
    const __m512i a = _mm512_loadu_si512(base);
    if (two_blocks) {
      const __m512i a2 = _mm512_loadu_si512(base + 64);
      const __m512i b = _mm512_permutex2var_epi16(a, next, a2);  // lane 31: a2's digit 0
      const __m512i b2 = _mm512_permutexvar_epi16(next, a2);
      out->desc[l] = static_cast<std::uint64_t>(_mm512_cmplt_epu16_mask(b, a)) |
                    (static_cast<std::uint64_t>(_mm512_cmplt_epu16_mask(b2, a2)) & kLow31) << 32;
      out->tie[l] = static_cast<std::uint64_t>(_mm512_cmpeq_epu16_mask(b, a)) |
                   (static_cast<std::uint64_t>(_mm512_cmpeq_epu16_mask(b2, a2)) & kLow31) << 32;
    } else {
      const __m512i b = _mm512_permutexvar_epi16(next, a);
      out->desc[l] = static_cast<std::uint64_t>(_mm512_cmplt_epu16_mask(b, a)) & kLow31;
      out->tie[l] = static_cast<std::uint64_t>(_mm512_cmpeq_epu16_mask(b, a)) & kLow31;
    }
  }
}
MasksFn pick_digit_masks() noexcept {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    return digit_masks_avx512bw;
  return digit_masks_baseline;
}
#else
MasksFn pick_digit_masks() noexcept { return digit_masks_baseline; }
#endif
void digit_masks(const std::uint32_t* words, int stride, int n_lanes, bool two_blocks,
                 LaneMasks* out) {
  static const MasksFn fn = pick_digit_masks();
  fn(words, stride, n_lanes, two_blocks, out);
}

// The decreasing run whose first uniform is digit q: its length n; bad is set when a compared
// pair ties. The run takes digits q + 1 .. q + n. (q >= 63: n = 1, beyond any block.)
inline unsigned fast_run(const BlockMasks& k, unsigned q, bool& bad) noexcept {
  const unsigned s = q < 63 ? q : 63;
  const unsigned n = 1 + static_cast<unsigned>(__builtin_ctzll(~(k.desc >> s)));
  bad |= ((k.tie >> s) & ((std::uint64_t{2} << (n - 1)) - 1)) != 0;
  return n;
}

enum FastResult : int { kFastDone = 0, kFastNeedsMore = 1, kFastGaveUp = 2 };

// One draw from its first kEnd digits d[0 .. kEnd) and their masks (d readable up to
// kEnd + 44). digits_top = ceil(m / 16): the digits of U_1 that make floor(t U_1).
// kFastNeedsMore: the draw reads beyond digit kEnd - 1; kFastGaveUp: a tie or the guard band.
template <unsigned kEnd>
inline FastResult fast_draw(const Digit* d, const BlockMasks& k, const DgParams& p,
                            int digits_top, std::int64_t& out, unsigned& used) noexcept {
  const int m = p.m;
  unsigned pos = 0, reservoir = 0, left = 0;
  bool bad = false;
  for (;;) {
    // floor(t E): trials from U_1 = digit u until a run of odd length
    std::uint64_t kk = 0;
    unsigned u;
    for (;;) {
      u = pos;
      const unsigned n = fast_run(k, pos, bad);
      pos += n + 1;
      if ((n & 1u) || pos > kEnd) break;
      ++kk;
    }
    std::uint64_t top = 0;
    if (digits_top > 0) {
      top = d[u];
      for (int j = 1; j < digits_top; ++j) top = (top << 16) | d[pos++];
      top >>= 16 * digits_top - m;
    }
    const std::uint64_t x = (kk << m) | top;
    if (left == 0) {
      reservoir = d[pos++];
      left = 16;
    }
    const bool negative = (reservoir & 1u) != 0;
    reservoir >>= 1;
    --left;
    if (pos > kEnd) return kFastNeedsMore;
    if (bad) return kFastGaveUp;
    if (negative && x == 0) continue;
    const std::uint64_t diff = x >= p.c ? x - p.c : p.c - x;
    Uint128 whole, rest;
    split_quotient(static_cast<Uint128>(diff) * diff, p.den, p.inv_den, whole, rest);
    bool accept = true;
    for (; whole > 0 && accept && pos <= kEnd; --whole) {  // B(exp(-1)): an even run
      const unsigned n = fast_run(k, pos, bad);
      pos += n + 1;
      accept = (n & 1u) == 0;
    }
    if (accept && rest != 0) {  // B(exp(-rest / den))
      if (pos >= kEnd) return kFastNeedsMore;
      const double y = to_double(rest) * p.inv_den * 0x1p16;
      const double w = static_cast<double>(d[pos]);
      const bool less = w + 1.0 <= y - kRatioBand;
      const bool undecided = !less && w < y + kRatioBand;
      // without a branch on `less` (an even chance): the run from V_1 is read either way and
      // counts only when V_1 < rest / den (then V_1 > V_2 > ... from digit pos)
      bool run_bad = false;
      const unsigned n = fast_run(k, pos, run_bad);
      bad |= undecided | (less & run_bad);
      accept = !less | ((n & 1u) == 0);
      pos += less ? n + 1 : 1;
    }
    if (pos > kEnd) return kFastNeedsMore;
    if (bad) return kFastGaveUp;
    if (accept) {
      used = pos;
      out = negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
      return kFastDone;
    }
  }
}

// Draws that need a second block, gathered (their first block's words, the second made on
// demand sixteen at a time) so that their blocks come from one vector pass.
struct SecondBlockQueue {
  static constexpr int kSize = 16;
  std::uint32_t words[kSize][32 + kFastPadWords];  // first block, second block, padding
  std::uint64_t index[kSize];
  std::int64_t* out[kSize];
  int size = 0;
};

int bit_length(Uint128 v) noexcept {
  const std::uint64_t hi = static_cast<std::uint64_t>(v >> 64);
  const std::uint64_t lo = static_cast<std::uint64_t>(v);
  if (hi != 0) return 128 - __builtin_clzll(hi);
  return lo != 0 ? 64 - __builtin_clzll(lo) : 0;
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

#if PRIVLEARN_BLOCKS8_DISPATCH
// ---- Sixteen draws at once (AVX-512): the fast path in lock step ----------------------------
// One draw per 64-bit lane (two registers of 8); each round every busy lane makes one proposal
// (its von Neumann trials stepped together, masked) and its acceptance test, so no branch
// depends on a draw's digits; a lane whose draw ends takes the next draw of the batch. A lane
// gives its draw up (the scalar path then redoes it from the start, with the same digits) when
// it needs a digit beyond its first block (or two), meets the guard band of a ratio comparison,
// or ends with two equal adjacent digits anywhere among those it read (a superset of the
// compared pairs: ties are ignored while stepping and checked once, at acceptance). The
// acceptance test works on doubles: for x < 2^53 (variances with 16 <= m <= 46: at most 16
// trials fit in a block and 32 in two, so x < 33 t < 2^52), diff = |x - c| is exact and
// g = diff^2 / den is computed with relative error < 5 * 2^-53, i.e. absolute error < 2^-42
// for g < 2^8; the lane gives up unless g < 2^8 and g lies at least 2^-40 from an integer, so
// floor(g) = whole exactly, rest != 0 and y = frac(g) 2^16 is within 2^-26 of (rest / den) 2^16;
// the ratio comparison then decides with a band of 2^-24 (undecided: the scalar path). Every
// decision a lane makes is therefore the one discrete_gaussian_draw makes.
#define PRIVLEARN_AVX512_DG __attribute__((target("avx512f,avx512cd,avx512dq")))
constexpr double kSimdRatioBand = 0x1p-24;

bool has_avx512_dg() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512dq");
}

// Run lengths 1 + (the consecutive desc bits from bit pos), pos clamped to 63.
PRIVLEARN_AVX512_DG inline __m512i simd_run(__m512i desc, __m512i pos) {
  const __m512i s = _mm512_min_epu64(pos, _mm512_set1_epi64(63));
  const __m512i v = _mm512_xor_si512(_mm512_srlv_epi64(desc, s), _mm512_set1_epi64(-1));
  const __m512i low = _mm512_and_si512(v, _mm512_sub_epi64(_mm512_setzero_si512(), v));
  return _mm512_sub_epi64(_mm512_set1_epi64(64), _mm512_lzcnt_epi64(low));
}

// digit pos of each lane (lane i's digits at bytes 64 i of words)
PRIVLEARN_AVX512_DG inline __m512i simd_digit(const std::uint32_t* words, __m512i base,
                                              __m512i pos) {
  const __m512i at = _mm512_add_epi64(base, _mm512_add_epi64(pos, pos));
  return _mm512_and_si512(_mm512_i64gather_epi64(at, words, 1), _mm512_set1_epi64(0xFFFF));
}

// Draws 0 .. n_draws - 1 (n_draws <= 256; draw i's first n_digits digits (32 or 64) at byte
// stride * i of words, its masks masks[i]) on 16 lanes, two registers of 8 stepped together
// (two independent dependency chains); a lane that finishes takes the next draw, so the lanes
// stay busy. state[i] (zero on entry) becomes kLaneDone when the draw was written to out[i]
// (and, when used is given, the digits it took to used[i]) and kLaneMore when it stopped for
// want of digits; it stays 0 when the draw met a tie or a guard band.
PRIVLEARN_AVX512_DG void simd_stream(const std::uint32_t* words, int stride,
                                              int n_digits, const LaneMasks& masks, int n_draws,
                                              const DgParams& p, int digits_top,
                                              std::int64_t* out, std::uint64_t* used,
                                              std::int32_t* state) {
  constexpr int H = 2;
  const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
  const __m512i end = _mm512_set1_epi64(n_digits);
  const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i m_v = _mm512_set1_epi64(p.m);
  const __m512i top_shift = _mm512_set1_epi64(16 * digits_top - p.m);
  const __m512i low16 = _mm512_set1_epi64(0xFFFF);
  const __m512i top_more = _mm512_set1_epi64(digits_top - 1);      // digits after U_1's first
  const __m512i sign_shift = _mm512_set1_epi64(16 * (digits_top - 1));  // reservoir digit
  const __m512i stride_v = _mm512_set1_epi64(stride);
  const __m512i count = _mm512_set1_epi64(n_draws);
  const __m512d c_d = _mm512_set1_pd(static_cast<double>(p.c));
  const __m512d inv_den = _mm512_set1_pd(p.inv_den);
  __m512i id[H], base[H], desc[H], tie[H], pos[H], res[H], left[H];
  __mmask8 active[H];
  std::int64_t next = 0;  // the next draw to start
  for (int h = 0; h < H; ++h) {
    id[h] = count;
    base[h] = desc[h] = tie[h] = pos[h] = res[h] = left[h] = zero;
    active[h] = 0;
  }
  for (;;) {
    // lanes without a draw take the next ones, in lane order
    for (int h = 0; h < H; ++h) {
      const __mmask8 free = static_cast<__mmask8>(~active[h]);
      if (free == 0 || next >= n_draws) continue;
      id[h] = _mm512_mask_expand_epi64(id[h], free,
                                       _mm512_add_epi64(iota, _mm512_set1_epi64(next)));
      next += __builtin_popcount(free);
      const __mmask8 start = free & _mm512_cmplt_epi64_mask(id[h], count);
      base[h] = _mm512_mask_mullo_epi64(base[h], start, id[h], stride_v);
      desc[h] = _mm512_mask_i64gather_epi64(desc[h], start, id[h], masks.desc, 8);
      tie[h] = _mm512_mask_i64gather_epi64(tie[h], start, id[h], masks.tie, 8);
      pos[h] = _mm512_mask_mov_epi64(pos[h], start, zero);
      res[h] = _mm512_mask_mov_epi64(res[h], start, zero);
      left[h] = _mm512_mask_mov_epi64(left[h], start, zero);
      active[h] |= start;
      // idle lanes read lane 0's digits (harmless) rather than past the draws
      base[h] = _mm512_mask_mov_epi64(base[h], static_cast<__mmask8>(~active[h]), zero);
    }
    if ((active[0] | active[1]) == 0) break;
    __m512i k[H], u[H], x[H], whole[H], n[H], v1[H];
    __m512d fr[H];
    __mmask8 trial[H], negative[H], stop[H], live[H], accept[H], step[H], beyond[H];
    // floor(t E): the trials of all lanes stepped together
    for (int h = 0; h < H; ++h) {
      k[h] = zero;
      u[h] = pos[h];
      trial[h] = active[h];
    }
    while (trial[0] | trial[1]) {
      for (int h = 0; h < H; ++h) {
        n[h] = simd_run(desc[h], pos[h]);
        u[h] = _mm512_mask_mov_epi64(u[h], trial[h], pos[h]);
        pos[h] = _mm512_mask_add_epi64(pos[h], trial[h], pos[h], _mm512_add_epi64(n[h], one));
        trial[h] &= ~_mm512_test_epi64_mask(n[h], one) & _mm512_cmple_epu64_mask(pos[h], end);
        k[h] = _mm512_mask_add_epi64(k[h], trial[h], k[h], one);
      }
    }
    for (int h = 0; h < H; ++h) {
      // the next four digits (digits_top <= 3): U_1's further digits, the reservoir digit and
      // V_1 of the acceptance below, from one gather
      const __m512i ahead = _mm512_i64gather_epi64(
          _mm512_add_epi64(base[h], _mm512_add_epi64(pos[h], pos[h])), words, 1);
      __m512i top = simd_digit(words, base[h], u[h]);
      for (int j = 1; j < digits_top; ++j)
        top = _mm512_or_si512(
            _mm512_slli_epi64(top, 16),
            _mm512_and_si512(_mm512_srlv_epi64(ahead, _mm512_set1_epi64(16 * (j - 1))), low16));
      pos[h] = _mm512_mask_add_epi64(pos[h], active[h], pos[h], top_more);
      x[h] = _mm512_or_si512(_mm512_sllv_epi64(k[h], m_v), _mm512_srlv_epi64(top, top_shift));
      // the sign bit from the reservoir digit
      const __mmask8 refill = active[h] & _mm512_cmpeq_epi64_mask(left[h], zero);
      res[h] = _mm512_mask_mov_epi64(
          res[h], refill, _mm512_and_si512(_mm512_srlv_epi64(ahead, sign_shift), low16));
      pos[h] = _mm512_mask_add_epi64(pos[h], refill, pos[h], one);
      // V_1 of B(exp(-rest / den)): the digit at pos unless B(exp(-1)) steps come first (read
      // again below for lanes that step)
      v1[h] = _mm512_and_si512(
          _mm512_srlv_epi64(ahead, _mm512_mask_add_epi64(sign_shift, refill, sign_shift,
                                                         _mm512_set1_epi64(16))),
          low16);
      left[h] = _mm512_mask_mov_epi64(left[h], refill, _mm512_set1_epi64(16));
      negative[h] = _mm512_test_epi64_mask(res[h], one);
      res[h] = _mm512_mask_srli_epi64(res[h], active[h], res[h], 1);
      left[h] = _mm512_mask_sub_epi64(left[h], active[h], left[h], one);
      stop[h] = active[h] & _mm512_cmpgt_epu64_mask(pos[h], end);
      beyond[h] = stop[h];
      live[h] = active[h] & ~stop[h];
      live[h] &= ~(negative[h] & _mm512_cmpeq_epi64_mask(x[h], zero));  // -0: a new proposal
      // whole, frac of g = diff^2 / den
      const __m512d diff = _mm512_abs_pd(_mm512_sub_pd(_mm512_cvtepu64_pd(x[h]), c_d));
      const __m512d g = _mm512_mul_pd(_mm512_mul_pd(diff, diff), inv_den);
      const __m512d fl = _mm512_roundscale_pd(g, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      fr[h] = _mm512_sub_pd(g, fl);
      const __mmask8 exact = _mm512_cmp_pd_mask(g, _mm512_set1_pd(0x1p8), _CMP_LT_OQ) &
                             _mm512_cmp_pd_mask(fr[h], _mm512_set1_pd(0x1p-40), _CMP_GE_OQ) &
                             _mm512_cmp_pd_mask(fr[h], _mm512_set1_pd(1.0 - 0x1p-40), _CMP_LE_OQ);
      stop[h] |= live[h] & ~exact;
      live[h] &= exact;
      whole[h] = _mm512_cvttpd_epi64(fl);
      accept[h] = live[h];
      step[h] = accept[h] & _mm512_cmpgt_epi64_mask(whole[h], zero);
    }
    // whole times B(exp(-1)): an even run each
    __mmask8 stepped[H] = {step[0], step[1]};
    while (step[0] | step[1]) {
      for (int h = 0; h < H; ++h) {
        n[h] = simd_run(desc[h], pos[h]);
        pos[h] = _mm512_mask_add_epi64(pos[h], step[h], pos[h], _mm512_add_epi64(n[h], one));
        accept[h] &= ~(step[h] & _mm512_test_epi64_mask(n[h], one));
        whole[h] = _mm512_mask_sub_epi64(whole[h], step[h], whole[h], one);
        step[h] &= accept[h] & _mm512_cmpgt_epi64_mask(whole[h], zero) &
                   _mm512_cmple_epu64_mask(pos[h], end);
      }
    }
    for (int h = 0; h < H; ++h) {
      // B(exp(-rest / den)): V_1 = the digit at pos against y = frac 2^16
      const __mmask8 at_end = accept[h] & _mm512_cmpge_epu64_mask(pos[h], end);
      stop[h] |= at_end;
      beyond[h] |= at_end;
      accept[h] &= ~at_end;
      const __m512d y = _mm512_mul_pd(fr[h], _mm512_set1_pd(0x1p16));
      if (stepped[h])
        v1[h] = _mm512_mask_blend_epi64(stepped[h], v1[h], simd_digit(words, base[h], pos[h]));
      const __m512d w = _mm512_cvtepu64_pd(v1[h]);
      const __mmask8 less = _mm512_cmp_pd_mask(
          _mm512_add_pd(w, _mm512_set1_pd(1.0)),
          _mm512_sub_pd(y, _mm512_set1_pd(kSimdRatioBand)), _CMP_LE_OQ);
      const __mmask8 undecided =
          ~less & _mm512_cmp_pd_mask(w, _mm512_add_pd(y, _mm512_set1_pd(kSimdRatioBand)),
                                     _CMP_LT_OQ);
      stop[h] |= accept[h] & undecided;
      const __mmask8 frac = accept[h] & ~undecided;
      n[h] = simd_run(desc[h], pos[h]);
      pos[h] = _mm512_mask_add_epi64(pos[h], frac, pos[h],
                                     _mm512_mask_add_epi64(one, less, n[h], one));  // n+1 or 1
      accept[h] = frac & (~less | ~_mm512_test_epi64_mask(n[h], one)) &
                  _mm512_cmple_epu64_mask(pos[h], end);  // the run ended within the block
      // a tie among the digits read: the draw is left to the scalar path
      const __m512i window = _mm512_sub_epi64(_mm512_sllv_epi64(one, pos[h]), one);
      const __mmask8 ok = accept[h] & ~_mm512_test_epi64_mask(tie[h], window);
      const __m512i value = _mm512_mask_sub_epi64(x[h], negative[h], zero, x[h]);
      _mm512_mask_i64scatter_epi64(out, ok, id[h], value, 8);
      if (used != nullptr) _mm512_mask_i64scatter_epi64(used, ok, id[h], pos[h], 8);
      _mm512_mask_i64scatter_epi32(state, ok, id[h], _mm256_set1_epi32(kLaneDone), 4);
      const __mmask8 over = active[h] & ~stop[h] & _mm512_cmpgt_epu64_mask(pos[h], end);
      beyond[h] |= over;
      _mm512_mask_i64scatter_epi32(state, beyond[h], id[h], _mm256_set1_epi32(kLaneMore), 4);
      active[h] &= ~(accept[h] | stop[h] | over);
    }
  }
}
#endif

namespace {

// The first error of a discrete_gaussian call (its message is rethrown at the end).
struct DgFailure {
  std::atomic<bool> failed{false};
  std::string message;
};

// The general sampler for draw `index`, whose first block is `first`; 0 and the error recorded
// when the draw raises.
[[gnu::noinline]] std::int64_t slow_draw(const Key& key, std::uint64_t stream,
                                         std::uint64_t index, const std::uint32_t* first,
                                         const DgParams& params, DgFailure& f) {
  Scratch scratch;
  DrawDigits digits(key, stream, index, first);
  try {
    return discrete_gaussian_draw(digits, params, scratch);
  } catch (const std::exception& e) {
    if (!f.failed.exchange(true)) {
#if PRIVLEARN_HAS_OPENMP
#pragma omp critical(privlearn_dgauss_message)
#endif
      f.message = e.what();
    }
    return 0;
  }
}

// The queued draws, each from its first two blocks (the second blocks in one vector pass).
// made: the second blocks, q.size blocks of 16 words, when the caller made them already.
[[gnu::noinline]] void flush_second_blocks(const Key& key, std::uint64_t stream,
                                           SecondBlockQueue& q, const DgParams& params,
                                           int digits_top, bool simd, DgFailure& f,
                                           const std::uint32_t* made = nullptr) {
  if (q.size == 0) return;
  std::uint32_t blocks[16 * 16];
  if (made == nullptr) {
    std::uint64_t counters[16];
    for (int l = 0; l < 16; ++l) counters[l] = (q.index[std::min(l, q.size - 1)] << 8) + 1;
    blocks16_at(key, counters, stream, blocks);
    made = blocks;
  }
  constexpr int kStride = 32 + kFastPadWords;
  for (int l = 0; l < q.size; ++l) {
    std::memcpy(q.words[l] + 16, made + 16 * l, sizeof(std::uint32_t) * 16);
    std::memset(q.words[l] + 32, 0, sizeof(std::uint32_t) * kFastPadWords);
  }
  LaneMasks masks = {};
  digit_masks(&q.words[0][0], kStride, q.size, true, &masks);
  unsigned done = 0;
#if PRIVLEARN_BLOCKS8_DISPATCH
  if (simd) {
    std::int64_t values[16];
    std::int32_t state[16] = {};
    simd_stream(&q.words[0][0], 4 * kStride, 2 * kDigitsPerBlock, masks, q.size, params,
                digits_top, values, nullptr, state);
    for (int l = 0; l < q.size; ++l)
      if (state[l] == kLaneDone) {
        *q.out[l] = values[l];
        done |= 1u << l;
      }
  }
#endif
  for (int l = 0; l < q.size; ++l) {
    if ((done >> l) & 1u) continue;
    unsigned used = 0;
    if (fast_draw<2 * kDigitsPerBlock>(reinterpret_cast<const Digit*>(q.words[l]), masks[l],
                                       params, digits_top, *q.out[l], used) != kFastDone)
      *q.out[l] = slow_draw(key, stream, q.index[l], q.words[l], params, f);
  }
  q.size = 0;
}

// Draws i0 .. i0 + lanes - 1 (lanes <= kGroupDraws) into out[0 .. lanes): vector passes of 16
// make their first blocks; a draw that needs more digits waits in q for its second block. The
// last group of a call, when its last pass has room, makes the queued second blocks in that
// pass and empties q first (a small call, e.g. one DP-SGD step's d draws, pays one pass less).
constexpr int kGroupDraws = 256;
inline void dg_group(const Key& key, std::uint64_t stream, std::uint64_t i0, std::size_t lanes,
                     const DgParams& params, int digits_top, bool simd, bool last,
                     std::int64_t* out, SecondBlockQueue& q, DgFailure& f) {
  // the group's first blocks, room for the queued second blocks, padding
  std::uint32_t w[16 * kGroupDraws + 16 * 16 + kFastPadWords];
  const std::size_t tail = lanes % 16;  // lanes of the last pass (0: a full pass)
  const bool share = last && q.size > 0 && tail != 0 && tail + static_cast<std::size_t>(q.size) <= 16;
  for (std::size_t l0 = 0; l0 < lanes; l0 += 16) {
    std::uint64_t counters[16];
    for (std::size_t l = 0; l < 16; ++l) counters[l] = (i0 + std::min(l0 + l, lanes - 1)) << 8;
    if (share && l0 + 16 > lanes)
      for (int j = 0; j < q.size; ++j)
        counters[tail + static_cast<std::size_t>(j)] = (q.index[j] << 8) + 1;
    blocks16_at(key, counters, stream, w + 16 * l0);
  }
  if (share) flush_second_blocks(key, stream, q, params, digits_top, simd, f, w + 16 * lanes);
  std::memset(w + 16 * lanes, 0, sizeof(std::uint32_t) * kFastPadWords);
  LaneMasks masks;  // entries 0 .. lanes - 1 are set and read
  digit_masks(w, 16, static_cast<int>(lanes), false, &masks);
  std::int32_t state[kGroupDraws] = {};  // kLaneDone / kLaneMore from the lock-step path
#if PRIVLEARN_BLOCKS8_DISPATCH
  if (simd)
    simd_stream(w, 64, kDigitsPerBlock, masks, static_cast<int>(lanes), params, digits_top,
                out, nullptr, state);
#endif
  for (std::size_t l = 0; l < lanes; ++l) {
    if (state[l] == kLaneDone) continue;
    unsigned used = 0;
    const FastResult r =
        state[l] == kLaneMore ? kFastNeedsMore
                         : fast_draw<kDigitsPerBlock>(reinterpret_cast<const Digit*>(w + 16 * l),
                                                      masks[l], params, digits_top, out[l], used);
    if (r == kFastDone) continue;
    if (r == kFastGaveUp) {
      out[l] = slow_draw(key, stream, i0 + l, w + 16 * l, params, f);
      continue;
    }
    std::memcpy(q.words[q.size], w + 16 * l, sizeof(std::uint32_t) * 16);
    q.index[q.size] = i0 + l;
    q.out[q.size] = out + l;
    if (++q.size == SecondBlockQueue::kSize)
      flush_second_blocks(key, stream, q, params, digits_top, simd, f);
  }
}

}  // namespace

void discrete_gaussian(const Key& key, std::uint64_t stream, std::uint64_t start, std::size_t n,
                       Uint128 s2, std::int64_t* out, int n_threads) {
  check_discrete_gaussian_variance(s2);
  check_range(start, n, kDiscreteGaussianIndexLimit, "discrete_gaussian");
  if (n == 0) return;
  const DgParams params(s2);
  const int digits_top = (params.m + 15) / 16;
  const std::int64_t groups = static_cast<std::int64_t>((n + kGroupDraws - 1) / kGroupDraws);
  const int threads =
      parallel::threads_for(n_threads, static_cast<double>(n) * kNsPerDiscreteGaussian);
  DgFailure failure;
#if PRIVLEARN_BLOCKS8_DISPATCH
  static const bool simd_cpu = has_avx512_dg();
  const bool simd = simd_cpu && params.m >= 16 && params.m <= 46;
#else
  const bool simd = false;
#endif
  auto group = [&](std::int64_t g, SecondBlockQueue& q) {
    const std::size_t k0 = static_cast<std::size_t>(g) * kGroupDraws;
    dg_group(key, stream, start + k0, std::min<std::size_t>(kGroupDraws, n - k0), params,
             digits_top,
             simd, g + 1 == groups, out + k0, q, failure);
  };
#if PRIVLEARN_HAS_OPENMP
  if (threads > 1 && groups >= parallel::kMinParallelItems) {
#pragma omp parallel num_threads(threads)
    {
      SecondBlockQueue q;
#pragma omp for schedule(dynamic, 1) nowait
      for (std::int64_t g = 0; g < groups; ++g) group(g, q);
      flush_second_blocks(key, stream, q, params, digits_top, simd, failure);
    }
  } else
#endif
  {  // one thread: no parallel region (small calls, e.g. one DP-SGD step's d draws)
    SecondBlockQueue q;
    for (std::int64_t g = 0; g < groups; ++g) group(g, q);
    flush_second_blocks(key, stream, q, params, digits_top, simd, failure);
  }
  (void)threads;
  if (failure.failed.load()) throw std::runtime_error(failure.message);
}

std::int64_t discrete_gaussian_scripted(const std::uint32_t* words, std::size_t n_words,
                                        Uint128 s2, std::size_t* used, int path) {
  check_discrete_gaussian_variance(s2);
  checks::require(n_words >= 16 && n_words % 16 == 0 &&
                      n_words <= static_cast<std::size_t>(kDiscreteGaussianBlocks) * 16,
                  "discrete_gaussian_scripted: give whole blocks of 16 words (1 to 256 blocks)");
  checks::require(path >= 0 && path <= 2,
                  "discrete_gaussian_scripted: path must be 0 (as discrete_gaussian), 1 (the "
                  "scalar fast path, then the general sampler) or 2 (the general sampler)");
  const DgParams params(s2);
  const int digits_top = (params.m + 15) / 16;
  const bool two = n_words >= 32;  // a second block is given
  std::int64_t v = 0;
#if PRIVLEARN_BLOCKS8_DISPATCH
  // path 0, as in discrete_gaussian: the lock-step path on the first block, then on the first
  // two (lane 0 of 16; the other lanes idle)
  static const bool simd_cpu = has_avx512_dg();
  if (path == 0 && simd_cpu && params.m >= 16 && params.m <= 46) {
    constexpr int kStride = 32 + kFastPadWords;
    std::uint32_t lanes[16 * kStride] = {};
    std::memcpy(lanes, words, sizeof(std::uint32_t) * (two ? 32 : 16));
    LaneMasks masks = {};
    std::uint64_t simd_used[16] = {};
    std::int64_t values[16] = {};
    std::int32_t state[1] = {0};
    digit_masks(lanes, 0, 1, false, &masks);
    simd_stream(lanes, 4 * kStride, kDigitsPerBlock, masks, 1, params, digits_top, values,
                simd_used, state);
    if (state[0] == kLaneMore && two) {
      state[0] = 0;
      digit_masks(lanes, 0, 1, true, &masks);
      simd_stream(lanes, 4 * kStride, 2 * kDigitsPerBlock, masks, 1, params, digits_top, values,
                  simd_used, state);
    }
    if (state[0] == kLaneDone) {
      if (used != nullptr) *used = static_cast<std::size_t>(simd_used[0]);
      return values[0];
    }
  }
#endif
  if (path <= 1) {  // the scalar fast path on the first block, then on the first two
    std::uint32_t first[32 + kFastPadWords] = {};
    std::memcpy(first, words, sizeof(std::uint32_t) * (two ? 32 : 16));
    const Digit* digits = reinterpret_cast<const Digit*>(first);
    unsigned fast_used = 0;
    LaneMasks masks = {};
    // path 1 takes the portable masks (path 0 those of discrete_gaussian on this CPU)
    const auto masks_of = path == 1 ? digit_masks_baseline : digit_masks;
    masks_of(first, 0, 1, false, &masks);
    FastResult r = fast_draw<kDigitsPerBlock>(digits, masks[0], params, digits_top, v, fast_used);
    if (r == kFastNeedsMore && two) {
      masks_of(first, 0, 1, true, &masks);
      r = fast_draw<2 * kDigitsPerBlock>(digits, masks[0], params, digits_top, v, fast_used);
    }
    if (r == kFastDone) {
      if (used != nullptr) *used = fast_used;
      return v;
    }
  }
  DrawDigits d(words, static_cast<int>(n_words / 16));
  Scratch scratch;
  v = discrete_gaussian_draw(d, params, scratch);
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
  // Small calls (one DP-SGD step: d draws) draw into a stack buffer: no allocation per call.
  constexpr std::size_t kStackDraws = 2048;
  std::int64_t small[kStackDraws];
  std::vector<std::int64_t> large;
  std::int64_t* noise = small;
  if (n > kStackDraws) {
    large.resize(n);
    noise = large.data();
  }
  discrete_gaussian(key, stream, start, n, lattice.variance, noise, n_threads);
  add_drawn_lattice_noise(lattice, noise, n, units);
}

void add_drawn_lattice_noise(const NoiseLattice& lattice, const std::int64_t* noise,
                             std::size_t n, std::int64_t* units) noexcept {
  for (std::size_t k = 0; k < n; ++k)
    units[k] = static_cast<std::int64_t>(
        static_cast<std::uint64_t>(round_shift_even(units[k], lattice.shift)) +
        static_cast<std::uint64_t>(noise[k]));
}

}  // namespace privlearn::random
