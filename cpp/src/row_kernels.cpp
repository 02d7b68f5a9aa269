#include "privlearn/row_kernels.hpp"

#include <cstring>

#include "privlearn/fixed_sum.hpp"
#include "privlearn/vec4.hpp"

namespace privlearn::row_kernels {

namespace {

#if defined(PRIVLEARN_HAS_VECTOR_EXTENSION)  // four-double lanes (vec4.hpp)
#define PRIVLEARN_ROW_INLINE __attribute__((always_inline)) inline

typedef int V4i32 __attribute__((vector_size(16)));
typedef unsigned long long V4u64 __attribute__((vector_size(32)));

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

template <bool kScaled>
PRIVLEARN_ROW_INLINE void add_body(const double* x, Index m, double s, double a,
                                   std::int64_t* acc) {
  const V4 va = v4_splat(a), vs = v4_splat(s);
  Index k = 0;
  for (; k + 4 <= m; k += 4) {
    V4 v = v4_load(x + k);
    if (kScaled) v = v * vs;
    // trunc toward zero through int32 (|term| < 2^31), sign-extended, added modulo 2^64
    const V4i t = __builtin_convertvector(__builtin_convertvector(va * v, V4i32), V4i);
    V4u64 sum;
    std::memcpy(&sum, acc + k, sizeof sum);
    sum += (V4u64)t;  // the same bits, added modulo 2^64
    std::memcpy(acc + k, &sum, sizeof sum);
  }
  for (; k < m; ++k) fixed::add_small_units(acc[k], a * (kScaled ? x[k] * s : x[k]));
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

template <bool kScaled>
inline void add_body(const double* x, Index m, double s, double a, std::int64_t* acc) {
  for (Index k = 0; k < m; ++k) fixed::add_small_units(acc[k], a * (kScaled ? x[k] * s : x[k]));
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
PRIVLEARN_VEC4_CLONES void add_plain(const double* x, Index m, double a, std::int64_t* acc) {
  add_body<false>(x, m, 1.0, a, acc);
}
PRIVLEARN_VEC4_CLONES void add_scaled(const double* x, Index m, double s, double a,
                                     std::int64_t* acc) {
  add_body<true>(x, m, s, a, acc);
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
  if (scaled)
    add_scaled(x, m, s, a, acc);
  else
    add_plain(x, m, a, acc);
}

}  // namespace privlearn::row_kernels
