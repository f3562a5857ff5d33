// Vector math kernels of the host C code generator (see tessera/target/vector_math.h).
#include "tessera/target/vector_math.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tessera {
namespace codegen {

// Why fmod is computed from a quotient: C's fmod (glibc's, and numpy's np.fmod, which calls it)
// is a scalar loop over the bits of the operands, about 20 ns an element on a Zen 4 (bench_topi
// mod, 2048 x 2048 float32, one thread: 21 ms, numpy 19 ms). A vector division, a truncation and
// one fused multiply-add give the remainder for every lane whose rounded quotient truncates to
// the true one: then a0 - q * a1 is the remainder, which is representable, so the fma's single
// rounding is exact. A quotient off by k != 0 leaves a0 - q * a1 outside [0, |a1|) on a0's
// side (beyond |a1|, or of the other sign), and rounding keeps it there (0 and |a1| are
// representable, and the value, a nonzero multiple of the operands' least unit, does not
// round to zero); so the test below certifies every lane it keeps. Such lanes, and infinities,
// NaNs and zero divisors (their m is a NaN or infinite), go to the C library.
std::string VectorFmodSource(const std::string& name, const std::string& vector_type,
                             const std::string& mask_type, int bits, int lanes) {
  std::string f = bits == 32 ? "f" : "";
  std::string t = bits == 32 ? "float" : "double";
  std::string n = std::to_string(lanes);
  std::ostringstream os;
  os << "static inline " << vector_type << " " << name << "(" << vector_type << " a0, "
     << vector_type << " a1) {\n"
     << "  " << vector_type << " r;\n"
     << "#if defined(__FP_FAST_FMA" << (bits == 32 ? "F" : "") << ")\n"
     << "  " << mask_type << " bad;\n"
     << "  for (int i = 0; i < " << n << "; ++i) {\n"
     << "    " << t << " m = __builtin_fma" << f << "(-__builtin_trunc" << f
     << "(a0[i] / a1[i]), a1[i], a0[i]);\n"
     << "    r[i] = __builtin_copysign" << f << "(m, a0[i]);\n"
     << "    bad[i] = !(__builtin_fabs" << f << "(m) < __builtin_fabs" << f
     << "(a1[i])) | (m != r[i]);\n"
     << "  }\n"
     << "  int any = 0;\n"
     << "  for (int i = 0; i < " << n << "; ++i) any |= bad[i] != 0;\n"
     << "  if (__builtin_expect(any, 0)) {\n"
     << "    for (int i = 0; i < " << n << "; ++i)\n"
     << "      if (bad[i]) r[i] = fmod" << f << "(a0[i], a1[i]);\n"
     << "  }\n"
     << "#else\n"
     << "  for (int i = 0; i < " << n << "; ++i) r[i] = fmod" << f << "(a0[i], a1[i]);\n"
     << "#endif\n"
     << "  return r;\n"
     << "}\n";
  return os.str();
}

// The float32 kernels of VectorFloatMathKernels. numpy's float32 atan, acos, asin and acosh on
// an AVX-512 host are Intel SVML's; the C library's (libmvec's vector variants) were slower or
// level (bench_topi --all, 2048 x 2048, one thread of a Zen 4, thread CPU time: atan 1.74 ms,
// acos 2.33, asin 1.56, acosh 3.20 against numpy's 1.69, 1.67, 1.62, 2.56). Each is a
// polynomial fitted here for this use (a least-squares fit reweighted towards the minimax one),
// evaluated in float32 with the argument reduced without branches, so that the lane loops become
// vector code:
// - atan(x): u = |x| or 1 / |x| (|x| > 1), atan(u) = u + u z p(z), z = u^2, p of degree 8
//   (relative error 2^-28.5 on [0, 1]); pi/2 - atan(u) with pi/2 in two parts; x's sign.
// - acos(x): asin(u) = u + u z p(z), p of degree 4 (2^-27.6 on z in [0, 1/4]); |x| <= 1/2:
//   pi/2 - asin(x); else u = sqrt((1 - |x|) / 2), acos(|x|) = 2 asin(u), pi - 2 asin(u) for
//   x < 0 (pi and pi/2 in two parts). NaN and |x| > 1 give NaN through the square root.
// - asin(x): the same asin(u); |x| <= 1/2: asin(u), u = |x|; else 2 (pi/4 - asin(u)), u =
//   sqrt((1 - |x|) / 2) (pi/4 in two parts; pi/4 - asin(u) is exact); x's sign.
// - acosh(x) = log1p(t + sqrt(t^2 + 2t)), t = x - 1 exact, t^2 + 2t rounded once (fma);
//   above 4096, log1p(t) + ln 2 (the rest is below 2^-25 relative). log1p(v): y = 1 + v,
//   the rounding error c = v - (y - 1) divided by y (~ (2 - m) 2^-k, m in [sqrt(1/2),
//   sqrt(2)) the mantissa of y = m 2^k, enough for a correction), log(m) = f - f^2 / 2 +
//   f^3 p(f), f = m - 1, p of degree 7 (2^-27.4), k ln 2 in two parts. x < 1 and NaN give
//   NaN, +inf gives +inf.
// Every float32 input against the double-precision function rounded to float32: atan within
// 1.37 ulp, acos 1.28, asin 1.9, acosh 2.21 (tests/python/codegen/test_codegen_host_vector_math.py
// checks a sample and the special values). asinh through the same log1p (and a division and a
// square root) measured no faster than numpy's (2.98 against 2.91 ms) and is left to the C library.
const char* const k_tessera_atanf =
    "static inline float tessera_atanf(float x) {\n"
    "#if defined(__x86_64__) && !defined(__AVX2__)\n"
    "  return atanf(x);\n"
    "#else\n"
    "  float a = __builtin_fabsf(x);\n"
    "  float u = a > 1.0f ? 1.0f / a : a;\n"
    "  float z = u * u;\n"
    "  float p = -0.0017935085343196988f;\n"
    "  p = p * z + 0.010914098471403122f;\n"
    "  p = p * z + -0.031176898628473282f;\n"
    "  p = p * z + 0.05795663967728615f;\n"
    "  p = p * z + -0.08403394371271133f;\n"
    "  p = p * z + 0.10952166467905045f;\n"
    "  p = p * z + -0.14264237880706787f;\n"
    "  p = p * z + 0.19998547434806824f;\n"
    "  p = p * z + -0.33333298563957214f;\n"
    "  float r = (u * z) * p + u;\n"
    "  r = a > 1.0f ? (1.57079637050628662f - r) + -4.37113900018624283e-8f : r;\n"
    "  return __builtin_copysignf(r, x);\n"
    "#endif\n"
    "}\n";

// asin(u) of the reduced argument shared by tessera_asinf and tessera_acosf: |x| = a itself
// where a <= 0.5 (small), else u = sqrt((1 - a) / 2), with asin(a) = pi/2 - 2 asin(u).
const char* const k_tessera_asinf_reduced =
    "static inline float tessera_asinf_reduced(float a, int small) {\n"
    "  float z = small ? a * a : 0.5f - 0.5f * a;\n"
    "  float u = small ? a : __builtin_sqrtf(z);\n"
    "  float p = 0.04216625913977623f;\n"
    "  p = p * z + 0.02417954057455063f;\n"
    "  p = p * z + 0.04547037184238434f;\n"
    "  p = p * z + 0.07495297491550446f;\n"
    "  p = p * z + 0.16666752099990845f;\n"
    "  return (u * z) * p + u;\n"
    "}\n";

const char* const k_tessera_acosf =
    "static inline float tessera_acosf(float x) {\n"
    "#if defined(__x86_64__) && !defined(__AVX2__)\n"
    "  return acosf(x);\n"
    "#else\n"
    "  float a = __builtin_fabsf(x);\n"
    "  int small = a <= 0.5f;\n"
    "  float q = tessera_asinf_reduced(a, small);\n"
    "  float big = x < 0.0f ? (3.14159274101257324f - 2.0f * q) + -8.74227800037248567e-8f : 2.0f "
    "* q;\n"
    "  return small ? (1.57079637050628662f - __builtin_copysignf(q, x)) + "
    "-4.37113900018624283e-8f : big;\n"
    "#endif\n"
    "}\n";

const char* const k_tessera_asinf =
    "static inline float tessera_asinf(float x) {\n"
    "#if defined(__x86_64__) && !defined(__AVX2__)\n"
    "  return asinf(x);\n"
    "#else\n"
    "  float a = __builtin_fabsf(x);\n"
    "  int small = a <= 0.5f;\n"
    "  float q = tessera_asinf_reduced(a, small);\n"
    "  float r = small ? q : 2.0f * ((0.785398185253143311f - q) + -2.18556950009312142e-8f);\n"
    "  return __builtin_copysignf(r, x);\n"
    "#endif\n"
    "}\n";

const char* const k_tessera_log1pf_nonneg =
    "/* log(1 + v) for v >= 0 (v + 1 rounded, its rounding error corrected); log(m) of the\n"
    "   mantissa in [sqrt(1/2), sqrt(2)) by a polynomial */\n"
    "static inline float tessera_log1pf_nonneg(float v) {\n"
    "  float y = 1.0f + v;\n"
    "  float c = v - (y - 1.0f);\n"
    "  int32_t iy; memcpy(&iy, &y, 4);\n"
    "  int32_t k = (iy - 0x3f3504f3) >> 23;\n"
    "  int32_t im = iy - (k << 23);\n"
    "  float m; memcpy(&m, &im, 4);\n"
    "  float f = m - 1.0f;\n"
    "  int32_t is = (127 - (k < 126 ? k : 126)) << 23;\n"
    "  float sc; memcpy(&sc, &is, 4);\n"
    "  c = c * ((2.0f - m) * sc); /* c / y, 1 / y ~ (2 - m) 2^-k */\n"
    "  float p = -0.07634343951940536f;\n"
    "  p = p * f + 0.12761515378952026f;\n"
    "  p = p * f + -0.13160210847854614f;\n"
    "  p = p * f + 0.1420176774263382f;\n"
    "  p = p * f + -0.16623355448246002f;\n"
    "  p = p * f + 0.20001226663589478f;\n"
    "  p = p * f + -0.250008225440979f;\n"
    "  p = p * f + 0.3333333134651184f;\n"
    "  float kf = (float)k;\n"
    "  float hfsq = 0.5f * f * f;\n"
    "  float r = (f * f) * f * p + (kf * -2.12194440e-4f + c);\n"
    "  return (f - (hfsq - r)) + kf * 0.693359375f;\n"
    "}\n";

const char* const k_tessera_acoshf =
    "static inline float tessera_acoshf(float x) {\n"
    "#if defined(__x86_64__) && !defined(__AVX2__)\n"
    "  return acoshf(x);\n"
    "#else\n"
    "  float t = x - 1.0f;\n"
    "  int big = x > 4096.0f;\n"
    "  float v = big ? t : t + __builtin_sqrtf(__builtin_fmaf(t, t, t + t));\n"
    "  float r = tessera_log1pf_nonneg(v);\n"
    "  r = big ? r + 0.693147182f : r;\n"
    "  r = x >= 1.0f ? r : __builtin_nanf(\"\");\n"
    "  return x == __builtin_inff() ? x : r;\n"
    "#endif\n"
    "}\n";

// powf(x, y) of sixteen float32 lanes with AVX-512F (GCC's builtins; $N: name, $F: float32 x16,
// $I: int32 x16). glibc's libmvec powf, which the lane loop of powf became, took 8.2 ms for
// bench_topi's power (2048 x 2048, one thread of a Zen 4), numpy's (Intel SVML) 2.9; the same
// algorithm in double precision, as glibc's scalar powf computes it, 6.5 ms (eight lanes of
// double a vector). This one computes in float32, with the terms that need more precision
// carried as pairs of floats:
// - x = m 2^e, m in [3/4, 3/2) (vgetmantps, vgetexpps, e + 1 where m < 1); c = 1 / m to five
//   fractional bits (vrcp14ps, vrndscaleps), so r = m c - 1 is exact (one fma; |r| < 0.024)
//   and -log2(c) comes from a table of 23 entries in two vectors, indexed by the low bits of
//   2^23 + 32 c (one permute, vpermt2ps), as a part with 16 fractional bits (e + it is exact)
//   and the rest.
// - log2(1 + r) = r / ln 2 + r^2 q(r), q of degree 3 (truncation 2^-34); r / ln 2 as the
//   rounded product and its exact error (fma). log2(x) = lh + ll by a Fast2Sum (|e + table|
//   >= |r / ln 2| or zero).
// - t = y log2(x) = y lh (clamped to +-200: 2^t over- or underflows beyond) + te, te = fma(y,
//   lh, -t) + y ll; n = rint(t + te), f = (t - n) + te (t - n exact), 2^f by a polynomial of
//   degree 6 (relative error 2^-28.3 on |f| <= 1/2 with its float32 coefficients: each fitted
//   towards the minimax one with those before it rounded; Taylor's of degree 7 with rounded
//   coefficients was 2^-26.8 and one fma more), scaled by 2^n in one rounding (vscalefps,
//   which gives subnormals, infinities and zeros as the exact result rounds).
// - e + 1 where m < 1 by a masked add; the special operands by two vfpclassps (AVX512DQ; three
//   compares and an and without): two vector operations fewer, as the polynomial's one fma.
//   The kernel is bound by its vector operations (about 45 a vector, two 512-bit ones a cycle
//   on a Zen 4): 2.66 -> 2.39-2.43 ms on bench_topi's power below.
// Within 1.19 ulp of the correctly rounded result on every sample tried (the bench's data, x
// over every exponent, subnormal x, x near 1 with |y| up to 1e5, results that overflow,
// underflow or are subnormal; numpy's own powf differs from it by up to 1 ulp). Lanes with x
// <= 0, x or y not finite (NaN, infinities, negative bases with integer exponents, zeros) take
// the C library's powf, which has their special results; x = 1 gives exactly 1 (the table's
// entry for c = 1 is 0, r = 0), y = 0 exactly 1.
// The kernel is always inlined into its loop and those lanes are recomputed in a separate
// function that is never inlined ($N_lanes, cold). GCC -O2 kept the kernel out of line (too
// big): a call per vector, which realigned the stack, loaded the fifteen constants again and,
// with the lane loop of the C library written inline (it indexes x, y and the result), stored
// the three vectors to the stack on the hot path. bench_topi's power (2048 x 2048 float32, one
// thread of a Zen 4): 3.2-3.3 -> 2.66 ms (numpy 2.86-2.93).
const char* const kPowfAvx512 =
    R"(static __attribute__((noinline, cold)) $F $N_lanes($F x, $F y, $F res, unsigned bad) {
  for (int i = 0; i < 16; ++i)
    if (bad >> i & 1) res[i] = powf(x[i], y[i]);
  return res;
}
static inline __attribute__((always_inline)) $F $N($F x, $F y) {
  const $F z = ($F){0};
  /* -log2(c) at 32 c mod 32, c = 21/32 .. 43/32: a part with 16 fractional bits and the rest */
  const $F thi0 = {0.0f, -0.0443878173828125f, -0.08746337890625f, -0.1292877197265625f,
                   -0.169921875f, -0.2094573974609375f, -0.2479248046875f, -0.285400390625f,
                   -0.321929931640625f, -0.3575592041015625f, -0.3923187255859375f,
                   -0.42626953125f, 0.0f, 0.0f, 0.0f, 0.0f};
  const $F thi1 = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.6076812744140625f, 0.5405731201171875f,
                   0.4764404296875f, 0.4150390625f, 0.35614013671875f, 0.299560546875f,
                   0.2451171875f, 0.1926422119140625f, 0.1420135498046875f, 0.093109130859375f,
                   0.045806884765625f};
  const $F tlo0 = {0.0f, -0x1.a6eb1ep-18f, 0x1.20a6dep-21f, 0x1.3b992cp-18f, -0x1.a39fbep-19f,
                   0x1.0e9258p-18f, -0x1.6b9026p-19f, -0x1.eac382p-20f, 0x1.ed0cbap-20f,
                   0x1.e32630p-18f, 0x1.5db83ap-20f, 0x1.408c78p-18f, 0.0f, 0.0f, 0.0f, 0.0f};
  const $F tlo1 = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0x1.5db83ap-20f, -0x1.3e032ep-18f,
                   -0x1.40358ep-19f, -0x1.a39fbep-20f, 0x1.ed0cbap-19f, -0x1.1c8f12p-22f,
                   -0x1.3ab7cep-18f, 0x1.80abfcp-19f, 0x1.6e155ap-18f, 0x1.25b3eep-22f,
                   -0x1.acd89ap-19f};
  /* x = m 2^e, m in [0.75, 1.5) */
  $F e = __builtin_ia32_getexpps512_mask(x, z, 0xffff, 4);
  $F m = __builtin_ia32_getmantps512_mask(x, 3, z, 0xffff, 4); /* [0.75, 1.5) */
  e = __builtin_ia32_addps512_mask(e, z + 1.0f, e, __builtin_ia32_cmpps512_mask(m, z + 1.0f, 0x11, 0xffff, 4),
                                  4); /* e + 1 where m < 1 */
  /* rc: 1 / m to 5 fractional bits (21/32 .. 43/32); r = m rc - 1 exactly */
  $F rc = __builtin_ia32_rndscaleps_mask(__builtin_ia32_rcp14ps512_mask(m, z, 0xffff), 0x58,
                                         z, 0xffff, 4);
  $F r = __builtin_ia32_vfmaddps512_mask(m, rc, z - 1.0f, 0xffff, 4);
  $I j = ($I)(rc * 32.0f + 0x1p23f); /* 32 c in the low five bits, all vpermt2ps reads */
  $F th = __builtin_shuffle(thi0, thi1, j);
  $F tl = __builtin_shuffle(tlo0, tlo1, j);
  /* log2(1 + r) = r c1 + r^2 q(r), c1 = 1 / ln 2 in two parts */
  $F a = r * 1.44269502162933349609375f;
  $F ae = __builtin_ia32_vfmaddps512_mask(r, z + 1.44269502162933349609375f, -a, 0xffff, 4);
  $F q = r * 0.28853900817779268f - 0.36067376022224085f;
  q = q * r + 0.48089834696298783f;
  q = q * r - 0.72134752044448170f;
  $F lo = (r * r) * q + (r * 1.925963033500167e-8f + (ae + tl));
  $F h = e + th;               /* exact */
  $F lh = h + a;               /* |h| >= |a| or h = 0 */
  $F ll = ((h - lh) + a) + lo;
  /* t + te = y log2(x) */
  $F t = y * lh;
  t = __builtin_ia32_minps512_mask(t, z + 200.0f, z, 0xffff, 4);
  t = __builtin_ia32_maxps512_mask(t, z - 200.0f, z, 0xffff, 4);
  $F te = __builtin_ia32_vfmaddps512_mask(y, lh, -t, 0xffff, 4) + y * ll;
  $F n = __builtin_ia32_rndscaleps_mask(t + te, 8, z, 0xffff, 4);
  $F f = (t - n) + te;
  f = __builtin_ia32_minps512_mask(f, z + 1.0f, z, 0xffff, 4);
  f = __builtin_ia32_maxps512_mask(f, z - 1.0f, z, 0xffff, 4);
  /* 2^f, |f| <= 1/2 + small: degree 6, float32 coefficients fitted one by one (2^-28.3) */
  $F p = f * 0x1.416cb6p-13f + 0x1.5f099cp-10f;
  p = p * f + 0x1.3b2de0p-7f;
  p = p * f + 0x1.c6af7ap-5f;
  p = p * f + 0x1.ebfbdcp-3f;
  p = p * f + 0x1.62e430p-1f;
  p = p * f + 1.0f;
  $F res = __builtin_ia32_scalefps512_mask(p, n, z, 0xffff, 4);
  /* x <= 0, NaN or infinite, y NaN or infinite: the C library */
