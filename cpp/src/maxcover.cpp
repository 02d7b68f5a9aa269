// Private greedy max cover on grids (see privlearn/cluster/maxcover.hpp).

#include "privlearn/cluster/maxcover.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "privlearn/parallel.hpp"

#include "privlearn/checks.hpp"

namespace privlearn::cluster {

namespace {

// Hands the heap's free memory back to the system (glibc keeps the freed per-block vectors of
// grid_cover in its arenas, so the next radius would start above the previous one's peak).
// Memory only: no effect on any result.
inline void release_free_memory() noexcept {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// ---- the wide fallback (coordinates that do not pack into 63 bits): grid_cover's incidence,
// ids renumbered in lexicographic order ----------------------------------------------------
// Covers of the grid points and the class sizes size[c] = #{g : cover[g] = c}. Only these
// integers determine the picks (a class member is the j-th smallest grid id of the class, ids
// in lexicographic order), so the order in which the decrements are applied, and their split
// over threads, is irrelevant.
struct CoverState {
  std::vector<std::int32_t> cover;
  std::vector<std::int64_t> size;
  std::int64_t cmax = 0;

  explicit CoverState(const GridCover& gc) {
    cover.assign(static_cast<std::size_t>(gc.n_grid()), 0);
    for (std::int32_t g : gc.point_grid) ++cover[static_cast<std::size_t>(g)];
    for (std::int32_t c : cover) cmax = std::max<std::int64_t>(cmax, c);
    size.assign(static_cast<std::size_t>(cmax) + 1, 0);
    for (std::int32_t c : cover) ++size[static_cast<std::size_t>(c)];
  }
};

// Hash of p int32 coordinates (FNV-1a, then a 64-bit finaliser).
inline std::uint64_t coord_hash(const std::int32_t* c, Index p) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (Index j = 0; j < p; ++j) {
    h ^= static_cast<std::uint32_t>(c[j]);
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

// Grid id of the coordinates z, or -1 (open addressing over the ids, load factor <= 1/2).
class CoordIndex {
 public:
  explicit CoordIndex(const GridCover& gc) : gc_(&gc) {
    const Index n_grid = gc.n_grid();
    std::size_t cap = 16;
    while (cap < 2 * static_cast<std::size_t>(n_grid)) cap *= 2;
    slots_.assign(cap, -1);
    mask_ = cap - 1;
    const Index p = gc.dim;
    for (Index g = 0; g < n_grid; ++g) {
      std::size_t s = coord_hash(gc.coords.data() + g * p, p) & mask_;
      while (slots_[s] >= 0) s = (s + 1) & mask_;
      slots_[s] = static_cast<std::int32_t>(g);
    }
  }
  std::int64_t find(const std::int32_t* z) const noexcept {
    const Index p = gc_->dim;
    std::size_t s = coord_hash(z, p) & mask_;
    while (slots_[s] >= 0) {
      if (std::equal(z, z + p, gc_->coords.data() + static_cast<std::ptrdiff_t>(slots_[s]) * p))
        return slots_[s];
      s = (s + 1) & mask_;
    }
    return -1;
  }

 private:
  const GridCover* gc_;
  std::vector<std::int32_t> slots_;
  std::size_t mask_ = 0;
};

// The points by grid cell floor(y / u) (cells numbered by first discovery, points increasing
// within a cell), to find the points within r of a grid point g: a point of cell b can only be
// covered by g = b + z for z in the offset set, so the candidates are the cells g - z.
class CellIndex {
 public:
  CellIndex(const MatRef& Y, double unit) : p_(Y.cols()) {
    const Index n = Y.rows();
    std::vector<std::int32_t> cell_of(static_cast<std::size_t>(n));
    std::size_t cap = 16;
    while (cap < 2 * static_cast<std::size_t>(n)) cap *= 2;
    slots_.assign(cap, -1);
    mask_ = cap - 1;
    std::int32_t b[kMaxGridDim];
    std::vector<std::int64_t> count;
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < p_; ++j) b[j] = static_cast<std::int32_t>(std::floor(Y(i, j) / unit));
      std::int64_t id = find(b);
      if (id < 0) {
        id = static_cast<std::int64_t>(count.size());
        cells_.insert(cells_.end(), b, b + p_);
        count.push_back(0);
        std::size_t s = coord_hash(b, p_) & mask_;
        while (slots_[s] >= 0) s = (s + 1) & mask_;
        slots_[s] = static_cast<std::int32_t>(id);
      }
      cell_of[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(id);
      ++count[static_cast<std::size_t>(id)];
    }
    ptr_.assign(count.size() + 1, 0);
    for (std::size_t c = 0; c < count.size(); ++c) ptr_[c + 1] = ptr_[c] + count[c];
    points_.resize(static_cast<std::size_t>(n));
    std::vector<std::int64_t> fill(ptr_.begin(), ptr_.end() - 1);
    for (Index i = 0; i < n; ++i) {
      const auto c = static_cast<std::size_t>(cell_of[static_cast<std::size_t>(i)]);
      points_[static_cast<std::size_t>(fill[c]++)] = static_cast<std::int32_t>(i);
    }
  }
  std::int64_t find(const std::int32_t* b) const noexcept {
    std::size_t s = coord_hash(b, p_) & mask_;
    while (slots_[s] >= 0) {
      if (std::equal(b, b + p_, cells_.data() + static_cast<std::ptrdiff_t>(slots_[s]) * p_))
        return slots_[s];
      s = (s + 1) & mask_;
    }
    return -1;
  }
  const std::int32_t* begin(std::int64_t c) const noexcept {
    return points_.data() + ptr_[static_cast<std::size_t>(c)];
  }
  const std::int32_t* end(std::int64_t c) const noexcept {
    return points_.data() + ptr_[static_cast<std::size_t>(c) + 1];
  }

 private:
  Index p_;
  std::vector<std::int32_t> cells_;
  std::vector<std::int32_t> slots_;
  std::size_t mask_ = 0;
  std::vector<std::int64_t> ptr_;
  std::vector<std::int32_t> points_;
};


// ---- the compact table (issue 30, item 6) -------------------------------------------------
// Exact packing of integer coordinates into bits * p <= 63 bits, field j (most significant
// first) = g_j + off in [0, 2^bits): the packed order is the lexicographic order of the
// coordinates (as signed integers).
struct Packing {
  Index p = 0;
  int bits = 0;
  std::int64_t off = 0;
  std::int64_t span = 0;  // field values lie in [0, span), span <= 2^bits

  bool in_range(const std::int32_t* g) const noexcept {
    for (Index j = 0; j < p; ++j) {
      const std::int64_t v = static_cast<std::int64_t>(g[j]) + off;
      if (v < 0 || v >= span) return false;
    }
    return true;
  }
  std::uint64_t pack(const std::int32_t* g) const noexcept {
    std::uint64_t k = 0;
    for (Index j = 0; j < p; ++j)
      k = (k << bits) | static_cast<std::uint64_t>(static_cast<std::int64_t>(g[j]) + off);
    return k;
  }
  // pack(b + z) = pack(b) + delta(z) (mod 2^64) whenever b + z is in range
  std::uint64_t delta(const std::int32_t* z) const noexcept {
    std::uint64_t k = 0;
    for (Index j = 0; j < p; ++j)
      k += static_cast<std::uint64_t>(static_cast<std::int64_t>(z[j])) << (bits * (p - 1 - j));
    return k;
  }
  void unpack(std::uint64_t key, std::int32_t* g) const noexcept {
    const std::uint64_t field = (std::uint64_t{1} << bits) - 1;
    for (Index j = 0; j < p; ++j)
      g[j] = static_cast<std::int32_t>(
          static_cast<std::int64_t>((key >> (bits * (p - 1 - j))) & field) - off);
  }
  std::int32_t first(std::uint64_t key) const noexcept {
    return static_cast<std::int32_t>(static_cast<std::int64_t>(key >> (bits * (p - 1))) - off);
  }
  // the smallest key whose first coordinate is >= c0 (c0 + off clamped to [0, span])
  std::uint64_t first_key(std::int64_t c0) const noexcept {
    const std::int64_t v = std::clamp<std::int64_t>(c0 + off, 0, span);
    if (v >= span) return ~std::uint64_t{0};
    return static_cast<std::uint64_t>(v) << (bits * (p - 1));
  }
};

// Covers of one slab's grid points in 1, 2 or 4 bytes each (the smallest width that holds the
// slab's largest cover; covers only decrease).
class CoverArray {
 public:
  void assign(const std::vector<std::uint32_t>& c) {
    std::uint32_t top = 0;
    for (std::uint32_t v : c) top = std::max(top, v);
    width_ = top < 0x100u ? 1 : (top < 0x10000u ? 2 : 4);
    size_ = c.size();
    if (width_ == 1) c8_.assign(c.begin(), c.end());
    if (width_ == 2) c16_.assign(c.begin(), c.end());
    if (width_ == 4) c32_ = c;
  }
  std::size_t size() const noexcept { return size_; }
  std::uint32_t get(std::size_t i) const noexcept {
    return width_ == 1 ? c8_[i] : (width_ == 2 ? c16_[i] : c32_[i]);
  }
  void set(std::size_t i, std::uint32_t v) noexcept {
    if (width_ == 1)
      c8_[i] = static_cast<std::uint8_t>(v);
    else if (width_ == 2)
      c16_[i] = static_cast<std::uint16_t>(v);
    else
      c32_[i] = v;
  }
  // number of entries in [b, e) equal to want
  std::int64_t count(std::size_t b, std::size_t e, std::uint32_t want) const noexcept {
    if (width_ == 1) return want > 0xffu ? 0 : count_in(c8_, b, e, want);
    if (width_ == 2) return want > 0xffffu ? 0 : count_in(c16_, b, e, want);
    return count_in(c32_, b, e, want);
  }

 private:
  template <class T>
  static std::int64_t count_in(const std::vector<T>& v, std::size_t b, std::size_t e,
                               std::uint32_t want) noexcept {
    const auto w = static_cast<T>(want);
    std::int64_t c = 0;
    for (std::size_t i = b; i < e; ++i) c += v[i] == w;
    return c;
  }
  int width_ = 1;
  std::size_t size_ = 0;
  std::vector<std::uint8_t> c8_;
  std::vector<std::uint16_t> c16_;
  std::vector<std::uint32_t> c32_;
};

// Geometry of one radius: the grid unit, the offset set (lexicographic, so each value of the
// first offset coordinate is a contiguous range), its per-coordinate table indices and packed
// deltas, and the distance check of grid_cover (the same operations, hence the same results).
struct Level {
  Index p = 0;
  double unit = 0.0, r2 = 0.0;
  Packing pk;
  const std::vector<std::int32_t>* offsets = nullptr;
  Index n_off = 0;
  std::int32_t zlo = 0, zhi = 0;
  Index nz = 0;
  std::vector<std::int32_t> table_idx;  // (n_off, p): j * nz + (z_j - zlo)
  std::vector<std::uint64_t> off_key;   // pk.delta(z) per offset
  std::vector<Index> zstart;            // offsets with z_0 = zlo + q: [zstart[q], zstart[q+1])

  // the cell of row i and its table of squared coordinate distances dd[j * nz + q] =
  // (Y_ij - u (b_j + zlo + q))^2 (grid_cover's operations)
  void row_table(const MatRef& Y, Index i, std::int32_t* base, double* dd) const {
    for (Index j = 0; j < p; ++j) {
      base[j] = static_cast<std::int32_t>(std::floor(Y(i, j) / unit));
      for (Index q = 0; q < nz; ++q) {
        const auto gj = static_cast<std::int32_t>(base[j] + (zlo + static_cast<std::int32_t>(q)));
        const double d = Y(i, j) - unit * static_cast<double>(gj);
        dd[j * nz + q] = d * d;
      }
    }
  }
  double dist2(const double* dd, Index o) const noexcept {
    const std::int32_t* t = table_idx.data() + o * p;
    double s = 0.0;
    for (Index j = 0; j < p; ++j) s += dd[t[j]];
    return s;
  }
};

// The rows grouped by cell floor(y / u), cells in increasing packed-key (lexicographic) order,
// rows increasing within a cell: the rows that can be within r of a grid point g lie in the
// cells g - z, z in the offset set.
template <class K>
struct SortedCells {
  std::vector<K> keys;            // distinct cell keys, increasing
  std::vector<std::int32_t> ptr;  // rows of cell c: rows[ptr[c] .. ptr[c + 1])
  std::vector<std::int32_t> rows;

  SortedCells(const MatRef& Y, const Level& lv) {
    const Index n = Y.rows(), p = lv.p;
    std::vector<K> rk(static_cast<std::size_t>(n));
    std::int32_t b[kMaxGridDim];
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < p; ++j) b[j] = static_cast<std::int32_t>(std::floor(Y(i, j) / lv.unit));
      rk[static_cast<std::size_t>(i)] = static_cast<K>(lv.pk.pack(b));
    }
    rows.resize(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
    std::sort(rows.begin(), rows.end(), [&rk](std::int32_t a, std::int32_t c) {
      const K ka = rk[static_cast<std::size_t>(a)], kc = rk[static_cast<std::size_t>(c)];
      return ka < kc || (ka == kc && a < c);
    });
    ptr.push_back(0);
    for (Index q = 0; q < n; ++q) {
      const K k = rk[static_cast<std::size_t>(rows[static_cast<std::size_t>(q)])];
      if (q > 0 && k == keys.back()) continue;
      if (q > 0) ptr.push_back(static_cast<std::int32_t>(q));
      keys.push_back(k);
    }
    ptr.push_back(static_cast<std::int32_t>(n));
    keys.shrink_to_fit();
    ptr.shrink_to_fit();
  }
  std::int64_t find(K key) const noexcept {
    const auto it = std::lower_bound(keys.begin(), keys.end(), key);
    return it != keys.end() && *it == key ? it - keys.begin() : -1;
  }
  // cells whose first coordinate lies in [a, b]
  std::pair<std::size_t, std::size_t> range(const Packing& pk, std::int64_t a,
                                            std::int64_t b) const noexcept {
    const auto lo = std::lower_bound(keys.begin(), keys.end(), pk.first_key(a));
    const std::uint64_t hk = pk.first_key(b + 1);
    const auto hi = hk == ~std::uint64_t{0}
                        ? keys.end()
                        : std::lower_bound(lo, keys.end(), static_cast<K>(hk));
    return {static_cast<std::size_t>(lo - keys.begin()),
            static_cast<std::size_t>(hi - keys.begin())};
  }
};

// The grid points with non-zero cover, in slabs of the first coordinate g_0 in [lo, hi),
// slabs in increasing lo, keys increasing within a slab: the table's order is the
// lexicographic order of the grid points (the order of the member draw). A key is stored as
// its low sb <= 16 bits (2 bytes) under a directory of its high bits (prefix), or, where that
// directory would be too large, whole.
template <class K>
struct Slab {
  static constexpr std::size_t npos = ~std::size_t{0};
  std::int32_t lo = 0, hi = 0;
  int sb = 0;                      // 0: whole keys in full; else suffix bits
  std::uint64_t pbase = 0;         // prefix (key >> sb) of the first key
  std::vector<std::uint32_t> dir;  // keys of prefix pbase + q: [dir[q], dir[q + 1])
  std::vector<std::uint16_t> suffix;
  std::vector<K> full;
  CoverArray cover;

