/* tessera/dsl/convert.h: value conversions with the DSL's semantics, for scalars and between any
 * two native vector types. Included by tessera/dsl.h.
 *
 * Integers wrap to the narrower width; floats convert to the nearest value; a float converted to
 * an integer saturates to int32 (NaN gives 0) and then wraps to the target width. */
#ifndef TESSERA_DSL_CONVERT_H_
#define TESSERA_DSL_CONVERT_H_

#include <limits.h>

static inline int __tessera_f2i32(float x) {
  if (x != x) return 0;
  if (x >= 2147483648.0f) return INT_MAX;
  if (x <= -2147483648.0f) return INT_MIN;
  return (int)x;
}

/* ---- Scalars: __tessera_conv_<to>_<from>(x) ----------------------------------------------------
 * Two copies of each type list, because a list macro cannot expand inside its own expansion. */

#define __TESSERA_INT_TYPES_A(X, arg) \
  X(arg, char) X(arg, uchar) X(arg, short) X(arg, ushort) X(arg, int) X(arg, uint)
#define __TESSERA_INT_TYPES_B(X, arg) \
  X(arg, char) X(arg, uchar) X(arg, short) X(arg, ushort) X(arg, int) X(arg, uint)
#define __TESSERA_FLOAT_TYPES_A(X, arg) X(arg, float) __TESSERA_IF_HALF(X(arg, half))
#define __TESSERA_FLOAT_TYPES_B(X, arg) X(arg, float) __TESSERA_IF_HALF(X(arg, half))

#define __TESSERA_CONV(D, S, expr) \
  static inline D __tessera_conv_##D##_##S(S x) { return (expr); }
#define __TESSERA_CONV_PLAIN(D, S) __TESSERA_CONV(D, S, (D)x)
#define __TESSERA_CONV_F2I(D, S) __TESSERA_CONV(D, S, (D)__tessera_f2i32((float)x))
#define __TESSERA_CONV_TO_INT(_, D) \
  __TESSERA_INT_TYPES_B(__TESSERA_CONV_PLAIN, D) __TESSERA_FLOAT_TYPES_B(__TESSERA_CONV_F2I, D)
#define __TESSERA_CONV_TO_FLOAT(_, D) \
  __TESSERA_INT_TYPES_B(__TESSERA_CONV_PLAIN, D) __TESSERA_FLOAT_TYPES_B(__TESSERA_CONV_PLAIN, D)

__TESSERA_INT_TYPES_A(__TESSERA_CONV_TO_INT, _)
__TESSERA_FLOAT_TYPES_A(__TESSERA_CONV_TO_FLOAT, _)