#if defined(__AVX512DQ__)
  unsigned bad = __builtin_ia32_fpclassps512_mask(x, 0xdf, 0xffff) | /* NaN, zero, infinite, negative */
                 __builtin_ia32_fpclassps512_mask(y, 0x99, 0xffff);   /* NaN, infinite */
#else
  unsigned bad = __builtin_ia32_cmpps512_mask(x, z, 0x1a, 0xffff, 4) |
                 __builtin_ia32_cmpps512_mask(x, z + __builtin_inff(), 0x00, 0xffff, 4) |
                 __builtin_ia32_cmpps512_mask(($F)(($I)y & 0x7fffffff), z + __builtin_inff(), 0x15,
                                              0xffff, 4);
#endif
  if (__builtin_expect(bad != 0, 0)) res = $N_lanes(x, y, res, bad);
  return res;
}
)";

// pow(x, y) of eight float64 lanes with AVX-512F, the algorithm of the float32 kernel above in
// double precision with one more level of pairs (numpy's float64 power on an AVX-512 host is
// Intel SVML's, 14-16 ms for bench_topi's 2048 x 2048 power, one thread of a Zen 4; libmvec's
// pow 17-18.6; this one 10.4-12.9): c = 1 / m to four fractional bits (11 entries, one
// permute), r = m c - 1 exact (|r| < 0.047); -log2(c) as a part with 42 fractional bits (e + it
// is exact) and the rest (from 50-digit decimals); log2(1 + r) = r / ln 2 + r^2 c2 + r^3 q(r),
// q of degree 11 (truncation below 2^-64), r / ln 2 and r^2 c2 as exact pairs of doubles (fma),
// c1 and c2 in two parts; two Fast2Sums give log2(x) = lh + ll to about 2^-64 relative, so
// that t = y log2(x) = t + te keeps |t| * 2^-63 (t up to 1075); 2^f by Taylor's polynomial of
// degree 13 (2^-57.7 on |f| <= 1/2), scaled by vscalefpd. Within 1 ulp of numpy's (SVML's)
// result on the same samples as the float32 kernel, |t| up to 1000 included (0.89 ulp from the
// exact power on samples checked in 50-digit decimals). Special operands: the C library's pow.
const char* const kPowAvx512 =
    R"(static __attribute__((noinline, cold)) $F $N_lanes($F x, $F y, $F res, unsigned bad) {
  for (int i = 0; i < 8; ++i)
    if (bad >> i & 1) res[i] = pow(x[i], y[i]);
  return res;
}
static inline __attribute__((always_inline)) $F $N($F x, $F y) {
  const $F z = ($F){0};
  /* -log2(c), c = (11 + j) / 16: a part with 42 fractional bits and the rest */
  const $F thi0 = {0x1.14c560fe68800p-1, 0x1.a8ff971811000p-2, 0x1.32bfee370f000p-2,
                          0x1.8a8980abfc000p-3, 0x1.7d60496cfc000p-4, 0.0, -0x1.663f6fac90000p-4,
                          -0x1.5c01a39fbe000p-3};
  const $F thi1 = {-0x1.fbc16b9026000p-3, -0x1.49a784bcd2000p-2, -0x1.91bba891f1000p-2,
                          0.0, 0.0, 0.0, 0.0, 0.0};
  const $F tlo0 = {0x1.7c407050799bfp-44, -0x1.6879fa00b120ap-44, -0x1.979a5db68721dp-46,
                          -0x1.66cccab240e90p-46, -0x1.2ce6312ebb81dp-46, 0.0,
                          -0x1.3167ccc538261p-44, 0x1.2f0c0bfe9dbecp-44};
  const $F tlo1 = {-0x1.0144751b3314fp-44, 0x1.1d406db502403p-44, -0x1.c22d2cad415aep-44,
                          0.0, 0.0, 0.0, 0.0, 0.0};
  /* x = m 2^e, m in [0.75, 1.5) */
  $F e = __builtin_ia32_getexppd512_mask(x, z, 0xff, 4);
  $F m = __builtin_ia32_getmantpd512_mask(x, 3, z, 0xff, 4);
  e = __builtin_ia32_addpd512_mask(e, z + 1.0, e, __builtin_ia32_cmppd512_mask(m, z + 1.0, 0x11, 0xff, 4),
                                  4); /* e + 1 where m < 1 */
  /* c: 1 / m to 4 fractional bits (11/16 .. 21/16); r = m c - 1 exactly */
  $F rc = __builtin_ia32_rndscalepd_mask(__builtin_ia32_rcp14pd512_mask(m, z, 0xff), 0x48,
                                                z, 0xff, 4);
  $F r = __builtin_ia32_vfmaddpd512_mask(m, rc, z - 1.0, 0xff, 4);
  $I j = __builtin_convertvector(rc * 16.0, $I) - 11;
  $F th = __builtin_shuffle(thi0, thi1, j);
  $F tl = __builtin_shuffle(tlo0, tlo1, j);
  /* log2(1 + r) = r c1 + r^2 q(r), c1 = 1 / ln 2 in two parts, q of degree 12 */
  $F a = r * 0x1.71547652b82fep+0;
  $F ae = __builtin_ia32_vfmaddpd512_mask(r, z + 0x1.71547652b82fep+0, -a, 0xff, 4);
  $F q = r * -0x1.a61762a7aded9p-4 + 0x1.c68f568d31760p-4;
  q = q * r - 0x1.ec709dc3a03fdp-4;
  q = q * r + 0x1.0c9a84994022dp-3;
  q = q * r - 0x1.2776c50ef9bfep-3;
  q = q * r + 0x1.484b13d7c02a9p-3;
  q = q * r - 0x1.71547652b82fep-3;
  q = q * r + 0x1.a61762a7aded9p-3;
  q = q * r - 0x1.ec709dc3a03fdp-3;
  q = q * r + 0x1.2776c50ef9bfep-2;
  q = q * r - 0x1.71547652b82fep-2;
  q = q * r + 0x1.ec709dc3a03fdp-2;
  /* r^2 c2 (c2 = -1 / (2 ln 2)) as an exact pair: r^2 = r2 + r2e, c2 r2 = p + pe */
  $F r2 = r * r;
  $F r2e = __builtin_ia32_vfmaddpd512_mask(r, r, -r2, 0xff, 4);
  $F p2 = r2 * -0x1.71547652b82fep-1;
  $F p2e = __builtin_ia32_vfmaddpd512_mask(r2, z - 0x1.71547652b82fep-1, -p2, 0xff, 4);
  $F lo = (r2 * r) * q + ((r2e * -0x1.71547652b82fep-1 + r2 * -0x1.777d0ffda0d24p-57) +
                                 (r * 0x1.777d0ffda0d24p-56 + (ae + tl)) + p2e);
  $F s1 = a + p2; /* |a| >= |p2| */
  $F s1e = (a - s1) + p2;
  $F h = e + th; /* exact */
  $F lh = h + s1; /* |h| >= |s1| or h = 0 */
  $F ll = ((h - lh) + s1) + (s1e + lo);
  /* t + te = y log2(x) */
  $F t = y * lh;
  t = __builtin_ia32_minpd512_mask(t, z + 2000.0, z, 0xff, 4);
  t = __builtin_ia32_maxpd512_mask(t, z - 2000.0, z, 0xff, 4);
  $F te = __builtin_ia32_vfmaddpd512_mask(y, lh, -t, 0xff, 4) + y * ll;
  $F n = __builtin_ia32_rndscalepd_mask(t + te, 8, z, 0xff, 4);
  $F f = (t - n) + te;
  f = __builtin_ia32_minpd512_mask(f, z + 1.0, z, 0xff, 4);
  f = __builtin_ia32_maxpd512_mask(f, z - 1.0, z, 0xff, 4);
  /* 2^f = 1 + f p(f), Taylor to degree 13 (2^-57.7 on |f| <= 1/2) */
  $F p = f * 0x1.816193166d0f9p-40 + 0x1.c3bd650fc2986p-36;
  p = p * f + 0x1.e8cac7351bb25p-32;
  p = p * f + 0x1.e4cf5158b8ecap-28;
  p = p * f + 0x1.b5253d395e7c4p-24;
  p = p * f + 0x1.62c0223a5c824p-20;
  p = p * f + 0x1.ffcbfc588b0c7p-17;
  p = p * f + 0x1.430912f86c787p-13;
  p = p * f + 0x1.5d87fe78a6731p-10;
  p = p * f + 0x1.3b2ab6fba4e77p-7;
  p = p * f + 0x1.c6b08d704a0c0p-5;
  p = p * f + 0x1.ebfbdff82c58fp-3;
  p = p * f + 0x1.62e42fefa39efp-1;
  p = p * f + 1.0;
  $F res = __builtin_ia32_scalefpd512_mask(p, n, z, 0xff, 4);
  /* x <= 0, NaN or infinite, y NaN or infinite: the C library */
#if defined(__AVX512DQ__)
  unsigned bad = __builtin_ia32_fpclasspd512_mask(x, 0xdf, 0xff) | /* NaN, zero, infinite, negative */
                 __builtin_ia32_fpclasspd512_mask(y, 0x99, 0xff);   /* NaN, infinite */
#else
  unsigned bad = __builtin_ia32_cmppd512_mask(x, z, 0x1a, 0xff, 4) |
                 __builtin_ia32_cmppd512_mask(x, z + __builtin_inf(), 0x00, 0xff, 4) |
                 __builtin_ia32_cmppd512_mask(($F)(($I)y & 0x7fffffffffffffffLL),
                                              z + __builtin_inf(), 0x15, 0xff, 4);
#endif
  if (__builtin_expect(bad != 0, 0)) res = $N_lanes(x, y, res, bad);
  return res;
}
)";

