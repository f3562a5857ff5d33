/* tessera/dsl.h: the host meaning of the vector DSL's OpenCL-C-style source (C11 + GNU
 * vector extensions). Generated kernels include it and run on the host CPU: address spaces are
 * plain memory, 256-bit vectors are compiler vector types, masks are 32-bit predicates, every
 * __v* intrinsic is portable C with the semantics of the language reference, and the 4 TECs of a
 * core are 4 threads. Everything here is private to the library of one kernel: each compiled
 * kernel owns its copy (see "One library, two units" below). */
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

/* ---- One library, two units --------------------------------------------------------------------
 * The launch machinery (the TEC pool, the argument checks of the packed entry point, the error
 * text) is the same code for every kernel. A file that includes this header on its own defines it
 * all as static, so that it compiles and links alone. tessera's build instead compiles it once
 * per compiler and flags into an object kept in its cache (the support unit: this header and
 * tessera/dsl/packed.h with TESSERA_DSL_SUPPORT_UNIT defined), compiles each kernel with
 * TESSERA_DSL_SPLIT defined, where this machinery is only declared, and links the two into the
 * kernel's library. The symbols are hidden, so that every library still has its own pool and
 * its own error text. */
#if defined(TESSERA_DSL_SUPPORT_UNIT) && defined(TESSERA_DSL_SPLIT)
#error "tessera/dsl.h: define TESSERA_DSL_SUPPORT_UNIT or TESSERA_DSL_SPLIT, not both"
#endif
#if defined(TESSERA_DSL_SUPPORT_UNIT)
#define __TESSERA_SHARED __attribute__((visibility("hidden")))
#define __TESSERA_SHARED_DATA __attribute__((visibility("hidden")))
#define __TESSERA_SHARED_INIT(...) = __VA_ARGS__
#define __TESSERA_SHARED_BODIES 1
#elif defined(TESSERA_DSL_SPLIT)
#define __TESSERA_SHARED __attribute__((visibility("hidden")))
#define __TESSERA_SHARED_DATA extern __attribute__((visibility("hidden")))
#define __TESSERA_SHARED_INIT(...)
#define __TESSERA_SHARED_BODIES 0
#else
#define __TESSERA_SHARED static
#define __TESSERA_SHARED_DATA static
#define __TESSERA_SHARED_INIT(...) = __VA_ARGS__
#define __TESSERA_SHARED_BODIES 1
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
  static inline V __vbclr_##V(V a, V b) { return a & ~b; }                                 \
  static inline V __vbset_##V(V a, V b) { return a | ~b; }                                 \
  static inline V __vnand_##V(V a, V b) { return ~(a & b); }                               \
  static inline V __vnor_##V(V a, V b) { return ~(a | b); }                                \
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
__TESSERA_BF16_BINARY(__vmod, fmodf(x, y))
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
/* Combined logic (every bit of a mask belongs to a lane, so ~ needs no mask). */
static inline uint32_t __vbclr_mask(uint32_t a, uint32_t b) { return a & ~b; }
static inline uint32_t __vbset_mask(uint32_t a, uint32_t b) { return a | ~b; }
static inline uint32_t __vnand_mask(uint32_t a, uint32_t b) { return ~(a & b); }
static inline uint32_t __vnor_mask(uint32_t a, uint32_t b) { return ~(a | b); }
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
#define __vmod(a, b, mask) __TESSERA_CALL(__TESSERA_ALL(__vmod), a, (b), (mask))
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
#define __vbclr(a, b) __TESSERA_CALL(__TESSERA_INT_MASK(__vbclr), a, (b))
#define __vbset(a, b) __TESSERA_CALL(__TESSERA_INT_MASK(__vbset), a, (b))
#define __vnand(a, b) __TESSERA_CALL(__TESSERA_INT_MASK(__vnand), a, (b))
#define __vnor(a, b) __TESSERA_CALL(__TESSERA_INT_MASK(__vnor), a, (b))
/* The mask of a shift may be left out (every lane): __vasr(x, s) or __vasr(x, s, mask). */
#define __TESSERA_SHIFT_ARGS(s, mask, ...) (s), (mask)
#define __vlsl(a, ...)                               \
  __TESSERA_CALL(__TESSERA_INTEGER_CASES(__vsl), a, \
                 __TESSERA_SHIFT_ARGS(__VA_ARGS__, 0xFFFFFFFFu, ~))
#define __vasr(a, ...)                               \
  __TESSERA_CALL(__TESSERA_INTEGER_CASES(__vsr), a, \
                 __TESSERA_SHIFT_ARGS(__VA_ARGS__, 0xFFFFFFFFu, ~))

/* ---- Scalar helpers -----------------------------------------------------------------------------
 * Chosen by the type of a + b, i.e. after C's usual conversions, so char and short operands
 * use the int versions; the result converts back exactly where it is stored. */

/* Scalar integer / and % whose divisor is known only at run time, and the floor forms: the
 * host's divide instruction traps on a zero divisor and on INT_MIN / -1, which would end the
 * whole process. A quotient by zero fails the call with "integer division by zero" (PySim raises
 * there) and reads 0; a remainder by zero is 0 (as PySim and a vector lane give); the most
 * negative value divided by -1 wraps, as DSL integers do. */
static inline void __tessera_divided_by_zero(void);
#define __TESSERA_INT_DIV_OPS(T, UT, name)                                              \
  static inline T __tessera_div_##name(T a, T b) {                                     \
    if (b == 0) return __tessera_divided_by_zero(), (T)0;                              \
    if ((T)-1 < 0 && b == (T)-1) return (T)((UT)0 - (UT)a);                            \
    return a / b;                                                                      \
  }                                                                                    \
  static inline T __tessera_mod_##name(T a, T b) {                                     \
    if (b == 0) return (T)0;                                                           \
    if ((T)-1 < 0 && b == (T)-1) return (T)0;                                          \
    return a % b;                                                                      \
  }
