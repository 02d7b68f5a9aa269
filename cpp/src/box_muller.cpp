// Box-Muller pairs eight at a time (random.hpp, "normal(i)" and box_muller_pairs): the log,
// the sine and the cosine are evaluated here, branch-free in lanes of eight doubles, instead of
// one libm call each per pair (issue 32: a scalar log and sincos were ~50 ns of each of DP-SCD's
// per-row jitter draws, most of the jitter's share of an epoch).
//
// The method is fdlibm 5.3's (Sun Microsystems 1993; the coefficients below are its published
// minimax coefficients, cited by their bit patterns):
//   log x (e_log.c): x = 2^k (1 + f), 1 + f in [sqrt(2)/2, sqrt(2)); s = f / (2 + f),
//     R = Lg1 s^2 + ... + Lg7 s^14, log x = k ln2_hi - ((f^2/2 - (s (f^2/2 + R) + k ln2_lo)) - f)
//     (the form for f away from 0) or k ln2_hi - ((s (f - R) - k ln2_lo) - f) (f near 0);
//     error below 1 ulp. x = 1 - u lies in [2^-53, 1]: no zero, subnormal or infinite input.
//   reduction of t = 2 pi u in [0, 2 pi) (e_rem_pio2.c, medium path, two rounds): n =
//     round(t 2/pi), y0 + y1 = t - n pi/2 with pi/2 = pio2_1 + pio2_2 + pio2_2t (~118 bits);
//     n pio2_1 is exact (33-bit constant, n <= 4), so y0 + y1 is good to ~2^-100 absolute.
//   sin, cos on [-pi/4, pi/4] with the tail y1 (k_sin.c, k_cos.c as musl writes it: no branch
//     on |y0|): degree-13 odd and degree-14 even polynomials, error below 1 ulp.
// t itself is rounded as before (kTwoPi * u, the numpy reference's 2 pi u), so the normals
// differ from libm's log / cos / sin of the same arguments by at most a few ulps: the reference
// (numpy) agrees to ~1e-15 relative. Every operation is one IEEE double operation per lane
// (-ffp-contract=off; no FMA), so the 8-lane vector code, its AVX-512, AVX2 and SSE2 clones and
// the scalar tail give the same bits: normal(), normal_at, normals_at and the row cursors agree
// bit for bit, on every thread count.

#include <cstdint>
#include <cstring>

#include "privlearn/random.hpp"