std::string PowAvx512Source(int bits, const std::string& name, const std::string& float_type,
                            const std::string& int_type) {
  std::string c = bits == 32 ? kPowfAvx512 : kPowAvx512;
  for (auto [key, value] :
       {std::pair<std::string, std::string>{"$N", name}, {"$F", float_type}, {"$I", int_type}}) {
    for (size_t at = c.find(key); at != std::string::npos; at = c.find(key, at + value.size()))
      c.replace(at, key.size(), value);
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> VectorFloatMathKernels(const std::string& fname) {
  if (fname == "atanf") return {{"tessera_atanf", k_tessera_atanf}};
  if (fname == "acosf")
    return {{"tessera_asinf_reduced", k_tessera_asinf_reduced}, {"tessera_acosf", k_tessera_acosf}};
  if (fname == "asinf")
    return {{"tessera_asinf_reduced", k_tessera_asinf_reduced}, {"tessera_asinf", k_tessera_asinf}};
  if (fname == "acoshf")
    return {{"tessera_log1pf_nonneg", k_tessera_log1pf_nonneg},
            {"tessera_acoshf", k_tessera_acoshf}};
  return {};
}

// ---------------------------------------------------------------------------------------------
// float32 math rounded to float16 at once (topi's float16 log, log2, log10: cast to float32, the
// float32 function, cast back). A float16 result keeps 11 bits, so these kernels need a relative
// error of a few 1e-8 (that of a float32 routine, so that a result misrounds only next to a
// float16 halfway case), not a float32 routine's special-case branches; they are branch-free
// AVX-512F code on sixteen lanes (GCC's builtins; $N: name, $F: float32 x16, $I: int32 x16).
// numpy's float16 log on an AVX-512 host is Intel SVML's float32 routine between 16-lane
// conversions, faster than its own float32 loop and than glibc's libmvec logf, which the lane
// loop of logf became (bench_topi log float16, 2048 x 2048, one thread of a Zen 4: tessera 1.26
// ms, numpy 0.98).
//
// log_b(x), b = e, 2, 10, in 15 vector instructions:
// - x = m 2^e, m in [1, 2) (vgetmantps, vgetexpps, both exact, subnormals included); j = the
//   top five bits of m's fraction (its bits shifted right by 18: vpermt2ps reads the low five
//   bits of an index).
// - c_j ~ 1 / m (the middle of m's interval), and t_j = -log_b(c_j) from two 32-entry tables
//   (one vpermt2ps each); r = m c_j - 1 (one fma; |r| < 1/32, with c_j of 16 bits its rounding is
//   below 2^-38), log_b(x) = e log_b(2) + t_j + r P(r): P(r) ~ log_b(1 + r) / r of degree 3
//   (least squares on [-1/64, 1/32], relative error 9e-9); two fmas.
// - c_0 = 1, t_0 = 0 (m in [1, 1 + 1/32)) and c_31 = 1/2, t_31 = log_b(2) (m in [2 - 1/32, 2)):
//   for x near 1 (e = 0, or e = -1 and m near 2), e log_b(2) + t_j is exactly 0 and the result is
//   r P(r), accurate relative to itself. Where e = -1 and m >= 3/2 (x in [3/4, 1)) e log_b(2) + t_j
//   cancels to |log_b(x)| >= 0.01: there c_j is picked among the 16-bit floats next to 1 / m (Gal's
//   accurate tables) so that t_j, rounded to float32, is within 2e-10 of -log_b(c_j) minus the
//   rounding error of log_b(2) in float32, which e = -1 then cancels.
// - Special inputs by one vfixupimmps: log_b(+-0) = -inf, log_b(x < 0) and log_b(-inf) = NaN,
//   log_b(+inf) = +inf, log_b(1) = +0, NaN stays NaN.
// Over every float16 input the results are within one ulp of numpy's and of the correctly rounded
// ones: log misrounds 2 inputs (numpy 1), log2 none (numpy none), log10 the same 4 as numpy.
namespace {

std::string HexFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%af", static_cast<double>(static_cast<float>(v)));
  return buf;
}

std::string FloatVector(const std::vector<double>& v, size_t begin) {
  std::string s = "{";
  for (size_t i = begin; i < begin + 16; ++i) s += (i > begin ? ", " : "") + HexFloat(v[i]);
  return s + "}";
}

// The tables and the body of log_b(w) (above) of a float32 vector `w` > 0, finite, into `res`:
// `decls` the constant tables, `body` the statements, which may add a float32 vector `corr`
// times about 1 / w to the logarithm (log1p's correction; `corr` empty: none). With `corr` the
// small terms are summed first and the rounding error of log_b(2) in float32 is added back (3
// more instructions; log alone goes without: its results misround one input more than numpy's).
struct HalfLogParts {
  std::string decls, body;
};

HalfLogParts HalfLogAvx512(double base, const std::string& w, const std::string& corr) {
  const double k = 1.0 / std::log(base);  // log_b(y) = k ln(y)
  const double l = std::log(2.0) * k;     // log_b(2)
  const float lf = static_cast<float>(l);
  const double delta = l - lf;  // the rounding error of log_b(2) in float32
  std::vector<double> c(32), t(32);
  for (int j = 0; j < 32; ++j) {
    if (j == 0 || j == 31) {
      c[j] = j == 0 ? 1.0 : 0.5;
      t[j] = j == 0 ? 0.0 : lf;
      continue;
    }
    // m in [1 + j/32, 1 + (j+1)/32): c near 1 / (its middle), with 16 significant bits
    double target = 1.0 / (1.0 + (j + 0.5) / 32.0);
    double step = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(target))) - 15);
    double n0 = std::round(target / step), best_err = 1.0;
    for (int d = 0; d < 4096 && best_err > 2e-10; ++d) {
      for (double n : {n0 + d, n0 - d}) {
        double v = -std::log(n * step) * k - (j >= 16 ? delta : 0.0);
        double err = std::fabs(static_cast<double>(static_cast<float>(v)) - v);
        if (err < best_err) {
          best_err = err;
          c[j] = n * step;
          t[j] = v;
        }
      }
    }
  }
  // P(r) ~ ln(1 + r) / r on [-1/64, 1/32] (least squares, relative), times k
  const double p[4] = {1.0, -0.5000013011690673, 0.33337000841009595, -0.24393394141677704};
  HalfLogParts parts;
  parts.decls = "  const $F lc0 = " + FloatVector(c, 0) + ";\n" +
                "  const $F lc1 = " + FloatVector(c, 16) + ";\n" +
                "  const $F lt0 = " + FloatVector(t, 0) + ";\n" +
                "  const $F lt1 = " + FloatVector(t, 16) + ";\n";
  std::ostringstream os;
  os << "  $F le = __builtin_ia32_getexpps512_mask(" << w << ", z, 0xffff, 4);\n"
     << "  $F lm = __builtin_ia32_getmantps512_mask(" << w << ", 0, z, 0xffff, 4); /* [1, 2) */\n"
     << "  $I lj = ($I)lm >> 18;\n"
     << "  $F lc = __builtin_shuffle(lc0, lc1, lj);\n"
     << "  $F lt = __builtin_shuffle(lt0, lt1, lj);\n"
     << "  $F lr = __builtin_ia32_vfmaddps512_mask(lm, lc, z - 1.0f, 0xffff, 4);\n"
     << "  $F lp = lr * " << HexFloat(p[3] * k) << " + " << HexFloat(p[2] * k) << ";\n"
     << "  lp = lp * lr + " << HexFloat(p[1] * k) << ";\n"
     << "  lp = lp * lr + " << HexFloat(p[0] * k) << ";\n"
     << "  $F lh = __builtin_ia32_vfmaddps512_mask(le, z + " << HexFloat(l)
     << ", lt, 0xffff, 4);\n";
  if (corr.empty()) {
    os << "  $F res = __builtin_ia32_vfmaddps512_mask(lr, lp, lh, 0xffff, 4);\n";
  } else {
    // log1p: the small terms first, added to e log_b(2) + t in one rounding: r P(r), corr / w,
    // and the rounding error of log_b(2) in float32 times e + 1 where m >= 3/2 (where t has it
    // subtracted), else e: that is, times g + 1, g the exponent of 2 w / 3.
    os << "  $F lg = __builtin_ia32_getexpps512_mask(" << w << " * 0x1.555556p-1f, z, 0xffff, 4);\n"
       << "  $F ls = __builtin_ia32_vfmaddps512_mask(" << corr
       << ", __builtin_ia32_rcp14ps512_mask(" << w << ", z, 0xffff), z + " << HexFloat(delta)
       << ", 0xffff, 4);\n"
       << "  ls = __builtin_ia32_vfmaddps512_mask(lg, z + " << HexFloat(delta)
       << ", ls, 0xffff, 4);\n"
       << "  $F res = lh + __builtin_ia32_vfmaddps512_mask(lr, lp, ls, 0xffff, 4);\n";
  }
  parts.body = os.str();
  return parts;
}