  std::size_t size() const noexcept { return cover.size(); }
  void set_keys(const std::vector<K>& keys, int sbits) {
    sb = sbits;
    if (sb == 0) {
      full = keys;
      return;
    }
    const std::uint64_t mask = (std::uint64_t{1} << sb) - 1;
    pbase = keys.empty() ? 0 : static_cast<std::uint64_t>(keys.front()) >> sb;
    const std::size_t n_pref =
        keys.empty() ? 0
                     : static_cast<std::size_t>((static_cast<std::uint64_t>(keys.back()) >> sb) -
                                                pbase + 1);
    dir.assign(n_pref + 1, 0);
    suffix.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto k = static_cast<std::uint64_t>(keys[i]);
      ++dir[static_cast<std::size_t>((k >> sb) - pbase) + 1];
      suffix[i] = static_cast<std::uint16_t>(k & mask);
    }
    for (std::size_t q = 0; q < n_pref; ++q) dir[q + 1] += dir[q];
  }
  std::uint64_t key(std::size_t i) const noexcept {
    if (sb == 0) return static_cast<std::uint64_t>(full[i]);
    const auto q = static_cast<std::size_t>(
        std::upper_bound(dir.begin(), dir.end(), static_cast<std::uint32_t>(i)) - dir.begin() -
        1);
    return ((pbase + q) << sb) | suffix[i];
  }
  std::size_t find(std::uint64_t key) const noexcept {
    if (sb == 0) {
      const auto it = std::lower_bound(full.begin(), full.end(), static_cast<K>(key));
      return it != full.end() && static_cast<std::uint64_t>(*it) == key
                 ? static_cast<std::size_t>(it - full.begin())
                 : npos;
    }
    const std::uint64_t pre = key >> sb;
    if (pre < pbase || pre - pbase + 1 >= dir.size()) return npos;
    const auto q = static_cast<std::size_t>(pre - pbase);
    const auto want = static_cast<std::uint16_t>(key & ((std::uint64_t{1} << sb) - 1));
    const auto b = suffix.begin() + dir[q], e = suffix.begin() + dir[q + 1];
    const auto it = std::lower_bound(b, e, want);
    return it != e && *it == want ? static_cast<std::size_t>(it - suffix.begin()) : npos;
  }
};

// Counts of the keys of one slab: an open-addressing table (count 0: empty slot), flushed
// (sorted and merged into the slab's sorted (keys, counts)) when it holds flush_at keys.
template <class K>
class SlabCounter {
 public:
  explicit SlabCounter(std::size_t flush_at) : flush_at_(flush_at) { grow(1024); }
  void add(K key) {
    std::size_t s = slot(key);
    while (cnt_[s] != 0 && keys_[s] != key) s = (s + 1) & mask_;
    if (cnt_[s] == 0) {
      keys_[s] = key;
      if (2 * ++used_ > cnt_.size()) {
        cnt_[s] = 1;
        if (used_ >= flush_at_) flush();
        else grow(2 * cnt_.size());
        return;
      }
    }
    ++cnt_[s];
  }
  // the sorted distinct keys and their counts (the table is emptied)
  void finish(std::vector<K>& keys, std::vector<std::uint32_t>& counts) {
    flush();
    keys.swap(out_keys_);
    counts.swap(out_counts_);
  }

