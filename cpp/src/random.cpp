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

#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
// One AVX2 register per state word where the CPU has it (chosen at load time), SSE2 pairs
// otherwise. Integer-only code: both clones give identical bits.
#define PRIVLEARN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PRIVLEARN_CLONES
#endif

// Eight blocks at arbitrary counters (lane l: counters[l]).
PRIVLEARN_CLONES void blocks8_at(const Key& key, const std::uint64_t* counters,
                                 std::uint64_t stream, std::uint32_t* out) noexcept {
  v8u s[16];
  for (int w = 0; w < 4; ++w) s[w] = v8u{} + kSigma[w];
  for (int w = 0; w < 8; ++w) s[4 + w] = v8u{} + key[w];
  for (int l = 0; l < 8; ++l) {
    const std::uint64_t c = counters[l];
    s[12][l] = static_cast<std::uint32_t>(c);
    s[13][l] = static_cast<std::uint32_t>(c >> 32);
  }
  s[14] = v8u{} + static_cast<std::uint32_t>(stream);
  s[15] = v8u{} + static_cast<std::uint32_t>(stream >> 32);
  v8u x[16];
  for (int w = 0; w < 16; ++w) x[w] = s[w];
#define ROT(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
  for (int r = 0; r < 10; ++r) {
    PRIVLEARN_DOUBLE_ROUND(x)
  }
#undef ROT
  for (int w = 0; w < 16; ++w) x[w] += s[w];
  for (int l = 0; l < 8; ++l)
    for (int w = 0; w < 16; ++w) out[16 * l + w] = x[w][l];
}
#else
void blocks8_at(const Key& key, const std::uint64_t* counters, std::uint64_t stream,
                std::uint32_t* out) noexcept {
  for (int l = 0; l < 8; ++l) chacha20_block(key, counters[l], stream, out + 16 * l);
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

constexpr double kNsPerDiscreteGaussian = 150.0;  // one draw: a block plus ~100 bits of logic
constexpr std::uint64_t kMaxK = std::uint64_t{1} << 26;

// The bit string of one discrete Gaussian draw: blocks (index << 8) + b, raws in order, bits
// least significant first. The first block is supplied by the caller (generated eight at a
// time); later ones are generated on demand.
class DrawBits {
 public:
  DrawBits(const Key& key, std::uint64_t stream, std::uint64_t index, const std::uint32_t* first)
      : key_(key), stream_(stream), index_(index) {
    std::memcpy(block_, first, sizeof(block_));
  }
  std::uint64_t take(int m) {  // 1 <= m <= 64: the next m bits as an integer
    if (m <= left_) {
      const std::uint64_t v = m == 64 ? cur_ : (cur_ & ((std::uint64_t{1} << m) - 1));
      cur_ = m == 64 ? 0 : (cur_ >> m);
      left_ -= m;
      return v;
    }
    std::uint64_t v = cur_;
    const int got = left_;
    const std::uint64_t r = next_raw();
    const int need = m - got;
    v |= (need == 64 ? r : (r & ((std::uint64_t{1} << need) - 1))) << got;
    cur_ = need == 64 ? 0 : (r >> need);
    left_ = 64 - need;
    return v;
  }
  // The next m bits (1 <= m < 64) without consuming them, when the current raw still holds
  // them (false otherwise: the caller then takes the bits one at a time).
  bool peek(int m, std::uint64_t& out) const {
    if (left_ < m) return false;
    out = cur_ & ((std::uint64_t{1} << m) - 1);
    return true;
  }
  // Consume m bits already seen by peek(m', .) with m <= m'.
  void skip(int m) {
    cur_ >>= m;
    left_ -= m;
  }
  // Bernoulli(a / b), 0 < a < b < 2^(bits of U - 1), decided digit by digit (random.hpp), with
  // the bit state in registers for the loop: the same bits consumed in the same order as with
  // bit(), without a store and reload of the state per bit (issue 32, item 1).
  template <class U>
  bool ratio_digits(U a, U b) {
    std::uint64_t cur = cur_;
    int left = left_;
    bool result;
    for (;;) {
      if (left == 0) {
        cur = next_raw();
        left = 64;
      }
      a <<= 1;
      bool digit = false;
      if (a >= b) {
        a -= b;
        digit = true;
      }
      const bool u = (cur & 1u) != 0;
      cur >>= 1;
      --left;
      if (u != digit) {  // u = 0 < digit = 1: U < p
        result = digit;
        break;
      }
      if (a == 0) {
        result = false;
        break;
      }
    }
    cur_ = cur;
    left_ = left;
    return result;
  }
  bool bit() {
    if (left_ == 0) {
      cur_ = next_raw();
      left_ = 64;
    }
    const bool b = cur_ & 1u;
    cur_ >>= 1;
    --left_;
    return b;
  }

 private:
  std::uint64_t next_raw() {
    if (raw_ == 8) {
      if (++block_id_ == kDiscreteGaussianBlocks)
        throw std::runtime_error("discrete_gaussian: a draw used all its 131072 random bits");
      chacha20_block(key_, (index_ << 8) + static_cast<std::uint64_t>(block_id_), stream_, block_);
      raw_ = 0;
    }
    const std::uint64_t r = static_cast<std::uint64_t>(block_[2 * raw_]) |
                            (static_cast<std::uint64_t>(block_[2 * raw_ + 1]) << 32);
    ++raw_;
    return r;
  }
  const Key& key_;
  std::uint64_t stream_, index_;
  std::uint32_t block_[16];
  int block_id_ = 0;
  int raw_ = 0;
  std::uint64_t cur_ = 0;
  int left_ = 0;
};

// Bernoulli(a / b), 0 <= a <= b, 0 < b <= 2^127: digit by digit (random.hpp). The 64-bit
// version serves b < 2^63 (the common case); both consume the same bits.
template <class U>
bool bernoulli_ratio_digits(DrawBits& bits, U a, U b) {
  return bits.ratio_digits(a, b);
}

bool bernoulli_ratio(DrawBits& bits, Uint128 a, Uint128 b) {
  if (a >= b) return true;
  if (a == 0) return false;
  if ((b >> 63) == 0)
    return bernoulli_ratio_digits<std::uint64_t>(bits, static_cast<std::uint64_t>(a),
                                                 static_cast<std::uint64_t>(b));
  return bernoulli_ratio_digits<Uint128>(bits, a, b);
}

// Bernoulli(exp(-a / b)) for 0 <= a < b <= 2^101 (CKS Algorithm 1, gamma in [0, 1)).
bool bernoulli_exp_fraction(DrawBits& bits, Uint128 a, Uint128 b) {
  std::uint64_t k = 1;
  while (bernoulli_ratio(bits, a, b * k)) {
    if (++k > kMaxK) throw std::runtime_error("discrete_gaussian: K exceeded 2^26");
  }
  return (k & 1u) != 0;
}

// Bernoulli(exp(-1)) = bernoulli_exp_fraction(bits, 1, 1), the most frequent Bernoulli of a
// draw (the Laplace proposal's geometric part and the acceptance's whole part), memoised over
// the next kExpOneBits bits of the draw (issue 32, item 1): the entry for a bit pattern holds
// the outcome and the number of bits the exact procedure consumes when it stops within those
// bits (0: it needs more; then the procedure itself runs). The same bits are consumed and the
// same outcome returned as without the table, so the draws are unchanged; what is saved is the
// bit-by-bit loop with its unpredictable branches.
constexpr int kExpOneBits = 12;

struct ExpOneTable {
  std::array<std::uint8_t, std::size_t{1} << kExpOneBits> entry{};
  ExpOneTable() {
    for (std::uint32_t pattern = 0; pattern < entry.size(); ++pattern) {
      int used = 0;
      bool decided = false, outcome = false;
      // CKS Algorithm 1 with gamma = 1: K = 1; while B(1 / K): K += 1; success iff K odd.
      for (std::uint64_t k = 1; !decided && used <= kExpOneBits; ++k) {
        bool ratio;  // B(1 / k), digit by digit as bernoulli_ratio_digits
        if (k == 1) {
          ratio = true;
        } else {
          std::uint64_t a = 1;
          bool stopped = false;
          ratio = false;
          while (!stopped) {
            a <<= 1;
            bool digit = false;
            if (a >= k) {
              a -= k;
              digit = true;
            }
            if (used == kExpOneBits) break;  // needs more bits than the table holds
            const bool u = ((pattern >> used) & 1u) != 0;
            ++used;
            if (u != digit) {
              ratio = digit;
              stopped = true;
            } else if (a == 0) {
              ratio = false;
              stopped = true;
            }
          }
          if (!stopped) break;
        }
        if (!ratio) {
          decided = true;
          outcome = (k & 1u) != 0;
        }
      }
      if (decided) entry[pattern] = static_cast<std::uint8_t>((used << 1) | (outcome ? 1 : 0));
    }
  }
};

const ExpOneTable& exp_one_table() {
  static const ExpOneTable table;
  return table;
}

bool bernoulli_exp_one(DrawBits& bits) {
  std::uint64_t next;
  if (bits.peek(kExpOneBits, next)) {
    const std::uint8_t e = exp_one_table().entry[static_cast<std::size_t>(next)];
    if (e != 0) {
      bits.skip(e >> 1);
      return (e & 1u) != 0;
    }
  }
  return bernoulli_exp_fraction(bits, 1, 1);
}

std::int64_t discrete_gaussian_draw(DrawBits& bits, Uint128 s2, int m) {
  const std::uint64_t t = std::uint64_t{1} << m;
  const Uint128 c = s2 >> m;
  const Uint128 den = s2 << 1;
  for (;;) {
    const std::uint64_t u = m == 0 ? 0 : bits.take(m);  // uniform on [0, t)
    if (!bernoulli_exp_fraction(bits, u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp_one(bits)) {
      ++v;
      if (v >= ((std::uint64_t{1} << 62) >> m))
        throw std::runtime_error("discrete_gaussian: the Laplace proposal exceeded 2^62");
    }
    const std::uint64_t x = u + (v << m);
    const bool negative = bits.bit();
    if (negative && x == 0) continue;
    const Uint128 diff = x >= c ? static_cast<Uint128>(x) - c : c - static_cast<Uint128>(x);
    bool accept;
    if (diff >> 63) {  // gamma >= 2^126 / 2^101: B(exp(-1)) until one fails
      while (bernoulli_exp_one(bits)) {
      }
      accept = false;
    } else {
      const Uint128 num = diff * diff;
      Uint128 whole, rest;
      if ((diff >> 32) == 0 && (den >> 64) == 0) {  // 64-bit division (the common case)
        const std::uint64_t n64 = static_cast<std::uint64_t>(num);
        const std::uint64_t d64 = static_cast<std::uint64_t>(den);
        whole = n64 / d64;
        rest = n64 % d64;
      } else {
        whole = num / den;
        rest = num % den;
      }
      accept = true;
      for (; whole > 0 && accept; --whole) accept = bernoulli_exp_one(bits);
      if (accept) accept = bernoulli_exp_fraction(bits, rest, den);
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
  const int m = discrete_gaussian_scale_bits(s2);
  const std::int64_t groups = static_cast<std::int64_t>((n + 7) / 8);
  const int threads =
      parallel::threads_for(n_threads, static_cast<double>(n) * kNsPerDiscreteGaussian);
  std::atomic<bool> failed{false};
  std::string message;
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1 && groups >= 16 * parallel::kMinParallelItems)
#endif
  for (std::int64_t g = 0; g < groups; ++g) {
    std::uint64_t counters[8];
    std::uint32_t w[16 * 8];
    const std::uint64_t i0 = start + static_cast<std::uint64_t>(g) * 8;
    const std::size_t lanes = std::min<std::size_t>(8, n - static_cast<std::size_t>(g) * 8);
    for (std::size_t l = 0; l < 8; ++l) counters[l] = (i0 + std::min(l, lanes - 1)) << 8;
    blocks8_at(key, counters, stream, w);
    for (std::size_t l = 0; l < lanes; ++l) {
      DrawBits bits(key, stream, i0 + l, w + 16 * l);
      try {
        out[static_cast<std::size_t>(g) * 8 + l] = discrete_gaussian_draw(bits, s2, m);
      } catch (const std::exception& e) {
        out[static_cast<std::size_t>(g) * 8 + l] = 0;
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
