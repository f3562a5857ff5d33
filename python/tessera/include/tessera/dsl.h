/* tessera/dsl.h: the host meaning of the vector DSL's OpenCL-C-style source (C11 + GNU
 * vector extensions). Generated kernels include it and run on the host CPU: address spaces are
 * plain memory, 256-bit vectors are compiler vector types, masks are 32-bit predicates, every
 * __v* intrinsic is portable C with the semantics of the language reference, and the 4 TECs of a
 * core are 4 threads. Everything here is static: each compiled kernel owns a private copy. */
#ifndef TESSERA_DSL_H_
#define TESSERA_DSL_H_

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Vectors passed by value between functions of one kernel file: no ABI crosses a boundary, so
 * the compilers' notes about 256-bit arguments without AVX are noise. */
#pragma GCC diagnostic ignored "-Wpsabi"

#if defined(__CHAR_UNSIGNED__)
#error "tessera/dsl.h: the DSL's char is signed; compile with -fsigned-char"
#endif

/* half needs _Float16 (GCC >= 12, clang >= 15 on x86-64 and AArch64). Without it, kernels that
 * do not use half still compile; one that does fails on the type named below. */
#if defined(__FLT16_MAX__)
#define __TESSERA_IF_HALF(...) __VA_ARGS__
#else
#define __TESSERA_IF_HALF(...)
#endif

/* ---- Address spaces: all of them are host memory --------------------------------------------- */

#define __kernel
#define __global
#define __local
#define __constant
#define __private
#define __lsram

/* ---- Scalar types ---------------------------------------------------------------------------- */

/* OpenCL spellings; glibc's <sys/types.h> may declare the same typedefs, which C11 allows. */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#if defined(__FLT16_MAX__)
typedef _Float16 half;
#else
typedef struct __tessera_half_needs_Float16_use_gcc12_or_clang15 half;
#endif

/* bfloat16 is storage only on the host compilers we target: arithmetic goes through float. */
typedef struct {
  uint16_t bits;
} bfloat16;

static inline float __bfloat16_to_float(bfloat16 x) {
  uint32_t u = (uint32_t)x.bits << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline bfloat16 __bfloat16_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  bfloat16 r;
  if (isnan(f)) {
    r.bits = (uint16_t)((u >> 16) | 0x0040u); /* keep it a (quiet) NaN after truncation */
  } else {
    r.bits = (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16); /* round to nearest even */
  }
  return r;
}

/* ---- Native vectors and masks ---------------------------------------------------------------- */

/* Element alignment, not 32 bytes: kernels address vectors at any element offset of the
 * caller's arrays, so every vector access must be an unaligned one. */
#define __TESSERA_VECTOR(elem, name) \
  typedef elem name __attribute__((vector_size(32), aligned(sizeof(elem))))
__TESSERA_VECTOR(char, char32);
__TESSERA_VECTOR(uchar, uchar32);
__TESSERA_VECTOR(short, short16);
__TESSERA_VECTOR(ushort, ushort16);
__TESSERA_VECTOR(int, int8);
__TESSERA_VECTOR(uint, uint8);
__TESSERA_IF_HALF(__TESSERA_VECTOR(half, half16);)
__TESSERA_VECTOR(float, float8);
#undef __TESSERA_VECTOR

/* A struct, so that _Generic tells it apart from ushort16. */
typedef struct {
  ushort16 bits;
} bfloat16x16;

/* A mask is a predicate with one bit per byte of the 256-bit vector. An active lane sets all of
 * its bits; readers test the bit of the lane's lowest byte. The lane count is in the name only. */
typedef uint32_t bool8;
typedef uint32_t bool16;
typedef uint32_t bool32;

#define ALL_TRUE_b ((bool32)0xFFFFFFFFu)
#define ALL_TRUE_h ((bool16)0xFFFFFFFFu)
#define ALL_TRUE_w ((bool8)0xFFFFFFFFu)

static inline bool32 __vmov_b(uint32_t bits) { return bits; }
static inline bool16 __vmov_h(uint32_t bits) { return bits; }
static inline bool8 __vmov_w(uint32_t bits) { return bits; }

#define __TESSERA_LANE_ON(m, i, n) ((((m) >> ((i) * (32 / (n)))) & 1u) != 0)
#define __TESSERA_LANE_BITS(i, n) \
  ((uint32_t)((1ull << (32 / (n))) - 1ull) << ((i) * (32 / (n))))

