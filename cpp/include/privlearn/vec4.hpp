#pragma once
// Four doubles with element-wise arithmetic, for kernels compiled twice (AVX2 where the CPU has
// it, chosen at load time; SSE2 otherwise): GCC / Clang's vector extension (one AVX2 register
// in the avx2 clone, two SSE2 registers otherwise), a plain four-element struct elsewhere. Lane l
// of every operation is the scalar operation on lane l and products and sums stay separate
// roundings (no FMA: -ffp-contract=off), so the vector width never changes a result. Used by
// the row kernels (row_kernels.cpp) and the quadratic-gradient kernels (quadgrad.cpp).

#include <cstring>

#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
// A function built as an AVX2 clone and a default (SSE2) clone.
#define PRIVLEARN_VEC4_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PRIVLEARN_VEC4_CLONES
#endif

namespace privlearn {

#if defined(__GNUC__)
#if !defined(__clang__)
// GCC notes that a 32-byte vector argument changes the ABI without AVX: these helpers are
// internal and inlined into each clone.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
// The vector extension is available (comparisons, integer lanes, __builtin_convertvector).
#define PRIVLEARN_HAS_VECTOR_EXTENSION 1
#define PRIVLEARN_VEC4_INLINE __attribute__((always_inline)) inline
typedef double V4 __attribute__((vector_size(32)));
typedef long long V4i __attribute__((vector_size(32)));
PRIVLEARN_VEC4_INLINE V4 v4_splat(double a) { return V4{a, a, a, a}; }
#else
#define PRIVLEARN_VEC4_INLINE inline
struct V4 {
  double v[4];
  double operator[](int l) const { return v[l]; }
  friend V4 operator+(const V4& a, const V4& b) {
    return V4{{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}};
  }
  friend V4 operator*(const V4& a, const V4& b) {
    return V4{{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}};
  }
};
PRIVLEARN_VEC4_INLINE V4 v4_splat(double a) { return V4{{a, a, a, a}}; }
#endif

PRIVLEARN_VEC4_INLINE V4 v4_zero() { return v4_splat(0.0); }
PRIVLEARN_VEC4_INLINE V4 v4_load(const double* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
PRIVLEARN_VEC4_INLINE void v4_store(double* p, const V4& v) { std::memcpy(p, &v, sizeof v); }

}  // namespace privlearn