 private:
  std::size_t slot(K key) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL) >>
                                    32) &
           mask_;
  }
  void grow(std::size_t cap) {
    std::vector<K> k2(cap);
    std::vector<std::uint32_t> c2(cap, 0);
    mask_ = cap - 1;
    for (std::size_t s = 0; s < cnt_.size(); ++s) {
      if (cnt_[s] == 0) continue;
      std::size_t t = slot(keys_[s]);
      while (c2[t] != 0) t = (t + 1) & mask_;
      k2[t] = keys_[s];
      c2[t] = cnt_[s];
    }
    keys_.swap(k2);
    cnt_.swap(c2);
  }
  void flush() {
    std::vector<std::pair<K, std::uint32_t>> run;
    run.reserve(used_);
    for (std::size_t s = 0; s < cnt_.size(); ++s)
      if (cnt_[s] != 0) run.emplace_back(keys_[s], cnt_[s]);
    std::sort(run.begin(), run.end());
    std::fill(cnt_.begin(), cnt_.end(), 0);
    used_ = 0;
    std::vector<K> nk;
    std::vector<std::uint32_t> nc;
    nk.reserve(out_keys_.size() + run.size());
    nc.reserve(out_keys_.size() + run.size());
    std::size_t a = 0, b = 0;
    while (a < out_keys_.size() || b < run.size()) {
      if (b == run.size() || (a < out_keys_.size() && out_keys_[a] < run[b].first)) {
        nk.push_back(out_keys_[a]);
        nc.push_back(out_counts_[a++]);
      } else if (a == out_keys_.size() || run[b].first < out_keys_[a]) {
        nk.push_back(run[b].first);
        nc.push_back(run[b++].second);
      } else {
        nk.push_back(out_keys_[a]);
        nc.push_back(out_counts_[a++] + run[b++].second);
      }
    }
    out_keys_.swap(nk);
    out_counts_.swap(nc);
  }

  std::size_t flush_at_, mask_ = 0, used_ = 0;
  std::vector<K> keys_;
  std::vector<std::uint32_t> cnt_;
  std::vector<K> out_keys_;
  std::vector<std::uint32_t> out_counts_;
};