/* ---- Per-type intrinsics ------------------------------------------------------------------------
 * V: vector type, E: element type, N: lanes, U: the same-width vector that does the arithmetic
 * (unsigned for integers, so that overflow wraps as the DSL requires instead of being undefined).
 * Masks of arithmetic are ignored: the reference leaves inactive lanes of those undefined. */

#define __TESSERA_COMPARE_OP(V, N, name, op)                                \
  static inline uint32_t name##_##V(V a, V b, uint32_t m) {                 \
    uint32_t r = 0;                                                         \
    for (int i = 0; i < N; ++i)                                             \
      if (__TESSERA_LANE_ON(m, i, N) && a[i] op b[i]) r |= __TESSERA_LANE_BITS(i, N); \
    return r;                                                               \
  }

#define __TESSERA_COMMON_OPS(V, E, N, U)                                                   \
  static inline V __vload_##V(const V* p, uint32_t m) {                                    \
    V r = {0};                                                                             \
    if (m == 0xFFFFFFFFu) { /* the fast path: one unaligned vector load */                 \
      memcpy(&r, p, sizeof r);                                                             \
      return r;                                                                            \
    }                                                                                      \
    const E* e = (const E*)p; /* touch active lanes only: a tail may end the array */      \
    for (int i = 0; i < N; ++i)                                                            \
      if (__TESSERA_LANE_ON(m, i, N)) r[i] = e[i];                                         \
    return r;                                                                              \
  }                                                                                        \
  static inline void __vstore_##V(V v, V* p, uint32_t m) {                                 \
    if (m == 0xFFFFFFFFu) {                                                                \
      memcpy(p, &v, sizeof v);                                                             \
      return;                                                                              \
    }                                                                                      \
    E* e = (E*)p;                                                                          \
    for (int i = 0; i < N; ++i)                                                            \
      if (__TESSERA_LANE_ON(m, i, N)) e[i] = v[i];                                         \
  }                                                                                        \
  static inline V __vload_stride_##V(const V* p, int stride, uint32_t m) {                 \
    V r = {0};                                                                             \
    const E* e = (const E*)p;                                                              \
    for (int i = 0; i < N; ++i)                                                            \
      if (__TESSERA_LANE_ON(m, i, N)) r[i] = e[(ptrdiff_t)i * stride];                     \
    return r;                                                                              \
  }                                                                                        \
  static inline void __vstore_stride_##V(V v, V* p, int stride, uint32_t m) {              \
    E* e = (E*)p;                                                                          \
    for (int i = 0; i < N; ++i)                                                            \
      if (__TESSERA_LANE_ON(m, i, N)) e[(ptrdiff_t)i * stride] = v[i];                     \
  }                                                                                        \
  static inline V __vbcast_##V(E x) {                                                      \
    V r = {0};                                                                             \
    for (int i = 0; i < N; ++i) r[i] = x;                                                  \
    return r;                                                                              \
  }                                                                                        \
  static inline V __vadd_##V(V a, V b, uint32_t m) { (void)m; return (V)((U)a + (U)b); }   \
  static inline V __vsub_##V(V a, V b, uint32_t m) { (void)m; return (V)((U)a - (U)b); }   \
  static inline V __vmul_##V(V a, V b, uint32_t m) { (void)m; return (V)((U)a * (U)b); }   \
  static inline V __vmin_##V(V a, V b, uint32_t m) {                                       \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i) r[i] = a[i] < b[i] ? a[i] : b[i];                          \
    return r;                                                                              \
  }                                                                                        \
  static inline V __vmax_##V(V a, V b, uint32_t m) {                                       \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i) r[i] = a[i] > b[i] ? a[i] : b[i];                          \
    return r;                                                                              \
  }                                                                                        \
  static inline V __vsel_##V(V x, V y, uint32_t m) {                                       \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i) r[i] = __TESSERA_LANE_ON(m, i, N) ? x[i] : y[i];           \
    return r;                                                                              \
  }                                                                                        \
  __TESSERA_COMPARE_OP(V, N, __vceq, ==)                                                   \
  __TESSERA_COMPARE_OP(V, N, __vcneq, !=)                                                  \
  __TESSERA_COMPARE_OP(V, N, __vclt, <)                                                    \
  __TESSERA_COMPARE_OP(V, N, __vcle, <=)                                                   \
  __TESSERA_COMPARE_OP(V, N, __vcgt, >)                                                    \
  __TESSERA_COMPARE_OP(V, N, __vcge, >=)

