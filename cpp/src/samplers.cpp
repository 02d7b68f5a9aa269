#include "privlearn/samplers.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"

namespace privlearn::samplers {

namespace {

// Positions touched by a sparse partial Fisher-Yates: a flat open-addressing table (linear
// probing, multiplicative hashing, capacity a power of two >= 4k), several times faster than a
// node-based map; an absent key reads as the identity.
class TouchedPositions {
 public:
  explicit TouchedPositions(std::int64_t k) {
    std::size_t cap = 16;
    while (cap < static_cast<std::size_t>(4 * k)) cap <<= 1;
    keys_.assign(cap, -1);
    vals_.resize(cap);
    mask_ = cap - 1;
    shift_ = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift_;
  }
  std::int64_t get(std::int64_t i) const {
    for (std::size_t s = slot(i);; s = (s + 1) & mask_) {
      if (keys_[s] == i) return vals_[s];
      if (keys_[s] < 0) return i;
    }
  }
  void set(std::int64_t i, std::int64_t v) {
    std::size_t s = slot(i);
    while (keys_[s] >= 0 && keys_[s] != i) s = (s + 1) & mask_;
    keys_[s] = i;
    vals_[s] = v;
  }

 private:
  std::size_t slot(std::int64_t i) const {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL) >>
                                    shift_) & mask_;
  }
  std::vector<std::int64_t> keys_, vals_;
  std::size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace

namespace {

// The raws row(index, offset), row(index, offset + 1), ... of a stream (random.hpp: raw r of row i is the
// word pair (i << 36) + 2r, + 1), generated in chunks through random::words (eight ChaCha20
// blocks per vector pass) instead of one block per RowCursor call: the same values in the same
// order. `budget` is the number of raws the caller expects to read (a chunk never draws more
// than it, so a short sample costs no more blocks than before); reading past it is allowed
// (rejections) and draws more. Rows index >= 2^28 (beyond words' address space) use a cursor.
class RowRaws {
 public:
  RowRaws(const random::Key& key, std::uint64_t stream, std::uint64_t index, std::uint64_t budget,
          std::uint64_t offset = 0)
      : key_(key), stream_(stream), index_(index), budget_(budget), offset_(offset),
        cursor_(key, stream, index, offset) {}
  std::uint64_t next() {
    if (index_ >= kMaxBulkRow) return cursor_.next_raw();
    if (pos_ == filled_) refill();
    const std::uint64_t raw =
        static_cast<std::uint64_t>(words_[2 * pos_]) |
        (static_cast<std::uint64_t>(words_[2 * pos_ + 1]) << 32);
    ++pos_;
    return raw;
  }
  // Uniform integer in [0, m), m >= 1: RowCursor::next_below's rejection rule (reject raw x
  // when x >= 2^64 - (2^64 mod m)), with 2^64 mod m (a division) computed only for the rare x
  // >= 2^64 - m that may be rejected (2^64 mod m < m).
  std::uint64_t next_below(std::uint64_t m) {
    std::uint64_t x = next();
    if (x >= 0 - m) {
      const std::uint64_t t = (0 - m) % m;
      while (t != 0 && x >= 0 - t) x = next();
    }
    return x % m;
  }