// The grid points of slab [lo, hi) within r of some row, with their covers (the number of rows
// within r), from the rows of the cells whose first coordinate can reach the slab.
template <class K>
void build_slab(Slab<K>& sl, const MatRef& Y, const Level& lv, const SortedCells<K>& cells,
                std::size_t flush_at, int sbits) {
  const Index p = lv.p;
  const auto [c_lo, c_hi] = cells.range(lv.pk, static_cast<std::int64_t>(sl.lo) - lv.zhi,
                                        static_cast<std::int64_t>(sl.hi) - 1 - lv.zlo);
  SlabCounter<K> counter(flush_at);
  std::vector<double> dd(static_cast<std::size_t>(p * lv.nz));
  std::int32_t base[kMaxGridDim];
  for (std::size_t c = c_lo; c < c_hi; ++c) {
    for (std::int32_t q = cells.ptr[c]; q < cells.ptr[c + 1]; ++q) {
      const Index i = cells.rows[static_cast<std::size_t>(q)];
      lv.row_table(Y, i, base, dd.data());
      const std::int64_t c0 = base[0];
      const std::int64_t z0a = std::max<std::int64_t>(lv.zlo, sl.lo - c0);
      const std::int64_t z0b = std::min<std::int64_t>(lv.zhi, sl.hi - 1 - c0);
      if (z0a > z0b) continue;
      const Index ob = lv.zstart[static_cast<std::size_t>(z0a - lv.zlo)];
      const Index oe = lv.zstart[static_cast<std::size_t>(z0b - lv.zlo) + 1];
      const std::uint64_t base_key = lv.pk.pack(base);
      for (Index o = ob; o < oe; ++o)
        if (lv.dist2(dd.data(), o) <= lv.r2)
          counter.add(static_cast<K>(base_key + lv.off_key[static_cast<std::size_t>(o)]));
    }
  }
  std::vector<K> keys;
  std::vector<std::uint32_t> counts;
  counter.finish(keys, counts);
  if (keys.size() >= (std::size_t{1} << 32))  // the directory's 32-bit positions
    throw std::length_error("maxcover: more than 2^32 grid points in one slab");
  sl.set_keys(keys, sbits);
  std::vector<K>().swap(keys);
  sl.cover.assign(counts);
}

