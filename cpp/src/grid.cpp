// Offset sets and grid coverage (see privlearn/cluster/grid.hpp).

#include "privlearn/cluster/grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "privlearn/checks.hpp"
#include "privlearn/parallel.hpp"

namespace privlearn::cluster {

namespace {

inline double dist01(std::int32_t z) noexcept {
  return z <= 0 ? static_cast<double>(-z) : static_cast<double>(z - 1);
}

void enumerate(Index p, Index j, double budget, std::int32_t lo, std::int32_t hi,
               std::vector<std::int32_t>& current, std::vector<std::int32_t>& out,
               Index max_offsets) {
  if (j == p) {
    if (static_cast<Index>(out.size()) / p >= max_offsets)
      checks::fail("the offset set has more than max_offsets = " + std::to_string(max_offsets) +
                   " members: use a smaller projected dimension or a larger grid_factor");
    out.insert(out.end(), current.begin(), current.end());
    return;
  }
  for (std::int32_t z = lo; z <= hi; ++z) {
    const double d = dist01(z);
    const double rest = budget - d * d;
    if (rest < 0.0) continue;
    current[j] = z;
    enumerate(p, j + 1, rest, lo, hi, current, out, max_offsets);
  }
}

// Hash of a coordinate vector (FNV-1a over the int32 words, then a 64-bit finaliser).
struct CoordHash {
  const std::vector<std::int32_t>* pool;
  Index dim;
  std::size_t operator()(std::int64_t id) const noexcept {
    const std::int32_t* c = pool->data() + id * dim;
    std::uint64_t h = 1469598103934665603ULL;
    for (Index j = 0; j < dim; ++j) {
      h ^= static_cast<std::uint32_t>(c[j]);
      h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return static_cast<std::size_t>(h);
  }
};

struct CoordEq {
  const std::vector<std::int32_t>* pool;
  Index dim;
  bool operator()(std::int64_t a, std::int64_t b) const noexcept {
    return std::memcmp(pool->data() + a * dim, pool->data() + b * dim,
                       sizeof(std::int32_t) * static_cast<std::size_t>(dim)) == 0;
  }
};

// Hands the heap's free memory back to the system (glibc keeps freed small vectors in its
// arenas: without this, freeing the per-block work arrays would not lower the footprint).
inline void release_free_memory() noexcept {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

std::vector<std::int32_t> grid_offsets(Index p, double rho, Index max_offsets) {
  if (p < 1 || p > kMaxGridDim)
    checks::fail("grid dimension must lie in [1, " + std::to_string(kMaxGridDim) + "], got " +
                 std::to_string(p));
  checks::positive(rho, "rho");
  checks::require(rho <= 1e6, "rho = radius / unit must be <= 1e6");
  checks::require(max_offsets >= 1, "max_offsets must be >= 1");
  const auto r = static_cast<std::int32_t>(std::floor(rho));
  std::vector<std::int32_t> out, current(static_cast<std::size_t>(p), 0);
  enumerate(p, 0, rho * rho, -r, r + 1, current, out, max_offsets);
  return out;
}

GridCover grid_cover(const MatRef& Y, double radius, double unit,
                     const std::vector<std::int32_t>& offsets, int n_threads,
                     bool with_reverse) {
  const Index n = Y.rows(), p = Y.cols();
  checks::require(p >= 1 && p <= kMaxGridDim, "Y must have between 1 and 16 columns");
  checks::positive(radius, "radius");
  checks::positive(unit, "unit");
  checks::require(n < (Index{1} << 31) - 1, "too many points for int32 indices");
  checks::require(offsets.size() % static_cast<std::size_t>(p) == 0 && !offsets.empty(),
                  "offsets must be a non-empty (m, p) array");
  checks::all_finite(Y, "Y");
  const double bound = (1.0 + radius) / unit + 2.0;
  checks::require(bound < 1e9, "radius / unit too small for int32 grid coordinates");
  const Index n_off = static_cast<Index>(offsets.size()) / p;
  const double r2 = radius * radius;

  // Exact packing of a coordinate vector into 64 bits when it fits (the usual case): phase 1
  // then emits packed keys and phase 2 uses an open-addressing table; otherwise phase 1 emits
  // coordinates and phase 2 a node-based map over them.
  const auto span = static_cast<std::uint64_t>(2.0 * bound + 3.0);
  int bits = 1;
  while ((std::uint64_t{1} << bits) < span) ++bits;
  const bool packed = bits * p <= 63;
  const std::int64_t key_offset = static_cast<std::int64_t>(bound) + 1;

  // Phase 1 (parallel, by fixed blocks of points): the covering grid points of every point, in
  // offset order. The squared coordinate distances (Y_ij - u (b_j + z))^2 take few values per
  // point, so they come from a per-point table (the same operations, hence the same sums).
  std::int32_t zlo = offsets[0], zhi = offsets[0];
  for (std::int32_t z : offsets) {
    zlo = std::min(zlo, z);
    zhi = std::max(zhi, z);
  }
  const Index nz = static_cast<Index>(zhi) - zlo + 1;
  std::vector<std::int32_t> table_idx(offsets.size());
  std::vector<std::uint64_t> off_key(packed ? static_cast<std::size_t>(n_off) : 0);
  for (Index o = 0; o < n_off; ++o) {
    std::uint64_t k = 0;
    for (Index j = 0; j < p; ++j) {
      const std::int32_t z = offsets[static_cast<std::size_t>(o * p + j)];
      table_idx[static_cast<std::size_t>(o * p + j)] =
          static_cast<std::int32_t>(j * nz + (z - zlo));
      if (packed)
        k += static_cast<std::uint64_t>(static_cast<std::int64_t>(z)) << (bits * (p - 1 - j));
    }
    if (packed) off_key[static_cast<std::size_t>(o)] = k;
  }
  auto mix = [](std::uint64_t key) {
    std::uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return h;
  };
  // Phase 2 splits the keys into kShards shards by the top bits of mix (the tables index by its
  // low bits). A constant: the ids never depend on it, nor on the thread count.
  constexpr std::size_t kShardBits = 6;
  constexpr std::size_t kShards = std::size_t{1} << kShardBits;
  auto shard_of = [&mix](std::uint64_t key) {
    return static_cast<std::size_t>(mix(key) >> (64 - kShardBits));
  };
  const Index block = 256;
  const Index n_blocks = (n + block - 1) / block;
  std::vector<std::vector<std::int32_t>> block_coords(packed ? 0 : static_cast<std::size_t>(n_blocks));
  std::vector<std::vector<std::uint64_t>> block_keys(packed ? static_cast<std::size_t>(n_blocks) : 0);
  // packed: block_keys[b] ends as the distinct keys of block b in order of first discovery in
  // the block, block_lid[b] as the index into it of each incidence of the block
  std::vector<std::vector<std::int32_t>> block_lid(packed ? static_cast<std::size_t>(n_blocks) : 0);
  // packed: phase 1 leaves block_keys[b] grouped by key shard (kShards groups, each in order of
  // first discovery in the block), block_lid[b] the index of each incidence's key in that
  // grouped order and block_sptr[b] the group boundaries: phase 2 works shard by shard, reading
  // memory in order. (The order of discovery within the block is the order of first appearance
  // in block_lid[b].)
  std::vector<std::vector<std::int32_t>> block_sptr(packed ? static_cast<std::size_t>(n_blocks) : 0);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n), 0);
  // Thread policy (parallel::threads_for): a point costs at least its n_off x p table sums.
  const int threads = parallel::threads_for(
      n_threads, static_cast<double>(n) * static_cast<double>(n_off * p) * parallel::kNsPerEntry);
  bool failed = false;  // an allocation failed inside a parallel region (rethrown below)
  std::atomic<bool> interrupted{false};  // Ctrl-C (privlearn/interrupt.hpp)
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1 && n_blocks >= parallel::kMinParallelItems)
#endif
  {
    // per-thread table of the block-local numbering, reused across blocks (slots of other blocks
    // are told apart by their stamp b + 1)
    std::vector<std::uint64_t> tkeys;
    std::vector<std::int32_t> tvals;
    std::vector<std::uint32_t> tstamp;
    std::vector<std::uint64_t> scratch;  // the block's keys, in incidence order
#if PRIVLEARN_HAS_OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (Index b = 0; b < n_blocks; ++b) {
      if (interrupt::stop_in_region(interrupted)) continue;  // Ctrl-C: skip the rest
      try {
        scratch.clear();
        std::int32_t base[kMaxGridDim];
        std::int32_t g[kMaxGridDim];
        std::vector<double> dd(static_cast<std::size_t>(p * nz));
        for (Index i = b * block; i < std::min(n, (b + 1) * block); ++i) {
          std::uint64_t base_key = 0;
          for (Index j = 0; j < p; ++j) {
            base[j] = static_cast<std::int32_t>(std::floor(Y(i, j) / unit));
            if (packed)
              base_key +=
                  static_cast<std::uint64_t>(static_cast<std::int64_t>(base[j]) + key_offset)
                  << (bits * (p - 1 - j));
            for (Index q = 0; q < nz; ++q) {
              const auto gj =
                  static_cast<std::int32_t>(base[j] + (zlo + static_cast<std::int32_t>(q)));
              const double d = Y(i, j) - unit * static_cast<double>(gj);
              dd[static_cast<std::size_t>(j * nz + q)] = d * d;
            }
          }
          std::int64_t c = 0;
          if (packed) {  // branch-free: every key is written, the cursor advances on a hit
            auto& out = scratch;
            const std::size_t at = out.size();
            out.resize(at + static_cast<std::size_t>(n_off));
            std::uint64_t* w = out.data() + at;
            for (Index o = 0; o < n_off; ++o) {
              const std::int32_t* t = table_idx.data() + o * p;
              double s = 0.0;
              for (Index j = 0; j < p; ++j) s += dd[static_cast<std::size_t>(t[j])];
              w[c] = base_key + off_key[static_cast<std::size_t>(o)];
              c += s <= r2;
            }
            out.resize(at + static_cast<std::size_t>(c));
          } else {
            for (Index o = 0; o < n_off; ++o) {
              const std::int32_t* t = table_idx.data() + o * p;
              double s = 0.0;
              for (Index j = 0; j < p; ++j) s += dd[static_cast<std::size_t>(t[j])];
              if (s <= r2) {
                const std::int32_t* z = offsets.data() + o * p;
                for (Index j = 0; j < p; ++j) g[j] = base[j] + z[j];
                auto& out = block_coords[static_cast<std::size_t>(b)];
                out.insert(out.end(), g, g + p);
                ++c;
              }
            }
          }
          counts[static_cast<std::size_t>(i)] = c;
        }
        if (packed) {
          const std::vector<std::uint64_t>& bk = scratch;
          std::size_t need = 1024;
          while (need < 2 * bk.size()) need *= 2;
          if (tkeys.size() < need) {
            tkeys.assign(need, 0);
            tvals.assign(need, 0);
            tstamp.assign(need, 0);
          }
          const std::size_t mask = tkeys.size() - 1;
          const auto stamp = static_cast<std::uint32_t>(b + 1);
          std::vector<std::uint64_t> uniq;
          std::vector<std::int32_t>& lid = block_lid[static_cast<std::size_t>(b)];
          lid.resize(bk.size());
          for (std::size_t e = 0; e < bk.size(); ++e) {
            const std::uint64_t key = bk[e];
            std::size_t slot = static_cast<std::size_t>(mix(key)) & mask;
            while (tstamp[slot] == stamp && tkeys[slot] != key) slot = (slot + 1) & mask;
            if (tstamp[slot] != stamp) {
              tstamp[slot] = stamp;
              tkeys[slot] = key;
              tvals[slot] = static_cast<std::int32_t>(uniq.size());
              uniq.push_back(key);
            }
            lid[e] = tvals[slot];
          }
          // counting sort of the block's distinct keys by shard (stable: index order kept)
          std::vector<std::int32_t>& sp = block_sptr[static_cast<std::size_t>(b)];
          sp.assign(kShards + 1, 0);
          for (const std::uint64_t key : uniq) ++sp[shard_of(key) + 1];
          for (std::size_t q = 0; q < kShards; ++q) sp[q + 1] += sp[q];
          std::vector<std::int32_t> at(uniq.size());  // index in discovery order -> grouped
          std::vector<std::uint64_t> grouped(uniq.size());
          std::int32_t fill[kShards];
          std::copy(sp.begin(), sp.end() - 1, fill);
          for (std::size_t e = 0; e < uniq.size(); ++e) {
            const auto q = static_cast<std::size_t>(fill[shard_of(uniq[e])]++);
            at[e] = static_cast<std::int32_t>(q);
            grouped[q] = uniq[e];
          }
          for (std::int32_t& x : lid) x = at[static_cast<std::size_t>(x)];
          block_keys[static_cast<std::size_t>(b)].swap(grouped);
        }
      } catch (...) {
#if PRIVLEARN_HAS_OPENMP
#pragma omp atomic write
#endif
        failed = true;
      }
    }
  }
  if (failed) throw std::bad_alloc();
  interrupt::throw_if(interrupted);