__TESSERA_INT_DIV_OPS(int, uint, int)
__TESSERA_INT_DIV_OPS(uint, uint, uint)
__TESSERA_INT_DIV_OPS(long, ulong, long)
__TESSERA_INT_DIV_OPS(ulong, ulong, ulong)
#undef __TESSERA_INT_DIV_OPS

#define __TESSERA_SCALAR_OPS(T, name)                                                  \
  static inline T __tessera_min_##name(T a, T b) { return a < b ? a : b; }             \
  static inline T __tessera_max_##name(T a, T b) { return a > b ? a : b; }
#define __TESSERA_INT_FLOOR_OPS(T, name)                                               \
  static inline T __tessera_floordiv_##name(T a, T b) {                                \
    T q = __tessera_div_##name(a, b);                                                  \
    return (b != 0 && __tessera_mod_##name(a, b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; \
  }                                                                                    \
  static inline T __tessera_floormod_##name(T a, T b) {                                \
    T r = __tessera_mod_##name(a, b);                                                  \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                               \
  }
#define __TESSERA_UINT_FLOOR_OPS(T, name)                                              \
  static inline T __tessera_floordiv_##name(T a, T b) { return __tessera_div_##name(a, b); } \
  static inline T __tessera_floormod_##name(T a, T b) { return __tessera_mod_##name(a, b); }
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
#define __TESSERA_INT_CALL(f, a, b)                                                    \
  ({                                                                                  \
    __auto_type __tessera_a = (a);                                                    \
    __auto_type __tessera_b = (b);                                                    \
    _Generic(__tessera_a + __tessera_b, int: f##_int, uint: f##_uint, long: f##_long, \
             ulong: f##_ulong)(__tessera_a, __tessera_b);                             \
  })
#define __tessera_div(a, b) __TESSERA_INT_CALL(__tessera_div, a, b)
#define __tessera_mod(a, b) __TESSERA_INT_CALL(__tessera_mod, a, b)

/* ---- The rest, by concept ------------------------------------------------------------------- */

#include "dsl/lanes.h"
#include "dsl/convert.h"
#include "dsl/tec.h"
#include "dsl/dma.h"
#include "dsl/intrin.h"
#include "dsl/printf.h"

/* S.printf prints as the NPU does (tessera/dsl/printf.h). */
#define printf __tessera_npu_printf

/* The first zero divisor of a call fails it (see __TESSERA_INT_DIV_OPS above). */
static inline void __tessera_divided_by_zero(void) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&__tessera_call_failed, &expected, 1)) {
    snprintf(__tessera_call_error, sizeof __tessera_call_error,
             "integer division by zero: a scalar /, // or S.ceildiv of the kernel had a zero "
             "divisor");
  }
}

/* ---- Addresses as 32-bit integers ---------------------------------------------------------------
 * S.reinterpret(ptr, "uint32") gives an address as the NPU has them, 32 bits; S.reinterpret(addr,
 * "type *") gives the pointer back. The host's addresses have 64 bits: the integer is the low 32
 * bits of the address, and the TEC remembers the pointers it converted (the last 16). Converting
 * back takes the address with those low bits nearest to a remembered pointer: the original one
 * whenever the integer arithmetic in between moved it by less than 2 GiB. An integer that no
 * pointer of this TEC was converted to is no address: the call fails. */
static __thread uintptr_t __tessera_addr_refs[16];
static __thread int __tessera_addr_count;

static inline uint __tessera_ptr_to_u32(const void* p) {
  uintptr_t a = (uintptr_t)p;
  int n = __tessera_addr_count < 16 ? __tessera_addr_count : 16;
  int known = 0;
  for (int i = 0; i < n; ++i) known |= __tessera_addr_refs[i] == a;
  if (!known) __tessera_addr_refs[__tessera_addr_count++ % 16] = a;
  if (__tessera_addr_count >= 32) __tessera_addr_count -= 16;
  return (uint)a;
}

static inline void* __tessera_u32_to_ptr(uint v) {
  int n = __tessera_addr_count < 16 ? __tessera_addr_count : 16;
  uintptr_t best = 0, best_distance = UINTPTR_MAX;
  for (int i = 0; i < n; ++i) {
    uintptr_t r = __tessera_addr_refs[i];
    uintptr_t c = (r & ~(uintptr_t)0xFFFFFFFFu) | v;
    uintptr_t options[3] = {c, c - ((uintptr_t)1 << 32), c + ((uintptr_t)1 << 32)};
    for (int k = 0; k < 3; ++k) {
      uintptr_t d = options[k] > r ? options[k] - r : r - options[k];
      if (d < best_distance) best = options[k], best_distance = d;
    }
  }
  if (n == 0) {
    static char nowhere[256];
    int expected = 0;
    if (atomic_compare_exchange_strong(&__tessera_call_failed, &expected, 1)) {
      snprintf(__tessera_call_error, sizeof __tessera_call_error,
               "S.reinterpret of the integer 0x%x as a pointer: no pointer of this TEC was turned "
               "into an integer (S.reinterpret(ptr, \"uint32\")) before, so it is no address",
               v);
    }
    return nowhere; /* the call fails; its accesses stay harmless until it returns */
  }
  return (void*)best;
}

#endif /* TESSERA_DSL_H_ */