/* MIN is the element's minimum for signed types and 0 for unsigned ones. Division by zero gives
 * 0 and MIN / -1 saturates, as the reference says, instead of trapping like C. */
#define __TESSERA_INT_OPS(V, E, N, U, MIN)                                                 \
  static inline V __vdiv_##V(V a, V b, uint32_t m) {                                       \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i)                                                            \
      r[i] = b[i] == 0 ? (E)0                                                              \
             : ((MIN) != 0 && a[i] == (E)(MIN) && b[i] == (E)-1) ? (E)~(E)(MIN)            \
                                                                 : (E)(a[i] / b[i]);       \
    return r;                                                                              \
  }                                                                                        \
  static inline V __vmod_##V(V a, V b, uint32_t m) {                                       \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i)                                                            \
      r[i] = (b[i] == 0 || ((MIN) != 0 && b[i] == (E)-1)) ? (E)0 : (E)(a[i] % b[i]);       \
    return r;                                                                              \
  }                                                                                        \
  static inline V __vand_##V(V a, V b, uint32_t m) { (void)m; return a & b; }              \
  static inline V __vor_##V(V a, V b, uint32_t m) { (void)m; return a | b; }               \
  static inline V __vxor_##V(V a, V b, uint32_t m) { (void)m; return a ^ b; }              \
  static inline V __vinv_##V(V a, uint32_t m) { (void)m; return ~a; }                      \
  /* Shift counts are read as unsigned; counts of the width or more shift everything out. */ \
  static inline V __vsl_##V(V a, V s, uint32_t m) {                                        \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i) {                                                          \
      uint32_t c = ((U)s)[i];                                                              \
      r[i] = c >= 8 * sizeof(E) ? (E)0 : (E)(((U)a)[i] << c);                              \
    }                                                                                      \
    return r;                                                                              \
  }                                                                                        \
  static inline V __vsr_##V(V a, V s, uint32_t m) {                                        \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i) {                                                          \
      uint32_t c = ((U)s)[i];                                                              \
      int negative = (MIN) != 0 && ((a[i] >> (8 * sizeof(E) - 1)) & 1);                   \
      r[i] = c >= 8 * sizeof(E) ? (negative ? (E)-1 : (E)0)                                \
                                : (E)(a[i] >> c);                                          \
    }                                                                                      \
    return r;                                                                              \
  }

#define __TESSERA_FLOAT_OPS(V, E, N)                                                       \
  static inline V __vdiv_##V(V a, V b, uint32_t m) { (void)m; return a / b; }              \
  static inline V __vmod_##V(V a, V b, uint32_t m) {                                       \
    (void)m;                                                                               \
    V r;                                                                                   \
    for (int i = 0; i < N; ++i) r[i] = (E)fmodf((float)a[i], (float)b[i]);                 \
    return r;                                                                              \
  }

__TESSERA_COMMON_OPS(char32, char, 32, uchar32)
__TESSERA_COMMON_OPS(uchar32, uchar, 32, uchar32)
__TESSERA_COMMON_OPS(short16, short, 16, ushort16)
__TESSERA_COMMON_OPS(ushort16, ushort, 16, ushort16)
__TESSERA_COMMON_OPS(int8, int, 8, uint8)
__TESSERA_COMMON_OPS(uint8, uint, 8, uint8)
__TESSERA_IF_HALF(__TESSERA_COMMON_OPS(half16, half, 16, half16))
__TESSERA_COMMON_OPS(float8, float, 8, float8)
__TESSERA_INT_OPS(char32, char, 32, uchar32, -128)
__TESSERA_INT_OPS(uchar32, uchar, 32, uchar32, 0)
__TESSERA_INT_OPS(short16, short, 16, ushort16, -32768)
__TESSERA_INT_OPS(ushort16, ushort, 16, ushort16, 0)
__TESSERA_INT_OPS(int8, int, 8, uint8, (-2147483647 - 1))
__TESSERA_INT_OPS(uint8, uint, 8, uint8, 0)
__TESSERA_IF_HALF(__TESSERA_FLOAT_OPS(half16, half, 16))
__TESSERA_FLOAT_OPS(float8, float, 8)