std::string HalfLogAvx512Source(double base) {
  HalfLogParts log = HalfLogAvx512(base, "x", "");
  return "static inline $F $N($F x) {\n  const $F z = ($F){0};\n" + log.decls + log.body +
         "  /* QNaN, SNaN: QNaN; 0: -inf; 1: +0; -inf, x < 0: NaN; +inf: +inf; x > 0: res */\n"
         "  return __builtin_ia32_fixupimmps512_mask(res, x, ($I){0} + 0x03538422, 0, 0xffff, "
         "4);\n}\n";
}

// acosh(x) = log1p(u), u = (x - 1) + sqrt((x - 1)(x + 1)) (x - 1 exact for x < 2^24, and the
// product exact for float16 x), in 29 vector instructions: log(w) of w = 1 + u as above, plus
// corr / w, corr = u - (w - 1) the rounding error of w (1 / w by vrcp14ps: the correction is
// below 2^-24 w), so that x next to 1 keeps its relative accuracy (acosh(1 + 2^-10) = 0.044);
// log(2)'s rounding error in float32 is added back too (HalfLogAvx512 with `corr`).
// x = 1: +0, x < 1, -inf or NaN: NaN, +inf: +inf (vfixupimmps; x in (0, 1) is a NaN by the
// square root). x > 2^60, where (x - 1)(x + 1) could overflow (none is a float16 value), takes
// the C library's acoshf. Over every float16 input: misrounds the one input numpy misrounds.
std::string HalfAcoshAvx512Source() {
  HalfLogParts log = HalfLogAvx512(std::exp(1.0), "w", "corr");
  return "static inline $F $N($F x) {\n  const $F z = ($F){0};\n" + log.decls +
         "  $F t = x - 1.0f;\n"
         "  $F u = t + __builtin_ia32_sqrtps512_mask(t * (x + 1.0f), z, 0xffff, 4);\n"
         "  $F w = u + 1.0f;\n"
         "  $F corr = u - (w - 1.0f); /* 1 + u = w + corr */\n" +
         log.body +
         "  /* QNaN, SNaN: QNaN; 0, -inf, x < 0: NaN; 1: +0; +inf: +inf; x > 0: res */\n"
         "  res = __builtin_ia32_fixupimmps512_mask(res, x, ($I){0} + 0x03538322, 0, 0xffff, "
         "4);\n"
         "  unsigned huge = __builtin_ia32_cmpps512_mask(x, z + 0x1p60f, 0x1e, 0xffff, 4);\n"
         "  if (__builtin_expect(huge != 0, 0)) {\n"
         "    for (int i = 0; i < 16; ++i)\n"
         "      if (huge >> i & 1) res[i] = acoshf(x[i]);\n"
         "  }\n"
         "  return res;\n}\n";
}