// One radius on the compact table: the picks of level l appended to res.
template <class K>
void level_compact(const MatRef& Y, const MaxCoverParams& params, const Level& lv, Index l,
                   std::int64_t m, MaxCoverResult& res, Index& out) {
  const Index n = Y.rows(), p = lv.p;
  const SortedCells<K> cells(Y, lv);

  // slabs of g_0: upper bounds of the incidences per value t of g_0, sum over the cells' first
  // coordinates c0 of rows(c0) * #offsets with z_0 = t - c0
  std::vector<std::pair<std::int64_t, double>> w;
  for (std::size_t c = 0; c < cells.keys.size();) {
    const std::int32_t c0 = lv.pk.first(cells.keys[c]);
    std::size_t e = c;
    while (e < cells.keys.size() && lv.pk.first(cells.keys[e]) == c0) ++e;
    const double rows_c0 = static_cast<double>(cells.ptr[e] - cells.ptr[c]);
    for (Index q = 0; q < lv.nz; ++q) {
      const double k =
          static_cast<double>(lv.zstart[static_cast<std::size_t>(q) + 1] -
                              lv.zstart[static_cast<std::size_t>(q)]);
      if (k > 0) w.emplace_back(static_cast<std::int64_t>(c0) + lv.zlo + q, rows_c0 * k);
    }
    c = e;
  }
  std::sort(w.begin(), w.end());
  const std::size_t flush_at =
      std::clamp<std::size_t>(static_cast<std::size_t>(n) / 2, std::size_t{1} << 16,
                              std::size_t{1} << 24);
  const double target = 4.0 * static_cast<double>(flush_at);  // ~1/4 of the bound are hits
  std::vector<Slab<K>> slabs;
  double acc = 0.0, total = 0.0;
  for (std::size_t q = 0; q < w.size();) {
    const std::int64_t t = w[q].first;
    double wt = 0.0;
    while (q < w.size() && w[q].first == t) wt += w[q++].second;
    total += wt;
    if (slabs.empty() || (acc > 0.0 && acc + wt > target)) {
      slabs.emplace_back();
      slabs.back().lo = static_cast<std::int32_t>(t);
      acc = 0.0;
    }
    acc += wt;
    slabs.back().hi = static_cast<std::int32_t>(t + 1);
  }
  const auto n_slabs = static_cast<Index>(slabs.size());
  // 2-byte key suffixes when their directories (one entry per value of the bits above the
  // low 16, over each slab's key range) hold at most max(n, 2^16) entries in all
  const int key_bits = lv.pk.bits * static_cast<int>(p);
  int sbits = 0;
  if (key_bits <= 16) {
    sbits = key_bits;
  } else {
    double entries = 0.0;
    for (const Slab<K>& sl : slabs)
      entries += std::ldexp(static_cast<double>(sl.hi - sl.lo),
                            key_bits - lv.pk.bits - 16) + 2.0;
    if (entries <= std::max(static_cast<double>(n), 65536.0)) sbits = 16;
  }
  const int build_threads = parallel::threads_for(
      params.n_threads, total * static_cast<double>(p) * parallel::kNsPerEntry);
  bool failed = false;
  std::atomic<bool> interrupted{false};
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(build_threads) schedule(dynamic, 1) if (build_threads > 1 && n_slabs > 1)
#endif
  for (Index s = 0; s < n_slabs; ++s) {
    if (interrupt::stop_in_region(interrupted)) continue;
    try {
      build_slab(slabs[static_cast<std::size_t>(s)], Y, lv, cells, flush_at, sbits);
    } catch (...) {
#if PRIVLEARN_HAS_OPENMP
#pragma omp atomic write
#endif
      failed = true;
    }
  }
  if (failed) throw std::bad_alloc();
  interrupt::throw_if(interrupted);
  release_free_memory();  // the slabs' work buffers

  // cover classes and the chunks of the member search (slab order = lexicographic order)
  std::int64_t n_grid = 0, cmax = 0;
  for (const Slab<K>& sl : slabs) {
    n_grid += static_cast<std::int64_t>(sl.size());
    for (std::size_t i = 0; i < sl.cover.size(); ++i)
      cmax = std::max<std::int64_t>(cmax, sl.cover.get(i));
  }
  std::vector<std::int64_t> size(static_cast<std::size_t>(cmax) + 1, 0);
  for (const Slab<K>& sl : slabs)
    for (std::size_t i = 0; i < sl.cover.size(); ++i) ++size[sl.cover.get(i)];
  res.n_grid.push_back(n_grid);
  struct Chunk {
    std::size_t slab, begin, end;
  };
  std::vector<Chunk> chunks;
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  for (std::size_t s = 0; s < slabs.size(); ++s)
    for (std::size_t b = 0; b < slabs[s].size(); b += kChunk)
      chunks.push_back({s, b, std::min(slabs[s].size(), b + kChunk)});
  const auto n_chunks = static_cast<Index>(chunks.size());
  std::vector<std::int64_t> chunk_count(chunks.size());
  const int threads = parallel::threads_for(
      params.n_threads, static_cast<double>(n_grid) * parallel::kNsPerEntry);

  // (slab, index) of the grid point g, or false
  auto find = [&slabs, &lv](const std::int32_t* g, std::size_t& s, std::size_t& i) {
    if (!lv.pk.in_range(g)) return false;
    const auto it = std::upper_bound(slabs.begin(), slabs.end(), g[0],
                                     [](std::int32_t v, const Slab<K>& sl) { return v < sl.lo; });
    if (it == slabs.begin()) return false;
    const Slab<K>& sl = *(it - 1);
    if (g[0] >= sl.hi) return false;
    const std::size_t at = sl.find(lv.pk.pack(g));
    if (at == Slab<K>::npos) return false;
    s = static_cast<std::size_t>(it - 1 - slabs.begin());
    i = at;
    return true;
  };

  std::vector<std::uint8_t> covered(static_cast<std::size_t>(n), 0);
  std::vector<std::int32_t> fresh;
  std::vector<std::int64_t> sizes;
  std::vector<double> dd(static_cast<std::size_t>(p * lv.nz));
  std::vector<std::pair<K, std::int32_t>> fresh_keys;  // (cell key, row) of the newly covered
  std::vector<std::uint32_t> hits(static_cast<std::size_t>(lv.n_off), 0);
  const bool exact_greedy = std::isinf(params.eps_pick);
  for (Index t = 0; t < params.picks; ++t) {
    interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
    const auto row = static_cast<std::uint64_t>(l * params.picks + t);
    std::int64_t choice = 0;  // 0: uniform remainder, c >= 1: class c
    if (exact_greedy) {
      choice = cmax;
    } else {
      sizes.assign(size.begin(), size.begin() + cmax + 1);
      choice = params.select(l, row, m, sizes);
      checks::require(choice >= 0 && choice <= cmax &&
                          (choice == 0 || size[static_cast<std::size_t>(choice)] > 0),
                      "maxcover: the class selection returned an empty class");
    }
    random::RowCursor cursor(params.key, params.stream, row, kMemberOffset);
    std::int32_t g[kMaxGridDim];
    bool picked = false;
    if (choice > 0) {
      // the j-th grid point of class `choice` in lexicographic order: counts per chunk, then a
      // scan of the chunk that holds it
      const auto j = static_cast<std::int64_t>(
          cursor.next_below(static_cast<std::uint64_t>(size[static_cast<std::size_t>(choice)])));
      const auto want = static_cast<std::uint32_t>(choice);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && n_chunks >= 4)
#endif
      for (Index b = 0; b < n_chunks; ++b) {
        const Chunk& ch = chunks[static_cast<std::size_t>(b)];
        chunk_count[static_cast<std::size_t>(b)] =
            slabs[ch.slab].cover.count(ch.begin, ch.end, want);
      }
      std::int64_t rest = j;
      std::size_t b = 0;
      while (rest >= chunk_count[b]) rest -= chunk_count[b++];
      const Chunk& ch = chunks[b];
      const Slab<K>& sl = slabs[ch.slab];
      for (std::size_t i = ch.begin;; ++i) {
        if (sl.cover.get(i) != want) continue;
        if (rest-- == 0) {
          lv.pk.unpack(sl.key(i), g);
          break;
        }
      }
      picked = true;
    } else {
      // a uniform grid point of the cube with zero cover (rejection: redraw while covered)
      while (true) {
        for (Index d = 0; d < p; ++d)
          g[d] = static_cast<std::int32_t>(
              static_cast<std::int64_t>(cursor.next_below(static_cast<std::uint64_t>(2 * m + 1))) -
              m);
        std::size_t s = 0, i = 0;
        if (!find(g, s, i) || slabs[s].cover.get(i) == 0) break;
      }
    }
    for (Index d = 0; d < p; ++d) res.centers(out, d) = lv.unit * static_cast<double>(g[d]);
    std::int64_t newly = 0;
    if (picked) {
      // the still uncovered rows within r of g (the distance check of grid_cover, with the
      // same operations), in any order: only the covers matter
      fresh.clear();
      std::int32_t b[kMaxGridDim];
      for (Index o = 0; o < lv.n_off; ++o) {
        for (Index d = 0; d < p; ++d)
          b[d] = g[d] - (*lv.offsets)[static_cast<std::size_t>(o * p + d)];
        if (!lv.pk.in_range(b)) continue;
        const std::int64_t cell = cells.find(static_cast<K>(lv.pk.pack(b)));
        if (cell < 0) continue;
        for (std::int32_t q = cells.ptr[static_cast<std::size_t>(cell)];
             q < cells.ptr[static_cast<std::size_t>(cell) + 1]; ++q) {
          const std::int32_t x = cells.rows[static_cast<std::size_t>(q)];
          if (covered[static_cast<std::size_t>(x)]) continue;
          double s2 = 0.0;
          for (Index d = 0; d < p; ++d) {
            const double dv = Y(x, d) - lv.unit * static_cast<double>(g[d]);
            s2 += dv * dv;
          }
          if (s2 <= lv.r2) {
            covered[static_cast<std::size_t>(x)] = 1;
            fresh.push_back(x);
          }
        }
      }
      newly = static_cast<std::int64_t>(fresh.size());
      // every grid point within r of a newly covered row loses one cover (recomputed from the
      // offsets: the same checks as the table's build)
      // Rows of one cell share their candidate grid points base + z: the hits are counted per
      // offset over the cell's newly covered rows, then each grid point is found once and
      // loses its count.
      std::int32_t base[kMaxGridDim];
      fresh_keys.clear();
      for (const std::int32_t x : fresh) {
        for (Index d = 0; d < p; ++d)
          base[d] = static_cast<std::int32_t>(std::floor(Y(x, d) / lv.unit));
        fresh_keys.emplace_back(static_cast<K>(lv.pk.pack(base)), x);
      }
      std::sort(fresh_keys.begin(), fresh_keys.end());
      for (std::size_t f = 0; f < fresh_keys.size();) {
        std::size_t e = f;
        while (e < fresh_keys.size() && fresh_keys[e].first == fresh_keys[f].first) {
          lv.row_table(Y, fresh_keys[e].second, base, dd.data());
          for (Index o = 0; o < lv.n_off; ++o)
            hits[static_cast<std::size_t>(o)] += lv.dist2(dd.data(), o) <= lv.r2;
          ++e;
        }
        const std::uint64_t base_key = static_cast<std::uint64_t>(fresh_keys[f].first);
        f = e;
        for (Index q = 0; q < lv.nz; ++q) {
          const Index ob = lv.zstart[static_cast<std::size_t>(q)];
          const Index oe = lv.zstart[static_cast<std::size_t>(q) + 1];
          const std::int64_t g0 = static_cast<std::int64_t>(base[0]) + lv.zlo + q;
          Slab<K>* sl = nullptr;
          for (Index o = ob; o < oe; ++o) {
            const std::uint32_t k = hits[static_cast<std::size_t>(o)];
            if (k == 0) continue;
            hits[static_cast<std::size_t>(o)] = 0;
            if (sl == nullptr) {
              const auto it = std::upper_bound(
                  slabs.begin(), slabs.end(), g0,
                  [](std::int64_t v, const Slab<K>& a) { return v < a.lo; });
              if (it == slabs.begin() || g0 >= (it - 1)->hi)  // (no message string per point)
                checks::fail("maxcover: internal error (a covered grid point is missing)");
              sl = &*(it - 1);
            }
            const std::size_t i =
                sl->find(base_key + lv.off_key[static_cast<std::size_t>(o)]);
            if (i == Slab<K>::npos)
              checks::fail("maxcover: internal error (a covered grid point is missing)");
            const std::uint32_t c = sl->cover.get(i);
            sl->cover.set(i, c - k);
            --size[c];
            ++size[c - k];
          }
        }
      }
      while (cmax > 0 && size[static_cast<std::size_t>(cmax)] == 0) --cmax;
    }
    res.level.push_back(l);
    res.covered.push_back(newly);
    res.remainder.push_back(choice == 0 ? 1 : 0);
    ++out;
  }
}