/* bfloat16x16: memory operations move the bits; arithmetic and comparisons round-trip each lane
 * through float, which is exact for comparisons and rounds once for arithmetic. */
static inline bfloat16x16 __vload_bfloat16x16(const bfloat16x16* p, uint32_t m) {
  bfloat16x16 r;
  r.bits = __vload_ushort16((const ushort16*)p, m);
  return r;
}
static inline void __vstore_bfloat16x16(bfloat16x16 v, bfloat16x16* p, uint32_t m) {
  __vstore_ushort16(v.bits, (ushort16*)p, m);
}
static inline bfloat16x16 __vload_stride_bfloat16x16(const bfloat16x16* p, int stride, uint32_t m) {
  bfloat16x16 r;
  r.bits = __vload_stride_ushort16((const ushort16*)p, stride, m);
  return r;
}
static inline void __vstore_stride_bfloat16x16(bfloat16x16 v, bfloat16x16* p, int stride,
                                               uint32_t m) {
  __vstore_stride_ushort16(v.bits, (ushort16*)p, stride, m);
}
static inline bfloat16x16 __vbcast_bfloat16x16(bfloat16 x) {
  bfloat16x16 r;
  r.bits = __vbcast_ushort16(x.bits);
  return r;
}
static inline bfloat16x16 __vsel_bfloat16x16(bfloat16x16 x, bfloat16x16 y, uint32_t m) {
  bfloat16x16 r;
  r.bits = __vsel_ushort16(x.bits, y.bits, m);
  return r;
}
static inline float __tessera_bf16_lane(bfloat16x16 v, int i) {
  bfloat16 b;
  b.bits = v.bits[i];
  return __bfloat16_to_float(b);
}

#define __TESSERA_BF16_BINARY(name, expr)                                                   \
  static inline bfloat16x16 name##_bfloat16x16(bfloat16x16 a, bfloat16x16 b, uint32_t m) { \
    (void)m;                                                                                \
    bfloat16x16 r;                                                                          \
    for (int i = 0; i < 16; ++i) {                                                          \
      float x = __tessera_bf16_lane(a, i), y = __tessera_bf16_lane(b, i);                   \
      r.bits[i] = __bfloat16_from_float(expr).bits;                                         \
    }                                                                                       \
    return r;                                                                               \
  }
__TESSERA_BF16_BINARY(__vadd, x + y)
__TESSERA_BF16_BINARY(__vsub, x - y)
__TESSERA_BF16_BINARY(__vmul, x * y)
__TESSERA_BF16_BINARY(__vdiv, x / y)
__TESSERA_BF16_BINARY(__vmin, x < y ? x : y)
__TESSERA_BF16_BINARY(__vmax, x > y ? x : y)
#undef __TESSERA_BF16_BINARY

#define __TESSERA_BF16_COMPARE(name, op)                                                   \
  static inline uint32_t name##_bfloat16x16(bfloat16x16 a, bfloat16x16 b, uint32_t m) {   \
    uint32_t r = 0;                                                                        \
    for (int i = 0; i < 16; ++i)                                                           \
      if (__TESSERA_LANE_ON(m, i, 16) && __tessera_bf16_lane(a, i) op __tessera_bf16_lane(b, i)) \
        r |= __TESSERA_LANE_BITS(i, 16);                                                   \
    return r;                                                                              \
  }
__TESSERA_BF16_COMPARE(__vceq, ==)
__TESSERA_BF16_COMPARE(__vcneq, !=)
__TESSERA_BF16_COMPARE(__vclt, <)
__TESSERA_BF16_COMPARE(__vcle, <=)
__TESSERA_BF16_COMPARE(__vcgt, >)
__TESSERA_BF16_COMPARE(__vcge, >=)
#undef __TESSERA_BF16_COMPARE

/* Mask logic: inactive lanes of the result are false. */
static inline uint32_t __vand_mask(uint32_t a, uint32_t b, uint32_t m) { return a & b & m; }
static inline uint32_t __vor_mask(uint32_t a, uint32_t b, uint32_t m) { return (a | b) & m; }
static inline uint32_t __vxor_mask(uint32_t a, uint32_t b, uint32_t m) { return (a ^ b) & m; }
static inline uint32_t __vinv_mask(uint32_t a, uint32_t m) { return ~a & m; }
static inline uint32_t __vsel_mask(uint32_t x, uint32_t y, uint32_t m) {
  return (x & m) | (y & ~m);
}

