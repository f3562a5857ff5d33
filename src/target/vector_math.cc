// Vector math kernels of the host C code generator (see tessera/target/vector_math.h).
#include "tessera/target/vector_math.h"

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

// The float32 kernels of VectorFloatMathKernels. numpy's float32 atan, acos and acosh on an
// AVX-512 host are Intel SVML's; the C library's (libmvec's vector variants) were slower
// (bench_topi --all, 2048 x 2048, one thread of a Zen 4, thread CPU time: atan 1.74 ms, acos
// 2.33, acosh 3.20 against numpy's 1.69, 1.67, 2.56). Each is a polynomial fitted here for this
// use (a least-squares fit reweighted towards the minimax one), evaluated in float32 with the
// argument reduced without branches, so that the lane loops become vector code:
// - atan(x): u = |x| or 1 / |x| (|x| > 1), atan(u) = u + u z p(z), z = u^2, p of degree 8
//   (relative error 2^-28.5 on [0, 1]); pi/2 - atan(u) with pi/2 in two parts; x's sign.
// - acos(x): asin(u) = u + u z p(z), p of degree 4 (2^-27.6 on z in [0, 1/4]); |x| <= 1/2:
//   pi/2 - asin(x); else u = sqrt((1 - |x|) / 2), acos(|x|) = 2 asin(u), pi - 2 asin(u) for
//   x < 0 (pi and pi/2 in two parts). NaN and |x| > 1 give NaN through the square root.
// - acosh(x) = log1p(t + sqrt(t^2 + 2t)), t = x - 1 exact, t^2 + 2t rounded once (fma);
//   above 4096, log1p(t) + ln 2 (the rest is below 2^-25 relative). log1p(v): y = 1 + v,
//   the rounding error c = v - (y - 1) divided by y (~ (2 - m) 2^-k, m in [sqrt(1/2),
//   sqrt(2)) the mantissa of y = m 2^k, enough for a correction), log(m) = f - f^2 / 2 +
//   f^3 p(f), f = m - 1, p of degree 7 (2^-27.4), k ln 2 in two parts. x < 1 and NaN give
//   NaN, +inf gives +inf.
// Every float32 input against the double-precision function rounded to float32: atan within
// 1.37 ulp, acos 1.25, acosh 2.2 (tests/python/codegen/test_codegen_host_vector_math.py checks
// a sample and the special values). asinh through the same log1p (and a division and a square
// root) measured no faster than numpy's (2.98 against 2.91 ms) and is left to the C library.
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

const char* const k_tessera_acosf =
    "static inline float tessera_acosf(float x) {\n"
    "#if defined(__x86_64__) && !defined(__AVX2__)\n"
    "  return acosf(x);\n"
    "#else\n"
    "  float a = __builtin_fabsf(x);\n"
    "  int small = a <= 0.5f;\n"
    "  float z = small ? a * a : 0.5f - 0.5f * a;\n"
    "  float u = small ? a : __builtin_sqrtf(z);\n"
    "  float p = 0.04216625913977623f;\n"
    "  p = p * z + 0.02417954057455063f;\n"
    "  p = p * z + 0.04547037184238434f;\n"
    "  p = p * z + 0.07495297491550446f;\n"
    "  p = p * z + 0.16666752099990845f;\n"
    "  float q = (u * z) * p + u; /* asin(u) */\n"
    "  float big = x < 0.0f ? (3.14159274101257324f - 2.0f * q) + -8.74227800037248567e-8f : 2.0f "
    "* q;\n"
    "  return small ? (1.57079637050628662f - __builtin_copysignf(q, x)) + "
    "-4.37113900018624283e-8f : big;\n"
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

std::vector<std::pair<std::string, std::string>> VectorFloatMathKernels(const std::string& fname) {
  if (fname == "atanf") return {{"tessera_atanf", k_tessera_atanf}};
  if (fname == "acosf") return {{"tessera_acosf", k_tessera_acosf}};
  if (fname == "acoshf")
    return {{"tessera_log1pf_nonneg", k_tessera_log1pf_nonneg},
            {"tessera_acoshf", k_tessera_acoshf}};
  return {};
}

}  // namespace codegen
}  // namespace tessera