  // Phase 2: ids by first discovery.
  GridCover gc;
  gc.dim = p;
  gc.unit = unit;
  gc.radius = radius;
  gc.point_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (Index i = 0; i < n; ++i)
    gc.point_ptr[static_cast<std::size_t>(i) + 1] =
        gc.point_ptr[static_cast<std::size_t>(i)] + counts[static_cast<std::size_t>(i)];
  const std::int64_t total = gc.point_ptr.back();
  checks::require(total < (std::int64_t{1} << 31) - 1,
                  "too many (point, grid point) incidences for int32 ids");
  std::vector<std::int64_t>().swap(counts);
  // packed: point_grid is filled at the end from the blocks' arrays, block by block
  if (!packed) gc.point_grid.resize(static_cast<std::size_t>(total));
  const std::uint64_t field = (std::uint64_t{1} << bits) - 1;
  auto decode = [&](std::uint64_t key, std::int32_t* out) {
    for (Index j = 0; j < p; ++j)
      out[j] = static_cast<std::int32_t>(
          static_cast<std::int64_t>((key >> (bits * (p - 1 - j))) & field) - key_offset);
  };
  const std::uint64_t empty = ~std::uint64_t{0};  // never a key: keys use at most 63 bits
  if (packed) {
    // Ids in order of first discovery, i.e. of the first (block, index in order of discovery in
    // the block) where a key occurs. Computed in parallel, independently of the thread count,
    // in place in block_keys (memory: no per-key work array):
    //   1. per shard (parallel over the kShards shards): visit the shard's keys in (block,
    //      grouped index) order with a shard-local table (the grouping keeps the order of
    //      discovery within a shard): a key's first visit is its first discovery, where the
    //      key stays; at any later visit it is replaced by kLink | (block << 31) | index of the
    //      first discovery;
    //   2. per block: the new keys (first discoveries) are numbered base[b], base[b] + 1, ...
    //      in order of discovery (first appearance in block_lid[b]), their coordinates decoded
    //      and the key replaced by its id;
    //   3. per block: each incidence's key index becomes its id (a link read from the earlier
    //      block's ids), in place in block_lid[b]; point_grid is their concatenation.
    constexpr std::uint64_t kLink = std::uint64_t{1} << 63;  // keys use at most 63 bits
    std::vector<std::int64_t> block_off(static_cast<std::size_t>(n_blocks) + 1, 0);
    for (Index b = 0; b < n_blocks; ++b)
      block_off[static_cast<std::size_t>(b) + 1] =
          block_off[static_cast<std::size_t>(b)] +
          static_cast<std::int64_t>(block_keys[static_cast<std::size_t>(b)].size());
    const std::int64_t n_keys = block_off.back();  // <= total < 2^31
    // ~20 ns per key (a probe of a shard table, mostly in cache), ~1 ns per incidence
    const int shard_threads =
        parallel::threads_for(n_threads, 20.0 * static_cast<double>(n_keys));
    const int block_threads = parallel::threads_for(
        n_threads, 2.0 * static_cast<double>(n_keys) + static_cast<double>(total));
    const auto shards = static_cast<std::int64_t>(kShards);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(shard_threads) schedule(dynamic, 1) if (shard_threads > 1)
#endif
    for (std::int64_t s = 0; s < shards; ++s) {
      try {
        std::size_t cap = 1 << 10;
        std::vector<std::uint64_t> keys(cap, empty);
        std::vector<std::uint64_t> where(cap, 0);
        std::size_t used = 0;
        for (Index b = 0; b < n_blocks; ++b) {
          std::vector<std::uint64_t>& bk = block_keys[static_cast<std::size_t>(b)];
          const std::vector<std::int32_t>& sp = block_sptr[static_cast<std::size_t>(b)];
          for (std::int32_t q = sp[static_cast<std::size_t>(s)];
               q < sp[static_cast<std::size_t>(s) + 1]; ++q) {
            const std::uint64_t key = bk[static_cast<std::size_t>(q)];
            const std::size_t mask = cap - 1;
            std::size_t slot = static_cast<std::size_t>(mix(key)) & mask;
            while (keys[slot] != empty && keys[slot] != key) slot = (slot + 1) & mask;
            if (keys[slot] != empty) {
              bk[static_cast<std::size_t>(q)] = where[slot];
              continue;
            }
            keys[slot] = key;
            where[slot] = kLink | (static_cast<std::uint64_t>(b) << 31) |
                          static_cast<std::uint64_t>(q);
            if (2 * ++used > cap) {  // grow and rehash (load factor below 1/2)
              std::vector<std::uint64_t> k2(2 * cap, empty);
              std::vector<std::uint64_t> w2(2 * cap, 0);
              const std::size_t m2 = 2 * cap - 1;
              for (std::size_t r = 0; r < cap; ++r) {
                if (keys[r] == empty) continue;
                std::size_t t = static_cast<std::size_t>(mix(keys[r])) & m2;
                while (k2[t] != empty) t = (t + 1) & m2;
                k2[t] = keys[r];
                w2[t] = where[r];
              }
              keys.swap(k2);
              where.swap(w2);
              cap *= 2;
            }
          }
        }
      } catch (...) {
#if PRIVLEARN_HAS_OPENMP
#pragma omp atomic write
#endif
        failed = true;
      }
    }
    if (failed) throw std::bad_alloc();
    std::vector<std::vector<std::int32_t>>().swap(block_sptr);
    // 2. ids and coordinates of the new keys
    std::vector<std::int64_t> base(static_cast<std::size_t>(n_blocks) + 1, 0);
    for (Index b = 0; b < n_blocks; ++b) {
      std::int64_t fresh = 0;
      for (const std::uint64_t v : block_keys[static_cast<std::size_t>(b)]) fresh += (v & kLink) == 0;
      base[static_cast<std::size_t>(b) + 1] = base[static_cast<std::size_t>(b)] + fresh;
    }
    gc.coords.resize(static_cast<std::size_t>(base.back() * p));
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(block_threads) schedule(dynamic, 16) if (block_threads > 1)
#endif
    for (Index b = 0; b < n_blocks; ++b) {
      try {
        std::vector<std::uint64_t>& bk = block_keys[static_cast<std::size_t>(b)];
        const std::vector<std::int32_t>& lid = block_lid[static_cast<std::size_t>(b)];
        std::vector<std::uint8_t> done(bk.size(), 0);
        std::int64_t id = base[static_cast<std::size_t>(b)];
        for (const std::int32_t q : lid) {
          const auto qq = static_cast<std::size_t>(q);
          if (done[qq] || (bk[qq] & kLink) != 0) continue;
          done[qq] = 1;
          decode(bk[qq], gc.coords.data() + id * p);
          bk[qq] = static_cast<std::uint64_t>(id++);
        }
      } catch (...) {
#if PRIVLEARN_HAS_OPENMP
#pragma omp atomic write
#endif
        failed = true;
      }
    }
    if (failed) throw std::bad_alloc();
    // 3. the incidences' ids, in place (dynamic chunks of 16 blocks: a thread on a quiet core
    // takes over the blocks of a descheduled one)
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(block_threads) schedule(dynamic, 16) if (block_threads > 1)
#endif
    for (Index b = 0; b < n_blocks; ++b) {
      const std::vector<std::uint64_t>& bk = block_keys[static_cast<std::size_t>(b)];
      for (std::int32_t& x : block_lid[static_cast<std::size_t>(b)]) {
        std::uint64_t v = bk[static_cast<std::size_t>(x)];
        if ((v & kLink) != 0) {
          const auto fb = static_cast<std::size_t>((v & ~kLink) >> 31);
          const auto fq = static_cast<std::size_t>(v & ((std::uint64_t{1} << 31) - 1));
          v = block_keys[fb][fq];
        }
        x = static_cast<std::int32_t>(v);
      }
    }
    std::vector<std::vector<std::uint64_t>>().swap(block_keys);
    release_free_memory();
    gc.point_grid.reserve(static_cast<std::size_t>(total));  // filled block by block
    for (Index b = 0; b < n_blocks; ++b) {
      std::vector<std::int32_t>& lid = block_lid[static_cast<std::size_t>(b)];
      gc.point_grid.insert(gc.point_grid.end(), lid.begin(), lid.end());
      std::vector<std::int32_t>().swap(lid);
      if ((b & 255) == 255) release_free_memory();
    }
    release_free_memory();
    (void)shard_threads;
    (void)block_threads;
  } else {
    std::int64_t pos = 0;
    std::unordered_map<std::int64_t, std::int32_t, CoordHash, CoordEq> ids(
        static_cast<std::size_t>(std::min<std::int64_t>(total, 1 << 22)) + 16,
        CoordHash{&gc.coords, p}, CoordEq{&gc.coords, p});
    for (Index b = 0; b < n_blocks; ++b) {
      const std::vector<std::int32_t>& src = block_coords[static_cast<std::size_t>(b)];
      const std::size_t m = src.size() / static_cast<std::size_t>(p);
      for (std::size_t q = 0; q < m; ++q) {
        const std::int64_t candidate = static_cast<std::int64_t>(gc.coords.size()) / p;
        gc.coords.insert(gc.coords.end(), src.begin() + static_cast<std::ptrdiff_t>(q * p),
                         src.begin() + static_cast<std::ptrdiff_t>((q + 1) * p));
        auto it = ids.find(candidate);
        std::int32_t id;
        if (it == ids.end()) {
          id = static_cast<std::int32_t>(candidate);
          ids.emplace(candidate, id);
        } else {
          id = it->second;
          gc.coords.resize(gc.coords.size() - static_cast<std::size_t>(p));
        }
        gc.point_grid[static_cast<std::size_t>(pos++)] = id;
      }
      std::vector<std::int32_t>().swap(block_coords[static_cast<std::size_t>(b)]);
    }
  }
  // Reverse incidence (points in increasing order within each grid point's list).
  if (!with_reverse) return gc;
  const Index n_grid = gc.n_grid();
  gc.grid_ptr.assign(static_cast<std::size_t>(n_grid) + 1, 0);
  for (std::int32_t id : gc.point_grid) ++gc.grid_ptr[static_cast<std::size_t>(id) + 1];
  for (Index g = 0; g < n_grid; ++g)
    gc.grid_ptr[static_cast<std::size_t>(g) + 1] += gc.grid_ptr[static_cast<std::size_t>(g)];
  gc.grid_point.resize(static_cast<std::size_t>(total));
  std::vector<std::int64_t> fill(gc.grid_ptr.begin(), gc.grid_ptr.end() - 1);
  for (Index i = 0; i < n; ++i)
    for (std::int64_t q = gc.point_ptr[static_cast<std::size_t>(i)];
         q < gc.point_ptr[static_cast<std::size_t>(i) + 1]; ++q)
      gc.grid_point[static_cast<std::size_t>(fill[static_cast<std::size_t>(
          gc.point_grid[static_cast<std::size_t>(q)])]++)] = static_cast<std::int32_t>(i);
  return gc;
}

}  // namespace privlearn::cluster