/* ---- Overloading --------------------------------------------------------------------------------
 * Each intrinsic picks its per-type function with _Generic on its first operand. The operand is
 * bound once with __auto_type first: naming it twice in the expansion would double the text of
 * nested calls at every level. */

#define __TESSERA_NUMERIC_CASES(f)                                                     \
  char32: f##_char32, uchar32: f##_uchar32, short16: f##_short16,                      \
  ushort16: f##_ushort16, int8: f##_int8, uint8: f##_uint8, float8: f##_float8         \
  __TESSERA_IF_HALF(, half16: f##_half16)
#define __TESSERA_INTEGER_CASES(f)                                                     \
  char32: f##_char32, uchar32: f##_uchar32, short16: f##_short16,                      \
  ushort16: f##_ushort16, int8: f##_int8, uint8: f##_uint8

#define __TESSERA_CALL(cases, x, ...)                       \
  ({                                                        \
    __auto_type __tessera_x = (x);                          \
    _Generic(__tessera_x, cases)(__tessera_x, __VA_ARGS__); \
  })

#define __TESSERA_ALL(f) __TESSERA_NUMERIC_CASES(f), bfloat16x16: f##_bfloat16x16
#define __TESSERA_INT_MASK(f) __TESSERA_INTEGER_CASES(f), uint32_t: f##_mask
#define __TESSERA_ALL_MASK(f) __TESSERA_ALL(f), uint32_t: f##_mask

#define __TESSERA_POINTER_CASES(f)                                                       \
  char32*: f##_char32, uchar32*: f##_uchar32, short16*: f##_short16,                     \
  ushort16*: f##_ushort16, int8*: f##_int8, uint8*: f##_uint8, float8*: f##_float8,     \
  bfloat16x16*: f##_bfloat16x16 __TESSERA_IF_HALF(, half16*: f##_half16)

#define __vload(p, mask) _Generic((p), __TESSERA_POINTER_CASES(__vload))((p), (mask))
#define __vload_stride(p, stride, mask) \
  _Generic((p), __TESSERA_POINTER_CASES(__vload_stride))((p), (stride), (mask))
#define __vstore(v, p, mask) __TESSERA_CALL(__TESSERA_ALL(__vstore), v, (p), (mask))
#define __vstore_stride(v, p, stride, mask) \
  __TESSERA_CALL(__TESSERA_ALL(__vstore_stride), v, (p), (stride), (mask))

/* Broadcast chooses the vector from the scalar's C type: `__vbcast((short)x)` is a short16. */
#define __vbcast(x)                                                                    \
  _Generic((x), char: __vbcast_char32, signed char: __vbcast_char32,                   \
           uchar: __vbcast_uchar32, short: __vbcast_short16, ushort: __vbcast_ushort16, \
           int: __vbcast_int8, uint: __vbcast_uint8, float: __vbcast_float8,          \
           bfloat16: __vbcast_bfloat16x16 __TESSERA_IF_HALF(, half: __vbcast_half16))(x)

#define __vadd(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vadd), a, (b), (mask))
#define __vsub(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vsub), a, (b), (mask))
#define __vmul(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vmul), a, (b), (mask))
#define __vdiv(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vdiv), a, (b), (mask))
#define __vmod(a, b, mask) __TESSERA_CALL(__TESSERA_NUMERIC_CASES(__vmod), a, (b), (mask))
#define __vmin(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vmin), a, (b), (mask))
#define __vmax(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vmax), a, (b), (mask))
#define __vceq(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vceq), a, (b), (mask))
#define __vcneq(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vcneq), a, (b), (mask))
#define __vclt(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vclt), a, (b), (mask))
#define __vcle(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vcle), a, (b), (mask))
#define __vcgt(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vcgt), a, (b), (mask))
#define __vcge(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vcge), a, (b), (mask))
#define __vsel(x, y, mask) __TESSERA_CALL(__TESSERA_ALL_MASK(__vsel), x, (y), (mask))
#define __vand(a, b, mask) __TESSERA_CALL(__TESSERA_INT_MASK(__vand), a, (b), (mask))
#define __vor(a, b, mask) __TESSERA_CALL(__TESSERA_INT_MASK(__vor), a, (b), (mask))
#define __vxor(a, b, mask) __TESSERA_CALL(__TESSERA_INT_MASK(__vxor), a, (b), (mask))
#define __vinv(a, mask) __TESSERA_CALL(__TESSERA_INT_MASK(__vinv), a, (mask))
#define __vsl(a, s, mask) __TESSERA_CALL(__TESSERA_INTEGER_CASES(__vsl), a, (s), (mask))
#define __vsr(a, s, mask) __TESSERA_CALL(__TESSERA_INTEGER_CASES(__vsr), a, (s), (mask))

/* ---- Scalar helpers -----------------------------------------------------------------------------
 * Chosen by the type of a + b, i.e. after C's usual conversions, so char and short operands
 * use the int versions; the result converts back exactly where it is stored. */

#define __TESSERA_SCALAR_OPS(T, name)                                                  \
  static inline T __tessera_min_##name(T a, T b) { return a < b ? a : b; }             \
  static inline T __tessera_max_##name(T a, T b) { return a > b ? a : b; }
#define __TESSERA_INT_FLOOR_OPS(T, name)                                               \
  static inline T __tessera_floordiv_##name(T a, T b) {                                \
    T q = a / b;                                                                       \
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;                           \
  }                                                                                    \
  static inline T __tessera_floormod_##name(T a, T b) {                                \
    T r = a % b;                                                                       \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                               \
  }
