// Vector math kernels of the host C code generator: C definitions of float functions over GCC
// vector types whose lanes the C compiler evaluates together, where the C library's function
// (scalar, or libmvec's vector variant) is slower than a few vector instructions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessera {
namespace codegen {

/*! \brief The C definition of `static inline V name(V a0, V a1)`: C's fmod of each lane pair
 *  (fmodf for `bits` 32, fmod for 64), exactly, as numpy's np.fmod. `vector_type` and
 *  `mask_type` name GCC vector types of `lanes` floats and of `lanes` signed integers of the same
 *  width. Where the compiler has a fast fused multiply-add (__FP_FAST_FMA[F]): m = fma(-trunc(a0
 *  / a1), a1, a0), the remainder exactly whenever the rounded quotient truncates to the true
 *  one; a lane where |m| >= |a1| or m's sign differs from a0's had a quotient off by one (or an
 *  infinity, a NaN, a zero divisor) and takes the C library's fmod; the result carries a0's
 *  sign (fmod(-4, 2) is -0.0). Elsewhere the C library's function lane by lane. */
std::string VectorFmodSource(const std::string& name, const std::string& vector_type,
                             const std::string& mask_type, int bits, int lanes);

/*! \brief For the float32 C library functions "atanf", "acosf", "asinf" and "acoshf": the C
 * definitions of `static inline float tessera_<fname>(float)` (and of the functions it calls, in
 * order, each as {name, definition}) whose lane loops the C compiler vectorizes: branch-free
 * polynomials within 2.2 ulp of the correctly rounded result over every float32 input, NaN,
 * infinities and signed zeros as the C library's. Empty for other names. On x86 without AVX2 they
 * call the C library's function. */
std::vector<std::pair<std::string, std::string>> VectorFloatMathKernels(const std::string& fname);

/*! \brief The C definition of `static inline F name(F x, F y)`, F = `float_type` (a vector type
 *  of 512 bits of floats of `bits` 32 or 64; `int_type` the integers of that width): powf /
 *  pow of each lane pair with AVX-512F instructions (GCC's builtins: only for GCC with
 *  __AVX512F__), within about 1 ulp of the correctly rounded result; lanes with special
 *  operands (x <= 0, NaN, infinities) call the C library's function. */
std::string PowAvx512Source(int bits, const std::string& name, const std::string& float_type,
                            const std::string& int_type);

/*! \brief For a float32 C library function whose result is rounded to float16 right away
 *  ("logf", "log2f", "log10f", "exp2f", "coshf", "acoshf", "asinhf"): the C definition of
 *  `static inline $F $N($F x)` over sixteen float32 lanes with AVX-512F (GCC's builtins: only
 *  for GCC with __AVX512F__; $N the name, $F and $I GCC vector types of sixteen float32 and
 *  int32 lanes, to be substituted), accurate enough that the float16 rounding of its result is
 *  within one ulp of the correctly rounded one and misrounds only next to halfway cases, with
 *  NaN, infinities and zeros as the C library's. Empty for other names. */
std::string HalfPrecisionAvx512Source(const std::string& fname);

}  // namespace codegen
}  // namespace tessera