// asinh(x) = sign(x) log(a + s), a = |x|, s = sqrt(a^2 + 1) (one fma, one square root), in 38
// vector instructions: log(w) + corr / w as in acosh above, with w + corr = s + a exactly (a
// Fast2Sum) for a >= 1/2, and = 1 + u for a < 1/2, u = a + a^2 / (1 + s) (s - 1 without
// cancellation; u ~ a for small a). asinh(+-0) = +-0, asinh(+-inf) = +-inf (vfixupimmps), a NaN
// stays NaN; a > 2^60, where a^2 could overflow (none is a float16 value), takes the C
// library's asinhf. Over every float16 input: misrounds 6 (numpy 4), each within 9e-9 (one at
// 6e-8) of a float16 halfway point.
std::string HalfAsinhAvx512Source() {
  HalfLogParts log = HalfLogAvx512(std::exp(1.0), "w", "corr");
  return "static inline $F $N($F x) {\n  const $F z = ($F){0};\n" + log.decls +
         "  $I sign = ($I)x & (int32_t)0x80000000;\n"
         "  $F a = ($F)(($I)x ^ sign);\n"
         "  $F s = __builtin_ia32_sqrtps512_mask(\n"
         "      __builtin_ia32_vfmaddps512_mask(a, a, z + 1.0f, 0xffff, 4), z, 0xffff, 4);\n"
         "  $F u = a + (a * a) / (1.0f + s);\n"
         "  /* w + corr = 1 + u (a < 1/2, u < 1) or s + a, exactly (Fast2Sum) */\n"
         "  unsigned small = __builtin_ia32_cmpps512_mask(a, z + 0.5f, 0x11, 0xffff, 4);\n"
         "  $F big = __builtin_ia32_blendmps_512_mask(s, z + 1.0f, small);\n"
         "  $F add = __builtin_ia32_blendmps_512_mask(a, u, small);\n"
         "  $F w = big + add;\n"
         "  $F corr = (big - w) + add;\n" +
         log.body +
         "  res = ($F)(($I)res | sign);\n"
         "  /* +inf: +inf, -inf: -inf, others as computed */\n"
         "  res = __builtin_ia32_fixupimmps512_mask(res, x, ($I){0} + 0x00540000, 0, 0xffff, "
         "4);\n"
         "  unsigned huge = __builtin_ia32_cmpps512_mask(a, z + 0x1p60f, 0x1e, 0xffff, 4);\n"
         "  if (__builtin_expect(huge != 0, 0)) {\n"
         "    for (int i = 0; i < 16; ++i)\n"
         "      if (huge >> i & 1) res[i] = asinhf(x[i]);\n"
         "  }\n"
         "  return res;\n}\n";
}