#define __TESSERA_UINT_FLOOR_OPS(T, name)                                              \
  static inline T __tessera_floordiv_##name(T a, T b) { return a / b; }                \
  static inline T __tessera_floormod_##name(T a, T b) { return a % b; }
#define __TESSERA_FLOAT_FLOOR_OPS(T, name)                                             \
  static inline T __tessera_floordiv_##name(T a, T b) { return (T)floor((double)a / (double)b); } \
  static inline T __tessera_floormod_##name(T a, T b) {                                \
    return (T)((double)a - floor((double)a / (double)b) * (double)b);                  \
  }

__TESSERA_SCALAR_OPS(int, int)
__TESSERA_SCALAR_OPS(uint, uint)
__TESSERA_SCALAR_OPS(long, long)
__TESSERA_SCALAR_OPS(ulong, ulong)
__TESSERA_IF_HALF(__TESSERA_SCALAR_OPS(half, half))
__TESSERA_SCALAR_OPS(float, float)
__TESSERA_SCALAR_OPS(double, double)
__TESSERA_INT_FLOOR_OPS(int, int)
__TESSERA_INT_FLOOR_OPS(long, long)
__TESSERA_UINT_FLOOR_OPS(uint, uint)
__TESSERA_UINT_FLOOR_OPS(ulong, ulong)
__TESSERA_IF_HALF(__TESSERA_FLOAT_FLOOR_OPS(half, half))
__TESSERA_FLOAT_FLOOR_OPS(float, float)
__TESSERA_FLOAT_FLOOR_OPS(double, double)

