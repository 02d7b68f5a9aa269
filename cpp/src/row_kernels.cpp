#include "privlearn/row_kernels.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "privlearn/fixed_sum.hpp"
#include "privlearn/vec4.hpp"

namespace privlearn::row_kernels {

namespace {

#if defined(PRIVLEARN_HAS_VECTOR_EXTENSION)  // four-double lanes (vec4.hpp)
#define PRIVLEARN_ROW_INLINE __attribute__((always_inline)) inline

template <bool kDot, bool kSq, bool kScaled>
PRIVLEARN_ROW_INLINE void lanes_body(const double* x, const double* u, Index n4, double s,
                                     double* d, double* q) {
  V4 vd = kDot ? v4_load(d) : v4_zero();
  V4 vq = kSq ? v4_load(q) : v4_zero();
  const V4 vs = v4_splat(s);
  for (Index k = 0; k < n4; k += 4) {
    V4 v = v4_load(x + k);
    if (kScaled) v = v * vs;
    if (kDot) vd = vd + v * v4_load(u + k);
    if (kSq) vq = vq + v * v;
  }
  if (kDot) v4_store(d, vd);
  if (kSq) v4_store(q, vq);
}

// Two rows at once, each with its own lanes (the bits of two lanes_body calls): the adds of
// one row's chains fill the other's add latency.
template <bool kScaled>
PRIVLEARN_ROW_INLINE void lanes_body2(const double* x0, const double* x1, const double* u,
                                      Index n4, double s0, double s1, double* d0, double* q0,
                                      double* d1, double* q1) {
  V4 vd0 = v4_load(d0), vq0 = v4_load(q0), vd1 = v4_load(d1), vq1 = v4_load(q1);
  const V4 vs0 = v4_splat(s0), vs1 = v4_splat(s1);
  for (Index k = 0; k < n4; k += 4) {
    const V4 vu = v4_load(u + k);
    V4 a = v4_load(x0 + k), b = v4_load(x1 + k);
    if (kScaled) {
      a = a * vs0;
      b = b * vs1;
    }
    vd0 = vd0 + a * vu;
    vq0 = vq0 + a * a;
    vd1 = vd1 + b * vu;
    vq1 = vq1 + b * b;
  }
  v4_store(d0, vd0);
  v4_store(q0, vq0);
  v4_store(d1, vd1);
  v4_store(q1, vq1);
}

#else  // no vector extension: the scalar definitions
#define PRIVLEARN_ROW_INLINE inline

template <bool kScaled>
inline void lanes_body2(const double* x0, const double* x1, const double* u, Index n4,
                        double s0, double s1, double* d0, double* q0, double* d1, double* q1) {
  for (Index k = 0; k < n4; k += 4)
    for (int l = 0; l < 4; ++l) {
      const double a = kScaled ? x0[k + l] * s0 : x0[k + l];
      const double b = kScaled ? x1[k + l] * s1 : x1[k + l];
      d0[l] += a * u[k + l];
      q0[l] += a * a;
      d1[l] += b * u[k + l];
      q1[l] += b * b;
    }
}

template <bool kDot, bool kSq, bool kScaled>
inline void lanes_body(const double* x, const double* u, Index n4, double s, double* d,
                       double* q) {
  for (Index k = 0; k < n4; k += 4)
    for (int l = 0; l < 4; ++l) {
      const double v = kScaled ? x[k + l] * s : x[k + l];
      if (kDot) d[l] += v * u[k + l];
      if (kSq) q[l] += v * v;
    }
}

#endif

PRIVLEARN_VEC4_CLONES void dot_sq(const double* x, const double* u, Index n4, double* d,
                                 double* q) {
  lanes_body<true, true, false>(x, u, n4, 1.0, d, q);
}
PRIVLEARN_VEC4_CLONES void dot_sq_scaled(const double* x, const double* u, Index n4, double s,
                                        double* d, double* q) {
  lanes_body<true, true, true>(x, u, n4, s, d, q);
}
PRIVLEARN_VEC4_CLONES void dot_only(const double* x, const double* u, Index n4, double* d) {
  lanes_body<true, false, false>(x, u, n4, 1.0, d, nullptr);
}
PRIVLEARN_VEC4_CLONES void dot_scaled(const double* x, const double* u, Index n4, double s,
                                     double* d) {
  lanes_body<true, false, true>(x, u, n4, s, d, nullptr);
}
PRIVLEARN_VEC4_CLONES void sq_only(const double* x, Index n4, double* q) {
  lanes_body<false, true, false>(x, nullptr, n4, 1.0, nullptr, q);
}
PRIVLEARN_VEC4_CLONES void sq_scaled(const double* x, Index n4, double s, double* q) {
  lanes_body<false, true, true>(x, nullptr, n4, s, nullptr, q);
}
PRIVLEARN_VEC4_CLONES void dot_sq_pair(const double* x0, const double* x1, const double* u,
                                      Index n4, double* d0, double* q0, double* d1, double* q1) {
  lanes_body2<false>(x0, x1, u, n4, 1.0, 1.0, d0, q0, d1, q1);
}
PRIVLEARN_VEC4_CLONES void dot_sq_pair_scaled(const double* x0, const double* x1,
                                             const double* u, Index n4, double s0, double s1,
                                             double* d0, double* q0, double* d1, double* q1) {
  lanes_body2<true>(x0, x1, u, n4, s0, s1, d0, q0, d1, q1);
}

// ---- Fixed-point terms of a block of rows (add_small_units_rows) -------------------------
// acc[k] += sum_r int64(trunc(a[r] * v_rk)), v_rk = x[r stride + k] (times s[r] when scaled),
// every |term| < 2^31. The sum is modular int64 arithmetic, so the order of the terms does not
// change it: each column block of acc is held in a register while every row's terms are added,
// then stored once (a row at a time, the block was loaded and stored per row). Where the CPU has
// AVX-512DQ, a product converts straight to int64 (vcvttpd2qq: for |t| < 2^31 the truncation
// through int32 gives the same integer); with AVX2 it converts through int32 and sign-extends
// (issue 32, item 1: GCC's code for the vector-extension version of this conversion spent five
// shuffle-port operations per four terms).
template <bool kScaled>
inline void add_rows_scalar(const double* x, Index stride, Index n_rows, Index m, const double* s,
                            const double* a, std::int64_t* acc) {
  for (Index r = 0; r < n_rows; ++r) {
    const double* xr = x + r * stride;
    for (Index k = 0; k < m; ++k)
      fixed::add_small_units(acc[k], a[r] * (kScaled ? xr[k] * s[r] : xr[k]));
  }
}
using AddRowsFn = void (*)(const double*, Index, Index, Index, const double*, const double*,
                           std::int64_t*);
void add_rows_default(const double* x, Index stride, Index n_rows, Index m, const double* s,
                      const double* a, std::int64_t* acc) {
  if (s != nullptr)
    add_rows_scalar<true>(x, stride, n_rows, m, s, a, acc);
  else
    add_rows_scalar<false>(x, stride, n_rows, m, s, a, acc);
}

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define PRIVLEARN_ADD_ROWS_DISPATCH 1
#define PRIVLEARN_AVX512DQ_INLINE __attribute__((target("avx512f,avx512dq"))) inline
#define PRIVLEARN_AVX2_INLINE __attribute__((target("avx2"))) inline
// The vector operations of the two kernels: W doubles a register, the products converted to
// int64 (AVX-512DQ directly; AVX2 through int32, sign-extended). The kernels below are
// `flatten`: every call in them, add_rows_blocks's included, is inlined into the function built
// for the instruction set.
struct Avx512Ops {
  static constexpr Index W = 8;
  using D = __m512d;
  using I = __m512i;
  PRIVLEARN_AVX512DQ_INLINE static D load(const double* p) { return _mm512_loadu_pd(p); }
  PRIVLEARN_AVX512DQ_INLINE static D splat(double v) { return _mm512_set1_pd(v); }
  PRIVLEARN_AVX512DQ_INLINE static D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  PRIVLEARN_AVX512DQ_INLINE static I load_i(const std::int64_t* p) {
    return _mm512_loadu_si512(p);
  }
  PRIVLEARN_AVX512DQ_INLINE static void store_i(std::int64_t* p, I v) {
    _mm512_storeu_si512(p, v);
  }
  PRIVLEARN_AVX512DQ_INLINE static I add_units(I acc, D t) {
    return _mm512_add_epi64(acc, _mm512_cvttpd_epi64(t));
  }
};
struct Avx2Ops {
  static constexpr Index W = 4;
  using D = __m256d;
  using I = __m256i;
  PRIVLEARN_AVX2_INLINE static D load(const double* p) { return _mm256_loadu_pd(p); }
  PRIVLEARN_AVX2_INLINE static D splat(double v) { return _mm256_set1_pd(v); }
  PRIVLEARN_AVX2_INLINE static D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  PRIVLEARN_AVX2_INLINE static I load_i(const std::int64_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  PRIVLEARN_AVX2_INLINE static void store_i(std::int64_t* p, I v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  PRIVLEARN_AVX2_INLINE static I add_units(I acc, D t) {
    return _mm256_add_epi64(acc, _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(t)));
  }
};

// The columns [k, k + 2 W ...) while two whole registers fit (two independent chains of adds):
// each pair of acc blocks held in registers while every row's terms are added. Returns the
// first column left.
template <class Ops, bool kScaled>
inline Index add_rows_blocks(const double* x, Index stride, Index n_rows, Index m,
                             const double* s, const double* a, std::int64_t* acc, Index k) {
  constexpr Index W = Ops::W;
  for (; k + 2 * W <= m; k += 2 * W) {
    typename Ops::I t0 = Ops::load_i(acc + k), t1 = Ops::load_i(acc + k + W);
    for (Index r = 0; r < n_rows; ++r) {
      const double* xr = x + r * stride + k;
      typename Ops::D v0 = Ops::load(xr), v1 = Ops::load(xr + W);
      if (kScaled) {
        const typename Ops::D vs = Ops::splat(s[r]);
        v0 = Ops::mul(v0, vs);
        v1 = Ops::mul(v1, vs);
      }
      const typename Ops::D va = Ops::splat(a[r]);
      t0 = Ops::add_units(t0, Ops::mul(va, v0));
      t1 = Ops::add_units(t1, Ops::mul(va, v1));
    }
    Ops::store_i(acc + k, t0);
    Ops::store_i(acc + k + W, t1);
  }
  return k;
}

template <bool kScaled>
PRIVLEARN_AVX512DQ_INLINE void add_rows_avx512_body(const double* x, Index stride, Index n_rows,
                                                    Index m, const double* s, const double* a,
                                                    std::int64_t* acc) {
  Index k = add_rows_blocks<Avx512Ops, kScaled>(x, stride, n_rows, m, s, a, acc, 0);
  for (; k < m; k += 8) {  // the last block, masked to the columns left
    const __mmask8 mask = m - k >= 8 ? 0xFF : static_cast<__mmask8>((1u << (m - k)) - 1);
    __m512i t = _mm512_maskz_loadu_epi64(mask, acc + k);
    for (Index r = 0; r < n_rows; ++r) {
      __m512d v = _mm512_maskz_loadu_pd(mask, x + r * stride + k);
      if (kScaled) v = _mm512_mul_pd(v, _mm512_set1_pd(s[r]));
      t = Avx512Ops::add_units(t, _mm512_mul_pd(_mm512_set1_pd(a[r]), v));
    }
    _mm512_mask_storeu_epi64(acc + k, mask, t);
  }
}
__attribute__((target("avx512f,avx512dq"), flatten)) void add_rows_avx512(
    const double* x, Index stride, Index n_rows, Index m, const double* s, const double* a,
    std::int64_t* acc) {
  if (s != nullptr)
    add_rows_avx512_body<true>(x, stride, n_rows, m, s, a, acc);
  else
    add_rows_avx512_body<false>(x, stride, n_rows, m, s, a, acc);
}
template <bool kScaled>
PRIVLEARN_AVX2_INLINE void add_rows_avx2_body(const double* x, Index stride, Index n_rows,
                                              Index m, const double* s, const double* a,
                                              std::int64_t* acc) {
  Index k = 0;
  // One row in place (DP-SCD's visits): no loop over rows (10k rows, in cache: DP-SCD epoch
  // 0.98x, paired median of 11 rounds; 1M rows: 1.00x).
  if (n_rows == 1) {
    const __m256d va = _mm256_set1_pd(a[0]), vs = _mm256_set1_pd(kScaled ? s[0] : 1.0);
    for (; k + 4 <= m; k += 4) {
      __m256d v = _mm256_loadu_pd(x + k);
      if (kScaled) v = _mm256_mul_pd(v, vs);
      Avx2Ops::store_i(acc + k,
                       Avx2Ops::add_units(Avx2Ops::load_i(acc + k), _mm256_mul_pd(va, v)));
    }
  }
  k = add_rows_blocks<Avx2Ops, kScaled>(x, stride, n_rows, m, s, a, acc, k);
  if (k < m) add_rows_scalar<kScaled>(x + k, stride, n_rows, m - k, s, a, acc + k);
}
__attribute__((target("avx2"), flatten)) void add_rows_avx2(
    const double* x, Index stride, Index n_rows, Index m, const double* s, const double* a,
    std::int64_t* acc) {
  if (s != nullptr)
    add_rows_avx2_body<true>(x, stride, n_rows, m, s, a, acc);
  else
    add_rows_avx2_body<false>(x, stride, n_rows, m, s, a, acc);
}
// The kernel for `isa`, or nullptr when this CPU (or build) lacks it.
AddRowsFn add_rows_for(KernelIsa isa) noexcept {
  __builtin_cpu_init();
  switch (isa) {
    case KernelIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
                 ? add_rows_avx512
                 : nullptr;
    case KernelIsa::avx2:
      return __builtin_cpu_supports("avx2") ? add_rows_avx2 : nullptr;
    case KernelIsa::scalar:
      return add_rows_default;
  }
  return nullptr;
}
#else
AddRowsFn add_rows_for(KernelIsa isa) noexcept {
  return isa == KernelIsa::scalar ? add_rows_default : nullptr;
}
#endif
AddRowsFn pick_add_rows() noexcept {
  for (const KernelIsa isa : {KernelIsa::avx512, KernelIsa::avx2})
    if (AddRowsFn fn = add_rows_for(isa)) return fn;
  return add_rows_default;
}
// One row at a time (DP-SCD's visits, rows in place): the AVX2 kernel even where the CPU has
// AVX-512. A row of X is as aligned as its width makes it (100 doubles: every other row starts
// mid-line), and a 512-bit load of such a row spans two lines on every block (issue 32, 1M x 100
// DP-SCD epoch, paired medians of 9 rounds: AVX2 0.978x the AVX-512 kernel; both below the
// vector-extension loop they replaced, AVX-512 0.974x).
AddRowsFn pick_add_row() noexcept {
  if (AddRowsFn fn = add_rows_for(KernelIsa::avx2)) return fn;
  return add_rows_default;
}

}  // namespace

void lanes(const double* x, const double* u, Index n4, bool scaled, double s, double* d,
           double* q) {
  if (n4 <= 0) return;
  if (u != nullptr && q != nullptr) {
    scaled ? dot_sq_scaled(x, u, n4, s, d, q) : dot_sq(x, u, n4, d, q);
  } else if (u != nullptr) {
    scaled ? dot_scaled(x, u, n4, s, d) : dot_only(x, u, n4, d);
  } else if (q != nullptr) {
    scaled ? sq_scaled(x, n4, s, q) : sq_only(x, n4, q);
  }
}

void lanes_pair(const double* x0, const double* x1, const double* u, Index n4, bool scaled,
                double s0, double s1, double* d0, double* q0, double* d1, double* q1) {
  if (n4 <= 0) return;
  if (scaled)
    dot_sq_pair_scaled(x0, x1, u, n4, s0, s1, d0, q0, d1, q1);
  else
    dot_sq_pair(x0, x1, u, n4, d0, q0, d1, q1);
}

void add_small_units(const double* x, Index m, bool scaled, double s, double a,
                     std::int64_t* acc) {
  static const AddRowsFn one = pick_add_row();
  one(x, m, 1, m, scaled ? &s : nullptr, &a, acc);
}

void add_small_units_rows(const double* x, Index stride, Index n_rows, Index m, const double* s,
                          const double* a, std::int64_t* acc) {
  static const AddRowsFn fn = pick_add_rows();
  fn(x, stride, n_rows, m, s, a, acc);
}

bool add_small_units_rows_isa(KernelIsa isa, const double* x, Index stride, Index n_rows,
                              Index m, const double* s, const double* a, std::int64_t* acc) {
  const AddRowsFn fn = add_rows_for(isa);
  if (fn == nullptr) return false;
  fn(x, stride, n_rows, m, s, a, acc);
  return true;
}

}  // namespace privlearn::row_kernels