// 2^(j / 16), j = 0 .. 15, as a vector initializer.
std::string Exp2Sixteenths() {
  std::vector<double> t(16);
  for (int j = 0; j < 16; ++j) t[j] = std::exp2(j / 16.0);
  return FloatVector(t, 0);
}

// exp2(x) in 12 vector instructions: n = x rounded to a multiple of 1/16 (vrndscaleps), r = x -
// n (exact, |r| <= 1/32), 2^x = 2^floor(n) 2^(n - floor(n)) 2^r: the middle factor from a
// 16-entry table (vpermps, indexed by the low bits of 16 n + 1.5 2^23), 2^r = 1 + r q(r), q of
// degree 2 (least squares, relative error 2.3e-9), and 2^floor(n) by vscalefps (one rounding,
// to infinity, zero or a subnormal as the exact result). exp2(+inf) = +inf and exp2(-inf) = +0
// by vfixupimmps (r is a NaN there); a NaN stays NaN. Over every float16 input: misrounds the
// one input numpy misrounds.
std::string HalfExp2Avx512Source() {
  return "static inline $F $N($F x) {\n"
         "  const $F z = ($F){0};\n"
         "  const $F t = " +
         Exp2Sixteenths() +
         ";\n"
         "  $F n = __builtin_ia32_rndscaleps_mask(x, 0x48, z, 0xffff, 4); /* 1/16 */\n"
         "  $F r = x - n;\n"
         "  $F s = __builtin_shuffle(t, ($I)(n * 16.0f + 0x1.8p23f));\n"
         "  $F q = r * 0x1.c6afdep-5f + 0x1.ebff92p-3f;\n"
         "  q = q * r + 0x1.62e43p-1f;\n"
         "  $F p = __builtin_ia32_vfmaddps512_mask(s, q * r, s, 0xffff, 4);\n"
         "  $F res = __builtin_ia32_scalefps512_mask(p, n, z, 0xffff, 4);\n"
         "  /* -inf: +0, +inf: +inf, others as computed */\n"
         "  return __builtin_ia32_fixupimmps512_mask(res, x, ($I){0} + 0x00580000, 0, 0xffff, "
         "4);\n"
         "}\n";
}