#define __TESSERA_SCALAR_CALL(f, a, b)                                                 \
  ({                                                                                  \
    __auto_type __tessera_a = (a);                                                    \
    __auto_type __tessera_b = (b);                                                    \
    _Generic(__tessera_a + __tessera_b, int: f##_int, uint: f##_uint, long: f##_long, \
             ulong: f##_ulong, float: f##_float, double: f##_double                   \
             __TESSERA_IF_HALF(, half: f##_half))(__tessera_a, __tessera_b);          \
  })

#define min(a, b) __TESSERA_SCALAR_CALL(__tessera_min, a, b)
#define max(a, b) __TESSERA_SCALAR_CALL(__tessera_max, a, b)
#define __floordiv(a, b) __TESSERA_SCALAR_CALL(__tessera_floordiv, a, b)
#define __floormod(a, b) __TESSERA_SCALAR_CALL(__tessera_floormod, a, b)

/* ---- TECs ---------------------------------------------------------------------------------------
 * A launch runs the kernel on TESSERA_NUM_TECS threads: the caller is TEC 0 and a pool of
 * TESSERA_NUM_TECS - 1 worker threads, started on the first launch and kept for the life of the
 * library, are the others. Workers park between launches (a short spin, then a futex wait) and a
 * destructor stops and joins them before the library is unmapped. The barrier counts only TECs
 * that are still running, because `return` in a kernel ends one TEC and must not leave the others
 * waiting at the kernel's final barrier. */

#define TESSERA_NUM_TECS 4
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2

#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* A word that threads wait on until it changes. `sleepers` lets a waker skip the system call
 * when nobody sleeps; both sides use sequentially consistent accesses, so either the waker sees
 * the sleeper or the sleeper sees the new value. */
typedef struct {
  _Atomic unsigned value;
  _Atomic int sleepers;
} __tessera_word;

/* Returns once w->value != seen. The next launch or barrier opening is usually close, so the
 * waiter first yields its CPU a few hundred times (spinning on `pause` instead starves the very
 * threads it waits for when the TECs outnumber the free cores), then sleeps in the kernel. */
static inline void __tessera_wait_change(__tessera_word* w, unsigned seen) {
  for (int i = 0; i < 300; ++i) {
    if (atomic_load(&w->value) != seen) return;
    sched_yield();
  }
  atomic_fetch_add(&w->sleepers, 1);
  while (atomic_load(&w->value) == seen) {
#if defined(__linux__)
    syscall(SYS_futex, (unsigned*)&w->value, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
#else
    sched_yield();
#endif
  }
  atomic_fetch_sub(&w->sleepers, 1);
}

/* Changes the word and wakes every waiter. */
static inline void __tessera_bump(__tessera_word* w) {
  atomic_fetch_add(&w->value, 1);
#if defined(__linux__)
  if (atomic_load(&w->sleepers) > 0) {
    syscall(SYS_futex, (unsigned*)&w->value, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  }
#endif
}

/* The TEC pool of this library (each compiled kernel has its own copy of this header). */
static struct {
  pthread_mutex_t launch_mu; /* one launch at a time: shared (__local) arrays are static */
  int started;
  pthread_t workers[TESSERA_NUM_TECS - 1];
  __tessera_word launch;     /* bumped to start a launch (or to stop the workers) */
  __tessera_word finished;   /* bumped by each worker when it is done with a launch */
  __tessera_word generation; /* bumped when a barrier opens */
  _Atomic int stop;
  unsigned seen_at_start; /* the launch word when the workers were created */
  void (*fn)(void*);
  void* data;
  pthread_mutex_t barrier_mu;
  int running; /* TECs that have not returned */
  int arrived; /* TECs waiting at the current barrier */
} __tessera_pool = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0, 0}, {0, 0}, {0, 0}, 0, 0, NULL, NULL,
                    PTHREAD_MUTEX_INITIALIZER, 0, 0};

static __thread int __tessera_tec_id;
static __thread int __tessera_in_launch;

static inline int get_local_id(int dim) {
  (void)dim;
  return __tessera_tec_id;
}

static inline int get_local_size(int dim) {
  (void)dim;
  return TESSERA_NUM_TECS;
}

/* Called with barrier_mu held. */
static inline void __tessera_open_barrier(void) {
  __tessera_pool.arrived = 0;
  __tessera_bump(&__tessera_pool.generation);
}

/* The mutex orders every TEC's earlier writes before the barrier opens; the sequentially
 * consistent generation word orders the opening before the others' later reads. */
static inline void barrier(int flags) {
  (void)flags;
  if (!__tessera_in_launch) return; /* called outside a launch: a single TEC */
  pthread_mutex_lock(&__tessera_pool.barrier_mu);
  unsigned generation = atomic_load(&__tessera_pool.generation.value);
  if (++__tessera_pool.arrived >= __tessera_pool.running) {
    __tessera_open_barrier();
    pthread_mutex_unlock(&__tessera_pool.barrier_mu);
    return;
  }
  pthread_mutex_unlock(&__tessera_pool.barrier_mu);
  __tessera_wait_change(&__tessera_pool.generation, generation);
}

static inline void __tessera_tec_retire(void) {
  pthread_mutex_lock(&__tessera_pool.barrier_mu);
  __tessera_pool.running--;
  if (__tessera_pool.arrived > 0 && __tessera_pool.arrived >= __tessera_pool.running) {
    __tessera_open_barrier();
  }
  pthread_mutex_unlock(&__tessera_pool.barrier_mu);
}

static inline void* __tessera_worker(void* arg) {
  __tessera_tec_id = (int)(intptr_t)arg;
  unsigned seen = __tessera_pool.seen_at_start;
  for (;;) {
    __tessera_wait_change(&__tessera_pool.launch, seen);
    seen = atomic_load(&__tessera_pool.launch.value);
    if (atomic_load(&__tessera_pool.stop)) break;
    __tessera_in_launch = 1;
    __tessera_pool.fn(__tessera_pool.data);
    __tessera_in_launch = 0;
    __tessera_tec_retire();
    __tessera_bump(&__tessera_pool.finished);
  }
  return NULL;
}

static inline void __tessera_set_error(char* err, int err_len, const char* fmt, ...) {
  if (err == NULL || err_len <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, (size_t)err_len, fmt, ap);
  va_end(ap);
}

/* Wakes the first `count` workers with the stop flag set and joins them. */
static void __tessera_stop_workers(int count) {
  atomic_store(&__tessera_pool.stop, 1);
  __tessera_bump(&__tessera_pool.launch);
  for (int i = 0; i < count; ++i) pthread_join(__tessera_pool.workers[i], NULL);
  atomic_store(&__tessera_pool.stop, 0);
}

/* Runs before dlclose unmaps the library (and at process exit): no worker may still be parked
 * in this library's code. */
__attribute__((destructor)) static void __tessera_pool_shutdown(void) {
  if (__tessera_pool.started) __tessera_stop_workers(TESSERA_NUM_TECS - 1);
  __tessera_pool.started = 0;
}

/* A forked child has none of the parent's workers: start new ones on its first launch. */
static void __tessera_pool_forget(void) {
  __tessera_pool.started = 0;
  pthread_mutex_init(&__tessera_pool.launch_mu, NULL);
  pthread_mutex_init(&__tessera_pool.barrier_mu, NULL);
}

/* Called with launch_mu held. Returns 0, or the pthread_create error after stopping the workers
 * that did start. */
static int __tessera_pool_start(int* failed) {
  static int at_fork_registered;
  if (!at_fork_registered) {
    pthread_atfork(NULL, NULL, __tessera_pool_forget);
    at_fork_registered = 1;
  }
  __tessera_pool.seen_at_start = atomic_load(&__tessera_pool.launch.value);
  for (int i = 0; i < TESSERA_NUM_TECS - 1; ++i) {
    int rc = pthread_create(&__tessera_pool.workers[i], NULL, __tessera_worker,
                            (void*)(intptr_t)(i + 1));
    if (rc != 0) {
      __tessera_stop_workers(i);
      *failed = i + 1;
      return rc;
    }
  }
  __tessera_pool.started = 1;
  return 0;
}

/* Runs fn(data) on every TEC and returns 0, or returns nonzero with a message in err when the
 * TEC threads cannot be started; then no TEC has run. */
static inline int __tessera_run_tecs(void (*fn)(void*), void* data, char* err, int err_len) {
  pthread_mutex_lock(&__tessera_pool.launch_mu);
  if (!__tessera_pool.started) {
    int failed = 0;
    int rc = __tessera_pool_start(&failed);
    if (rc != 0) {
      pthread_mutex_unlock(&__tessera_pool.launch_mu);
      __tessera_set_error(err, err_len, "cannot start TEC thread %d: %s", failed, strerror(rc));
      return 1;
    }
  }
  __tessera_pool.fn = fn;
  __tessera_pool.data = data;
  __tessera_pool.running = TESSERA_NUM_TECS;
  __tessera_pool.arrived = 0;
  unsigned finished = atomic_load(&__tessera_pool.finished.value);
  __tessera_bump(&__tessera_pool.launch);

  int saved_id = __tessera_tec_id, saved_in_launch = __tessera_in_launch;
  __tessera_tec_id = 0;
  __tessera_in_launch = 1;
  fn(data);
  __tessera_tec_retire();
  __tessera_tec_id = saved_id;
  __tessera_in_launch = saved_in_launch;

  for (;;) {
    unsigned now = atomic_load(&__tessera_pool.finished.value);
    if (now - finished >= TESSERA_NUM_TECS - 1) break;
    __tessera_wait_change(&__tessera_pool.finished, now);
  }
  pthread_mutex_unlock(&__tessera_pool.launch_mu);
  return 0;
}

#endif /* TESSERA_DSL_H_ */