// Renumbers the grid ids of gc in lexicographic order of the coordinates (as signed integers).
void lex_renumber(GridCover& gc) {
  const Index p = gc.dim, n_grid = gc.n_grid();
  std::vector<std::int32_t> perm(static_cast<std::size_t>(n_grid));
  for (Index g = 0; g < n_grid; ++g) perm[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(g);
  const std::int32_t* c = gc.coords.data();
  std::sort(perm.begin(), perm.end(), [c, p](std::int32_t a, std::int32_t b) {
    return std::lexicographical_compare(c + static_cast<Index>(a) * p, c + (a + Index{1}) * p,
                                        c + static_cast<Index>(b) * p, c + (b + Index{1}) * p);
  });
  std::vector<std::int32_t> rank(static_cast<std::size_t>(n_grid));
  std::vector<std::int32_t> coords(gc.coords.size());
  for (Index k = 0; k < n_grid; ++k) {
    const auto g = static_cast<Index>(perm[static_cast<std::size_t>(k)]);
    rank[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(k);
    std::copy(c + g * p, c + (g + 1) * p, coords.begin() + k * p);
  }
  gc.coords.swap(coords);
  for (std::int32_t& g : gc.point_grid) g = rank[static_cast<std::size_t>(g)];
}

}  // namespace

MaxCoverResult maxcover_candidates(const MatRef& Y, const MaxCoverParams& params) {
  const Index n = Y.rows(), p = Y.cols();
  checks::require(n >= 1, "Y must have at least one row");
  checks::require(p >= 1 && p <= kMaxGridDim, "Y must have between 1 and 16 columns");
  checks::all_finite(Y, "Y");
  for (Index i = 0; i < n; ++i)
    checks::require(Y.row(i).squaredNorm() <= 1.0 + 1e-9,
                    "row " + std::to_string(i) + " of Y lies outside the unit ball");
  checks::require(!params.radii.empty(), "radii must not be empty");
  for (double r : params.radii) {
    checks::positive(r, "radius");
    checks::require(r <= 4.0, "radii must be <= 4 (the unit ball has diameter 2)");
  }
  checks::positive(params.grid_factor, "grid_factor");
  checks::require(params.picks >= 1, "picks must be >= 1");
  checks::require(params.eps_pick > 0.0 && !std::isnan(params.eps_pick),
                  "eps_pick must be > 0 (or +inf)");
  const auto n_levels = static_cast<Index>(params.radii.size());
  checks::require(n_levels * params.picks < (Index{1} << 32), "too many picks");
  const bool exact_greedy = std::isinf(params.eps_pick);
  checks::require(exact_greedy || static_cast<bool>(params.select),
                  "maxcover: a finite eps_pick needs the class selection (select)");
  std::vector<std::int64_t> sizes;
  parallel::check_threads(params.n_threads);

  MaxCoverResult res;
  res.centers.resize(n_levels * params.picks, p);
  Index out = 0;
  for (Index l = 0; l < n_levels; ++l) {
    if (l > 0) release_free_memory();  // the previous radius's table
    const double radius = params.radii[static_cast<std::size_t>(l)];
    const double unit = params.grid_factor * radius / std::sqrt(static_cast<double>(p));
    const double m_real = std::floor((1.0 + radius) / unit) + 1.0;
    checks::require(m_real < 1e9, "radius too small for the grid (unit below 1e-9)");
    const auto m = static_cast<std::int64_t>(m_real);
    const std::vector<std::int32_t> offsets =
        grid_offsets(p, radius / unit, params.max_offsets);
    res.n_offsets.push_back(static_cast<std::int64_t>(offsets.size()) / p);
    const Index n_off = static_cast<Index>(offsets.size()) / p;
    const double r2 = radius * radius;

    // The packing of grid_cover: every cell, grid point within r of a point of the ball, and
    // point of the cube {-m..m}^p has coordinates in (-bound, bound).
    const double bound = (1.0 + radius) / unit + 2.0;
    const auto span = static_cast<std::uint64_t>(2.0 * bound + 3.0);
    int bits = 1;
    while ((std::uint64_t{1} << bits) < span) ++bits;
    if (bits * p <= 63) {
      Level lv;
      lv.p = p;
      lv.unit = unit;
      lv.r2 = r2;
      lv.pk.p = p;
      lv.pk.bits = bits;
      lv.pk.off = static_cast<std::int64_t>(bound) + 1;
      lv.pk.span = static_cast<std::int64_t>(std::uint64_t{1} << bits);
      lv.offsets = &offsets;
      lv.n_off = n_off;
      lv.zlo = *std::min_element(offsets.begin(), offsets.end());
      lv.zhi = *std::max_element(offsets.begin(), offsets.end());
      lv.nz = static_cast<Index>(lv.zhi) - lv.zlo + 1;
      lv.table_idx.resize(offsets.size());
      lv.off_key.resize(static_cast<std::size_t>(n_off));
      lv.zstart.assign(static_cast<std::size_t>(lv.nz) + 1, 0);
      for (Index o = 0; o < n_off; ++o) {
        const std::int32_t* z = offsets.data() + o * p;
        for (Index j = 0; j < p; ++j)
          lv.table_idx[static_cast<std::size_t>(o * p + j)] =
              static_cast<std::int32_t>(j * lv.nz + (z[j] - lv.zlo));
        lv.off_key[static_cast<std::size_t>(o)] = lv.pk.delta(z);
        ++lv.zstart[static_cast<std::size_t>(z[0] - lv.zlo) + 1];
      }
      for (Index q = 0; q < lv.nz; ++q)
        lv.zstart[static_cast<std::size_t>(q) + 1] += lv.zstart[static_cast<std::size_t>(q)];
      if (bits * p <= 32)
        level_compact<std::uint32_t>(Y, params, lv, l, m, res, out);
      else
        level_compact<std::uint64_t>(Y, params, lv, l, m, res, out);
      continue;
    }

    // Wide coordinates (bits * p > 63: many projected dimensions and a fine grid): the full
    // incidence of grid_cover, its ids renumbered in lexicographic order of the grid points
    // (the order of the member draw; the same picks as the compact table).
    GridCover gc = grid_cover(Y, radius, unit, offsets, params.n_threads, false);
    release_free_memory();  // grid_cover's work arrays
    lex_renumber(gc);
    const CellIndex cells(Y, unit);
    res.n_grid.push_back(gc.n_grid());
    CoverState st(gc);
    std::vector<std::uint8_t> covered(static_cast<std::size_t>(n), 0);
    std::unique_ptr<CoordIndex> lookup;  // built on the first remainder pick
    const Index n_grid = gc.n_grid();
    std::vector<std::int32_t> fresh;  // newly covered points of a pick
    const Index chunk = 1 << 16;      // grid ids per block of the member search
    const Index n_chunks = (n_grid + chunk - 1) / chunk;
    std::vector<std::int64_t> chunk_count(static_cast<std::size_t>(n_chunks));
    // The member search of a pick reads n_grid covers (~kNsPerEntry each): one thread below
    // parallel::kMinThreadWorkNs per thread (a few million grid points). One region per pick,
    // not one around the pick loop: each pick depends on the covers the previous one changed,
    // so a persistent region would still need a barrier per pick (the cost the policy avoids).
    const int threads =
        parallel::threads_for(params.n_threads, static_cast<double>(n_grid) * parallel::kNsPerEntry);

    for (Index t = 0; t < params.picks; ++t) {
      interrupt::poll();  // Ctrl-C (privlearn/interrupt.hpp)
      const auto row = static_cast<std::uint64_t>(l * params.picks + t);
      std::int64_t choice = 0;  // 0: uniform remainder, c >= 1: class c
      if (exact_greedy) {
        choice = st.cmax;
      } else {
        sizes.assign(st.size.begin(), st.size.begin() + st.cmax + 1);
        choice = params.select(l, row, m, sizes);
        checks::require(choice >= 0 && choice <= st.cmax &&
                            (choice == 0 || st.size[static_cast<std::size_t>(choice)] > 0),
                        "maxcover: the class selection returned an empty class");
      }
      random::RowCursor cursor(params.key, params.stream, row, kMemberOffset);
      std::int64_t picked = -1;  // grid id, or -1 for a grid point with zero cover
      if (choice > 0) {
        // the j-th smallest (lexicographic) grid id with cover == choice: counts per fixed chunk of ids, then a
        // scan of the chunk that holds it
        const auto n_choice =
            static_cast<std::uint64_t>(st.size[static_cast<std::size_t>(choice)]);
        const auto j = static_cast<std::int64_t>(cursor.next_below(n_choice));
        const auto want = static_cast<std::int32_t>(choice);
#if PRIVLEARN_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && n_chunks >= 4)
#endif
        for (Index b = 0; b < n_chunks; ++b) {
          std::int64_t c = 0;
          for (Index g = b * chunk; g < std::min(n_grid, (b + 1) * chunk); ++g)
            c += st.cover[static_cast<std::size_t>(g)] == want;
          chunk_count[static_cast<std::size_t>(b)] = c;
        }
        std::int64_t rest = j;
        Index b = 0;
        while (rest >= chunk_count[static_cast<std::size_t>(b)])
          rest -= chunk_count[static_cast<std::size_t>(b++)];
        for (Index g = b * chunk;; ++g) {
          if (st.cover[static_cast<std::size_t>(g)] != want) continue;
          if (rest-- == 0) {
            picked = g;
            break;
          }
        }
        for (Index d = 0; d < p; ++d)
          res.centers(out, d) =
              unit * static_cast<double>(gc.coords[static_cast<std::size_t>(picked * p + d)]);
      } else {
        // a uniform grid point of the cube with zero cover (rejection: redraw while covered)
        std::int32_t z[kMaxGridDim];
        while (true) {
          for (Index d = 0; d < p; ++d)
            z[d] = static_cast<std::int32_t>(
                static_cast<std::int64_t>(
                    cursor.next_below(static_cast<std::uint64_t>(2 * m + 1))) -
                m);
          std::int64_t g = -1;
          if (n_grid > 0) {
            if (!lookup) lookup = std::make_unique<CoordIndex>(gc);
            g = lookup->find(z);
          }
          if (g < 0 || st.cover[static_cast<std::size_t>(g)] == 0) break;
        }
        for (Index d = 0; d < p; ++d) res.centers(out, d) = unit * static_cast<double>(z[d]);
      }
      std::int64_t newly = 0;
      if (picked >= 0) {
        // the still uncovered points within r of g (the distance check of grid_cover, with
        // the same operations), in any order: only the covers matter
        fresh.clear();
        const std::int32_t* g = gc.coords.data() + picked * p;
        std::int32_t b[kMaxGridDim];
        for (Index o = 0; o < n_off; ++o) {
          for (Index d = 0; d < p; ++d) b[d] = g[d] - offsets[static_cast<std::size_t>(o * p + d)];
          const std::int64_t cell = cells.find(b);
          if (cell < 0) continue;
          for (const std::int32_t* x = cells.begin(cell); x != cells.end(cell); ++x) {
            if (covered[static_cast<std::size_t>(*x)]) continue;
            double s = 0.0;
            for (Index d = 0; d < p; ++d) {
              const double dd = Y(*x, d) - unit * static_cast<double>(g[d]);
              s += dd * dd;
            }
            if (s <= r2) {
              covered[static_cast<std::size_t>(*x)] = 1;
              fresh.push_back(*x);
            }
          }
        }
        newly = static_cast<std::int64_t>(fresh.size());
        for (std::int32_t x : fresh)
          for (std::int64_t e = gc.point_ptr[static_cast<std::size_t>(x)];
               e < gc.point_ptr[static_cast<std::size_t>(x) + 1]; ++e) {
            const std::int32_t c =
                st.cover[static_cast<std::size_t>(gc.point_grid[static_cast<std::size_t>(e)])]--;
            --st.size[static_cast<std::size_t>(c)];
            ++st.size[static_cast<std::size_t>(c) - 1];
          }
        while (st.cmax > 0 && st.size[static_cast<std::size_t>(st.cmax)] == 0) --st.cmax;
      }
      res.level.push_back(l);
      res.covered.push_back(newly);
      res.remainder.push_back(choice == 0 ? 1 : 0);
      ++out;
    }
  }
  release_free_memory();  // the last radius's cover
  return res;
}

}  // namespace privlearn::cluster