// cosh(x) in 20 vector instructions: a = min(|x|, 12) (cosh(12) rounds to infinity in float16; a
// NaN stays), h = e^a / 2 as exp2 above with a = n ln 2 + r (n a multiple of 1/16, ln 2 in two
// parts, |r| <= ln 2 / 32, e^r = 1 + r q(r), q of degree 2, relative error 2.4e-9), and cosh(x)
// = h + 1 / (4 h), 1 / h by vrcp14ps and one Newton step (relative error below 2^-27). Over every
// float16 input: misrounds 2 (+-1/32, whose cosh lies 4e-8 above a float16 halfway point;
// numpy none).
std::string HalfCoshAvx512Source() {
  return "static inline $F $N($F x) {\n"
         "  const $F z = ($F){0};\n"
         "  const $F t = " +
         Exp2Sixteenths() +
         ";\n"
         "  $F a = __builtin_ia32_minps512_mask(z + 12.0f, ($F)(($I)x & 0x7fffffff), z, 0xffff, "
         "4);\n"
         "  $F n = __builtin_ia32_rndscaleps_mask(a * 1.44269504088896341f, 0x48, z, 0xffff, 4);\n"
         "  $F r = __builtin_ia32_vfmaddps512_mask(-n, z + 0x1.62e4p-1f, a, 0xffff, 4);\n"
         "  r = __builtin_ia32_vfmaddps512_mask(-n, z + 0x1.7f7d1cp-20f, r, 0xffff, 4);\n"
         "  $F s = __builtin_shuffle(t, ($I)(n * 16.0f + 0x1.8p23f));\n"
         "  $F q = r * 0x1.5554d0p-3f + 0x1.0001f6p-1f;\n"
         "  q = q * r + 1.0f;\n"
         "  $F p = __builtin_ia32_vfmaddps512_mask(s, q * r, s, 0xffff, 4);\n"
         "  $F h = __builtin_ia32_scalefps512_mask(p, n - 1.0f, z, 0xffff, 4); /* e^a / 2 */\n"
         "  $F v = __builtin_ia32_rcp14ps512_mask(h, z, 0xffff);\n"
         "  v = __builtin_ia32_vfmaddps512_mask(\n"
         "      v, __builtin_ia32_vfmaddps512_mask(-h, v, z + 1.0f, 0xffff, 4), v, 0xffff, 4);\n"
         "  return __builtin_ia32_vfmaddps512_mask(v, z + 0.25f, h, 0xffff, 4);\n"
         "}\n";
}

}  // namespace

std::string HalfPrecisionAvx512Source(const std::string& fname) {
  if (fname == "logf") return HalfLogAvx512Source(std::exp(1.0));
  if (fname == "log2f") return HalfLogAvx512Source(2.0);
  if (fname == "log10f") return HalfLogAvx512Source(10.0);
  if (fname == "exp2f") return HalfExp2Avx512Source();
  if (fname == "coshf") return HalfCoshAvx512Source();
  if (fname == "acoshf") return HalfAcoshAvx512Source();
  if (fname == "asinhf") return HalfAsinhAvx512Source();
  return "";
}

}  // namespace codegen
}  // namespace tessera