 private:
  static constexpr std::uint64_t kMaxBulkRow = std::uint64_t{1} << 28;
  static constexpr std::uint64_t kChunkRaws = 1024;
  void refill() {
    const std::uint64_t left = budget_ > read_ ? budget_ - read_ : 8;  // past it: a block
    const std::uint64_t count = std::min(kChunkRaws, left);
    words_.resize(static_cast<std::size_t>(2 * count));
    random::words(key_, stream_, (index_ << 36) + 2 * (offset_ + read_),
                  static_cast<std::size_t>(2 * count), words_.data(), 1);
    read_ += count;
    filled_ = static_cast<std::size_t>(count);
    pos_ = 0;
  }
  random::Key key_;
  std::uint64_t stream_, index_, budget_;
  std::uint64_t offset_;    // raw of the row read first
  std::uint64_t read_ = 0;  // raws drawn so far
  std::size_t pos_ = 0, filled_ = 0;
  std::vector<std::uint32_t> words_;
  random::RowCursor cursor_;
};

}  // namespace

std::vector<std::int64_t> choice_without_replacement(const random::Key& key, std::uint64_t stream,
                                                     std::uint64_t index, std::int64_t population,
                                                     std::int64_t k) {
  checks::require(population >= 0, "population must be >= 0, got " + std::to_string(population));
  checks::require(k >= 0 && k <= population, "k must lie in [0, population], got k=" +
                                                  std::to_string(k) + ", population=" +
                                                  std::to_string(population));
  checks::require(index < random::kRowCount, "index must be < 2^32");
  std::vector<std::int64_t> result(static_cast<std::size_t>(k));
  RowRaws raws(key, stream, index, static_cast<std::uint64_t>(k));
  // Partial Fisher-Yates on the identity permutation; only touched positions are stored.
  const bool dense = k * 4 >= population;
  if (dense) {
    // The swap positions r_j depend on the raws only, so they are drawn a block ahead and the
    // table entries they touch requested from memory before use (the table of a large
    // population does not fit in cache).
    std::vector<std::int64_t> table(static_cast<std::size_t>(population));
    for (std::int64_t i = 0; i < population; ++i) table[static_cast<std::size_t>(i)] = i;
    constexpr std::int64_t kBlock = 256, kAhead = 16;
    std::int64_t r[kBlock];
    for (std::int64_t j0 = 0; j0 < k; j0 += kBlock) {
      const std::int64_t len = std::min(kBlock, k - j0);
      for (std::int64_t a = 0; a < len; ++a)
        r[a] = j0 + a +
               static_cast<std::int64_t>(raws.next_below(static_cast<std::uint64_t>(population - j0 - a)));
      for (std::int64_t a = 0; a < len; ++a) {
#if defined(__GNUC__) || defined(__clang__)
        if (a + kAhead < len) __builtin_prefetch(table.data() + r[a + kAhead], 1);
#endif
        const std::size_t j = static_cast<std::size_t>(j0 + a);
        const std::size_t ra = static_cast<std::size_t>(r[a]);
        const std::int64_t vj = table[j];
        const std::int64_t vr = table[ra];
        table[ra] = vj;
        table[j] = vr;
        result[j] = vr;
      }
    }
    return result;
  }
  TouchedPositions sparse(k);
  for (std::int64_t j = 0; j < k; ++j) {
    const std::uint64_t m = static_cast<std::uint64_t>(population - j);
    const std::int64_t r = j + static_cast<std::int64_t>(raws.next_below(m));
    const std::int64_t vj = sparse.get(j);
    const std::int64_t vr = sparse.get(r);
    sparse.set(r, vj);
    sparse.set(j, vr);
    result[static_cast<std::size_t>(j)] = vr;
  }
  return result;
}

namespace {

void check_poisson(std::uint64_t index, std::int64_t population, double q) {
  checks::require(population >= 0, "population must be >= 0, got " + std::to_string(population));
  checks::require(population < (std::int64_t{1} << 34), "population must be < 2^34");
  checks::probability(q, "q");
  checks::require(index < random::kRowCount, "index must be < 2^32");
}

// Appends the elements of block b's walk that lie in [lo, hi) (samplers.hpp, layout 2).
void walk_block(const random::Key& key, std::uint64_t stream, std::uint64_t index,
                std::int64_t population, double log_keep, std::int64_t b, std::int64_t lo,
                std::int64_t hi, std::vector<std::int64_t>& out) {
  const std::int64_t first = b * kPoissonBlock;
  const std::int64_t end = std::min(population, first + kPoissonBlock);
  const std::int64_t stop = std::min(end, hi);
  const std::uint64_t offset = static_cast<std::uint64_t>(b) << (kPoissonBlockLog2 + 1);
  std::int64_t pos = first - 1;
  auto walk = [&](auto&& next_raw) {
    for (;;) {
      const double u = static_cast<double>(next_raw() >> 11) * 0x1.0p-53;  // RowCursor's uniform
      const double x = std::log(1.0 - u) / log_keep;
      if (!(x < static_cast<double>(end - pos))) break;  // also stops on NaN
      // floor(x) by truncation: x = log(1 - u) / log_keep >= 0 (both logs <= 0; u = 0 gives
      // -0.0), and x < end - pos <= 2^20 + 1 here, so the conversion is exact and equals the
      // floor, without the C library's floor (a call: not inlined below SSE4.1)
      pos += static_cast<std::int64_t>(x) + 1;
      if (pos >= stop) break;
      if (pos >= lo) out.push_back(pos);
    }
  };
  // The walk reads one raw per element it includes and one to stop. A walk of mean >= 16 draws
  // them in chunks (RowRaws: eight blocks per vector pass), budgeted at the mean plus six
  // standard deviations (more are drawn if it needs them); a shorter one block by block (the
  // same raws). Issue 32: at DP-SGD's default batch (mean 64) the chunks, drawn without an
  // OpenMP team (random.cpp, for_block_chunks), make a 1M x 101 epoch 0.95x the time of the
  // scalar blocks, although they draw ~15 blocks for the ~9 the walk reads.
  const double mean = -std::expm1(log_keep) * static_cast<double>(stop - first);
  if (mean >= 16.0) {
    RowRaws raws(key, stream, index,
                 static_cast<std::uint64_t>(mean + 6.0 * std::sqrt(mean) + 2.0), offset);
    walk([&] { return raws.next(); });
  } else {
    random::RowCursor cursor(key, stream, index, offset);
    walk([&] { return cursor.next_raw(); });
  }
}

}  // namespace

std::vector<std::int64_t> poisson_sample_range(const random::Key& key, std::uint64_t stream,
                                               std::uint64_t index, std::int64_t population,
                                               double q, std::int64_t lo, std::int64_t hi) {
  check_poisson(index, population, q);
  checks::require(0 <= lo && lo <= hi && hi <= population,
                  "the range must satisfy 0 <= lo <= hi <= population");
  std::vector<std::int64_t> out;
  if (q == 0.0 || lo == hi) return out;
  if (q == 1.0) {
    out.resize(static_cast<std::size_t>(hi - lo));
    for (std::int64_t i = lo; i < hi; ++i) out[static_cast<std::size_t>(i - lo)] = i;
    return out;
  }
  out.reserve(static_cast<std::size_t>(q * static_cast<double>(hi - lo) * 1.1) + 16);
  const double log_keep = std::log1p(-q);
  for (std::int64_t b = lo / kPoissonBlock; b * kPoissonBlock < hi; ++b)
    walk_block(key, stream, index, population, log_keep, b, lo, hi, out);
  return out;
}

std::vector<std::int64_t> poisson_sample(const random::Key& key, std::uint64_t stream,
                                         std::uint64_t index, std::int64_t population, double q) {
  return poisson_sample_range(key, stream, index, population, q, 0, population);
}

void poisson_mask(const random::Key& key, std::uint64_t stream, std::uint64_t index,
                  std::int64_t population, double q, bool* out, int n_threads) {
  checks::require(population >= 0, "population must be >= 0, got " + std::to_string(population));
  checks::require(static_cast<std::uint64_t>(population) <= random::kRowLength,
                  "population must be <= 2^35");
  checks::probability(q, "q");
  checks::require(index < random::kRowCount, "index must be < 2^32");
  if (population == 0) return;
  // Row `index` is the block range starting at index * 2^32; draw e of the row is raw e there.
  const std::uint64_t first_block = index << 32;
  const std::int64_t chunk = 512;  // raws per work item
  const std::int64_t n_chunks = (population + chunk - 1) / chunk;
  const int threads = parallel::threads_for(n_threads, static_cast<double>(population) * (parallel::kNsPerChachaBlock / 8.0 + 0.5));
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1 && n_chunks >= 2 * parallel::kMinParallelItems)
#endif
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    std::uint32_t words[16 * (chunk / 8)];
    const std::int64_t e0 = c * chunk;
    const std::int64_t e1 = std::min<std::int64_t>(population, e0 + chunk);
    const std::uint64_t nb = static_cast<std::uint64_t>((e1 - e0 + 7) / 8);
    random::chacha20_blocks(key, first_block + static_cast<std::uint64_t>(e0 / 8), stream,
                            static_cast<std::size_t>(nb), words);
    for (std::int64_t e = e0; e < e1; ++e) {
      const std::int64_t qi = e - e0;
      const std::uint64_t raw = static_cast<std::uint64_t>(words[2 * qi]) |
                                (static_cast<std::uint64_t>(words[2 * qi + 1]) << 32);
      out[e] = static_cast<double>(raw >> 11) * 0x1.0p-53 < q;
    }
  }
  (void)threads;
}

}  // namespace privlearn::samplers