namespace privlearn::random {

namespace {

constexpr double kTwoPi = 6.283185307179586;  // the double nearest 2 pi (== 2 * numpy.pi)

// e_log.c
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 3fe62e42 fee00000
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 3dea39ef 35793c76
constexpr double kLg1 = 6.666666666666735130e-01;      // 3FE55555 55555593
constexpr double kLg2 = 3.999999999940941908e-01;      // 3FD99999 9997FA04
constexpr double kLg3 = 2.857142874366239149e-01;      // 3FD24924 94229359
constexpr double kLg4 = 2.222219843214978396e-01;      // 3FCC71C5 1D8E78AF
constexpr double kLg5 = 1.818357216161805012e-01;      // 3FC74664 96CB03DE
constexpr double kLg6 = 1.531383769920937332e-01;      // 3FC39A09 D078C69F
constexpr double kLg7 = 1.479819860511658591e-01;      // 3FC2F112 DF3E5244
// e_rem_pio2.c
constexpr double kInvPio2 = 6.36619772367581382433e-01;  // 3FE45F30 6DC9C883
constexpr double kPio2_1 = 1.57079632673412561417e+00;   // 3FF921FB 54400000
constexpr double kPio2_2 = 6.07710050630396597660e-11;   // 3DD0B461 1A600000
constexpr double kPio2_2t = 2.02226624879595063154e-21;  // 3BA3198A 2E037073
// k_sin.c
constexpr double kS1 = -1.66666666666666324348e-01;  // BFC55555 55555549
constexpr double kS2 = 8.33333333332248946124e-03;   // 3F811111 1110F8A6
constexpr double kS3 = -1.98412698298579493134e-04;  // BF2A01A0 19C161D5
constexpr double kS4 = 2.75573137070700676789e-06;   // 3EC71DE3 57B1FE7D
constexpr double kS5 = -2.50507602534068634195e-08;  // BE5AE5E6 8A2B9CEB
constexpr double kS6 = 1.58969099521155010221e-10;   // 3DE5D93A 5ACFD57C
// k_cos.c
constexpr double kC1 = 4.16666666666666019037e-02;   // 3FA55555 5555554C
constexpr double kC2 = -1.38888888888741095749e-03;  // BF56C16C 16C15177
constexpr double kC3 = 2.48015872894767294178e-05;   // 3EFA01A0 19CB1590
constexpr double kC4 = -2.75573143513906633035e-07;  // BE927E4F 809C52AD
constexpr double kC5 = 2.08757232129817482790e-09;   // 3E21EE9E BDB4B1C4
constexpr double kC6 = -1.13596475577881948265e-11;  // BDA8FAE9 BE8838D4

constexpr double kRoundMagic = 0x1.8p52;  // x + 1.5 2^52 - 1.5 2^52 rounds |x| < 2^51 to an integer
constexpr std::uint64_t kMagicBits = 0x4338000000000000ULL;  // the bits of kRoundMagic
constexpr std::uint64_t kTwo52Bits = 0x4330000000000000ULL;  // the bits of 2^52

#if defined(__GNUC__)
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
#define PRIVLEARN_BM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#pragma GCC diagnostic ignored "-Wpsabi"
#else
#define PRIVLEARN_BM_CLONES
#endif
typedef double D8 __attribute__((vector_size(64)));
typedef long long I8 __attribute__((vector_size(64)));
typedef unsigned long long U8 __attribute__((vector_size(64)));
#define PRIVLEARN_BM_INLINE __attribute__((always_inline)) inline

PRIVLEARN_BM_INLINE D8 splat(double v) { return D8{v, v, v, v, v, v, v, v}; }
PRIVLEARN_BM_INLINE U8 usplat(std::uint64_t v) { return U8{v, v, v, v, v, v, v, v}; }
PRIVLEARN_BM_INLINE I8 isplat(long long v) { return I8{v, v, v, v, v, v, v, v}; }
// Vector casts between types of one size keep the bits (GCC / Clang vector extensions).
PRIVLEARN_BM_INLINE D8 as_d(U8 v) { return (D8)v; }
PRIVLEARN_BM_INLINE U8 as_u(D8 v) { return (U8)v; }
PRIVLEARN_BM_INLINE I8 as_i(U8 v) { return (I8)v; }
PRIVLEARN_BM_INLINE U8 as_u(I8 v) { return (U8)v; }

// uniform(raw) = (raw >> 11) 2^-53, exactly: the low 52 bits of the integer v = raw >> 11 as a
// double through the bits of 2^52, plus 2^52 when v's bit 52 is set (an exact sum below 2^53).
PRIVLEARN_BM_INLINE D8 unit(U8 raw) {
  const U8 v = raw >> 11;
  const D8 low = as_d((v & usplat((1ULL << 52) - 1)) | usplat(kTwo52Bits)) - splat(0x1p52);
  const I8 top = as_i(v >> 52) != isplat(0);
  return (low + (top ? splat(0x1p52) : splat(0.0))) * splat(0x1p-53);
}

// Eight pairs: a, b the two raws; c = r cos t, s = r sin t (see the file comment).
PRIVLEARN_BM_INLINE void pairs8(U8 a, U8 b, D8& c, D8& s) {
  const D8 ua = unit(a);
  const D8 ub = unit(b);

  // log x, x = 1 - ua in [2^-53, 1] (normal, finite, positive).
  const D8 x = splat(1.0) - ua;
  const U8 bits = as_u(x);
  const I8 high = as_i(bits >> 32);
  I8 k = (high >> 20) - isplat(1023);
  const I8 hx = high & isplat(0x000fffff);
  const I8 i = (hx + isplat(0x95f64)) & isplat(0x100000);
  const U8 new_high = as_u(hx | (i ^ isplat(0x3ff00000)));
  const D8 xn = as_d((new_high << 32) | (bits & usplat(0xffffffffULL)));
  k = k + (i >> 20);
  const D8 f = xn - splat(1.0);
  // k in [-53, 0] as a double: (k + 2^11) sits in the low bits of 2^52's mantissa.
  const D8 dk = as_d(as_u(k + isplat(2048)) | usplat(kTwo52Bits)) - splat(0x1p52 + 2048.0);
  const D8 sv = f / (splat(2.0) + f);
  const D8 z = sv * sv;
  const D8 w = z * z;
  const D8 t1 = w * (splat(kLg2) + w * (splat(kLg4) + w * splat(kLg6)));
  const D8 t2 = z * (splat(kLg1) + w * (splat(kLg3) + w * (splat(kLg5) + w * splat(kLg7))));
  const D8 big_r = t2 + t1;
  const I8 far = ((hx - isplat(0x6147a)) | (isplat(0x6b851) - hx)) > isplat(0);
  const D8 hfsq = splat(0.5) * f * f;
  const D8 log_far = dk * splat(kLn2Hi) - ((hfsq - (sv * (hfsq + big_r) + dk * splat(kLn2Lo))) - f);
  const D8 log_near = dk * splat(kLn2Hi) - ((sv * (f - big_r) - dk * splat(kLn2Lo)) - f);
  const D8 lg = far ? log_far : log_near;
  D8 r = splat(-2.0) * lg;
  for (int l = 0; l < 8; ++l) r[l] = __builtin_sqrt(r[l]);

  // t = 2 pi ub in [0, 2 pi); n = round(t 2/pi) in [0, 4]; y0 + y1 = t - n pi/2.
  const D8 t = splat(kTwoPi) * ub;
  const D8 nm = t * splat(kInvPio2) + splat(kRoundMagic);
  const D8 fn = nm - splat(kRoundMagic);
  const U8 quadrant = (as_u(nm) - usplat(kMagicBits)) & usplat(3);
  const D8 r1 = t - fn * splat(kPio2_1);
  const D8 w1 = fn * splat(kPio2_2);
  const D8 r2 = r1 - w1;
  const D8 wt = fn * splat(kPio2_2t) - ((r1 - r2) - w1);
  const D8 y0 = r2 - wt;
  const D8 y1 = (r2 - y0) - wt;

  const D8 zz = y0 * y0;
  const D8 v = zz * y0;
  const D8 rs =
      splat(kS2) + zz * (splat(kS3) + zz * (splat(kS4) + zz * (splat(kS5) + zz * splat(kS6))));
  const D8 sin_y = y0 - ((zz * (splat(0.5) * y1 - v * rs) - y1) - v * splat(kS1));
  const D8 ww = zz * zz;
  const D8 rc = zz * (splat(kC1) + zz * (splat(kC2) + zz * splat(kC3))) +
                ww * ww * (splat(kC4) + zz * (splat(kC5) + zz * splat(kC6)));
  const D8 hz = splat(0.5) * zz;
  const D8 one_hz = splat(1.0) - hz;
  const D8 cos_y = one_hz + (((splat(1.0) - one_hz) - hz) + (zz * rc - y0 * y1));

  // quadrant q: (sin t, cos t) = (sin y, cos y), (cos y, -sin y), (-sin y, -cos y), (-cos y, sin y)
  const I8 odd = as_i(quadrant & usplat(1)) != isplat(0);
  const I8 upper = as_i(quadrant & usplat(2)) != isplat(0);
  const I8 cos_neg = as_i(((quadrant + usplat(1)) & usplat(2))) != isplat(0);
  const D8 sin_abs = odd ? cos_y : sin_y;
  const D8 cos_abs = odd ? sin_y : cos_y;
  const D8 sin_t = upper ? -sin_abs : sin_abs;
  const D8 cos_t = cos_neg ? -cos_abs : cos_abs;
  c = r * cos_t;
  s = r * sin_t;
}

PRIVLEARN_BM_CLONES void pairs_lanes(const std::uint32_t* words, std::size_t n, double* c,
                                     double* s) {
  for (std::size_t p0 = 0; p0 < n; p0 += 8) {
    const std::size_t m = n - p0 < 8 ? n - p0 : 8;
    U8 a = usplat(0), b = usplat(0);
    for (std::size_t l = 0; l < m; ++l) {
      const std::uint32_t* q = words + 4 * (p0 + l);
      a[l] = static_cast<std::uint64_t>(q[0]) | (static_cast<std::uint64_t>(q[1]) << 32);
      b[l] = static_cast<std::uint64_t>(q[2]) | (static_cast<std::uint64_t>(q[3]) << 32);
    }
    D8 cv, sv;
    pairs8(a, b, cv, sv);
    if (m == 8) {
      std::memcpy(c + p0, &cv, sizeof cv);
      std::memcpy(s + p0, &sv, sizeof sv);
    } else {
      for (std::size_t l = 0; l < m; ++l) {
        c[p0 + l] = cv[l];
        s[p0 + l] = sv[l];
      }
    }
  }
}
#else
#error "box_muller.cpp needs GCC or Clang vector extensions"
#endif

}  // namespace

void box_muller_pairs(const std::uint32_t* words, std::size_t n, double* cos_out,
                      double* sin_out) noexcept {
  pairs_lanes(words, n, cos_out, sin_out);
}

}  // namespace privlearn::random