/* bfloat16 goes through float both ways. */
#define __TESSERA_CONV_FROM_BF16(_, D) \
  __TESSERA_CONV(D, bfloat16, __tessera_conv_##D##_float(__bfloat16_to_float(x)))
#define __TESSERA_CONV_TO_BF16(_, S) \
  __TESSERA_CONV(bfloat16, S, __bfloat16_from_float(__tessera_conv_float_##S(x)))
__TESSERA_INT_TYPES_A(__TESSERA_CONV_FROM_BF16, _)
__TESSERA_FLOAT_TYPES_A(__TESSERA_CONV_FROM_BF16, _)
__TESSERA_INT_TYPES_A(__TESSERA_CONV_TO_BF16, _)
__TESSERA_FLOAT_TYPES_A(__TESSERA_CONV_TO_BF16, _)
__TESSERA_CONV(bfloat16, bfloat16, x)

/* ---- Vectors: __vcvt_<to>(x, first, stride) and __vcvt_into_<to>(acc, x, dst_first) ----------
 * __vcvt converts lanes first, first + stride, ... of x into lanes 0, 1, ... of a new vector
 * (zero where x runs out): whole casts, halves, quarters, even and odd lanes. __vcvt_into
 * converts every lane of x into acc from lane dst_first on: narrowing several sources into one. */

#define __TESSERA_VECTORS_A(X, ...)                                                        \
  X(char32, char, 32, __VA_ARGS__) X(uchar32, uchar, 32, __VA_ARGS__)                      \
  X(short16, short, 16, __VA_ARGS__) X(ushort16, ushort, 16, __VA_ARGS__)                  \
  X(int8, int, 8, __VA_ARGS__) X(uint8, uint, 8, __VA_ARGS__)                              \
  X(float8, float, 8, __VA_ARGS__) X(bfloat16x16, bfloat16, 16, __VA_ARGS__)               \
  __TESSERA_IF_HALF(X(half16, half, 16, __VA_ARGS__))
#define __TESSERA_VECTORS_B(X, ...)                                                        \
  X(char32, char, 32, __VA_ARGS__) X(uchar32, uchar, 32, __VA_ARGS__)                      \
  X(short16, short, 16, __VA_ARGS__) X(ushort16, ushort, 16, __VA_ARGS__)                  \
  X(int8, int, 8, __VA_ARGS__) X(uint8, uint, 8, __VA_ARGS__)                              \
  X(float8, float, 8, __VA_ARGS__) X(bfloat16x16, bfloat16, 16, __VA_ARGS__)               \
  __TESSERA_IF_HALF(X(half16, half, 16, __VA_ARGS__))

#define __TESSERA_VCVT(SV, S, SN, DV, D, DN)                                              \
  static inline DV __vcvt_##DV##_##SV(SV x, int first, int stride) {                      \
    DV r;                                                                                 \
    memset(&r, 0, sizeof r);                                                              \
    for (int i = 0; i < DN; ++i) {                                                        \
      int k = first + i * stride;                                                         \
      if (k < 0 || k >= SN) break;                                                        \
      __TESSERA_SET_##DV(r, i, __tessera_conv_##D##_##S(__TESSERA_GET_##SV(x, k)));       \
    }                                                                                     \
    return r;                                                                             \
  }                                                                                       \
  static inline DV __vcvt_into_##DV##_##SV(DV acc, SV x, int dst_first) {                 \
    for (int i = 0; i < SN && dst_first + i < DN; ++i)                                    \
      __TESSERA_SET_##DV(acc, dst_first + i, __tessera_conv_##D##_##S(__TESSERA_GET_##SV(x, i))); \
    return acc;                                                                           \
  }
#define __TESSERA_VCVT_TO(DV, D, DN, _) __TESSERA_VECTORS_B(__TESSERA_VCVT, DV, D, DN)
__TESSERA_VECTORS_A(__TESSERA_VCVT_TO, _)

#define __vcvt_char32(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_char32), x, (f), (s))
#define __vcvt_uchar32(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_uchar32), x, (f), (s))
#define __vcvt_short16(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_short16), x, (f), (s))
#define __vcvt_ushort16(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_ushort16), x, (f), (s))
#define __vcvt_int8(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_int8), x, (f), (s))
#define __vcvt_uint8(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_uint8), x, (f), (s))
#define __vcvt_half16(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_half16), x, (f), (s))
#define __vcvt_float8(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_float8), x, (f), (s))
#define __vcvt_bfloat16x16(x, f, s) __TESSERA_CALL(__TESSERA_ALL(__vcvt_bfloat16x16), x, (f), (s))

/* The source picks the function: acc is the destination type already. */
#define __TESSERA_VCVT_INTO(DV, acc, x, f)                            \
  ({                                                                  \
    __auto_type __tessera_s = (x);                                    \
    _Generic(__tessera_s, __TESSERA_ALL(__vcvt_into_##DV))((acc), __tessera_s, (f)); \
  })
#define __vcvt_into_char32(acc, x, f) __TESSERA_VCVT_INTO(char32, acc, x, f)
#define __vcvt_into_uchar32(acc, x, f) __TESSERA_VCVT_INTO(uchar32, acc, x, f)
#define __vcvt_into_short16(acc, x, f) __TESSERA_VCVT_INTO(short16, acc, x, f)
#define __vcvt_into_ushort16(acc, x, f) __TESSERA_VCVT_INTO(ushort16, acc, x, f)
#define __vcvt_into_int8(acc, x, f) __TESSERA_VCVT_INTO(int8, acc, x, f)
#define __vcvt_into_uint8(acc, x, f) __TESSERA_VCVT_INTO(uint8, acc, x, f)
#define __vcvt_into_half16(acc, x, f) __TESSERA_VCVT_INTO(half16, acc, x, f)
#define __vcvt_into_float8(acc, x, f) __TESSERA_VCVT_INTO(float8, acc, x, f)
#define __vcvt_into_bfloat16x16(acc, x, f) __TESSERA_VCVT_INTO(bfloat16x16, acc, x, f)

/* ---- Rounding conversions of 16-bit floats to 32-bit integers (dsl.CombineInstructions) -------
 * __vcvtue_tw_<to>(x) / __vcvtuo_tw_<to>(x): the even / odd lanes of x rounded to nearest (ties
 * to even) and converted; __vcvtul_tw / __vcvtuh_tw: the low / high half (X3). __vzip_low_<T>(a,
 * b) / __vzip_high_<T>: a0 b0 a1 b1 ... of the low / high halves. */
#define __vcvtue_tw_int8(x) __vcvt_int8(__vrint(x), 0, 2)
#define __vcvtuo_tw_int8(x) __vcvt_int8(__vrint(x), 1, 2)
#define __vcvtul_tw_int8(x) __vcvt_int8(__vrint(x), 0, 1)
#define __vcvtuh_tw_int8(x) __vcvt_int8(__vrint(x), 8, 1)
#define __vcvtue_tw_uint8(x) __vcvt_uint8(__vrint(x), 0, 2)
#define __vcvtuo_tw_uint8(x) __vcvt_uint8(__vrint(x), 1, 2)
#define __vcvtul_tw_uint8(x) __vcvt_uint8(__vrint(x), 0, 1)
#define __vcvtuh_tw_uint8(x) __vcvt_uint8(__vrint(x), 8, 1)
#define __TESSERA_ZIP(T, N, a, b, first)                                \
  ({                                                                    \
    T __tessera_a = (a), __tessera_b = (b), __tessera_r;                \
    for (int __tessera_i = 0; __tessera_i < (N) / 2; ++__tessera_i) {   \
      __tessera_r[2 * __tessera_i] = __tessera_a[(first) + __tessera_i];     \
      __tessera_r[2 * __tessera_i + 1] = __tessera_b[(first) + __tessera_i]; \
    }                                                                   \
    __tessera_r;                                                        \
  })
#define __vzip_low_int8(a, b) __TESSERA_ZIP(int8, 8, a, b, 0)
#define __vzip_high_int8(a, b) __TESSERA_ZIP(int8, 8, a, b, 4)
#define __vzip_low_uint8(a, b) __TESSERA_ZIP(uint8, 8, a, b, 0)
#define __vzip_high_uint8(a, b) __TESSERA_ZIP(uint8, 8, a, b, 4)

#endif /* TESSERA_DSL_CONVERT_H_ */
