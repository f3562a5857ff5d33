/* tessera/dsl/intrin.h: the intrinsic library of part 2 (saturating arithmetic, bit counting,
 * rounding shifts, math, reductions, pairwise and widening ops, permutations, gathers, matrix
 * products). Lane loops over fixed-size vector types: the host compiler vectorizes the simple
 * ones. Included by tessera/dsl.h. */
#ifndef TESSERA_DSL_INTRIN_H_
#define TESSERA_DSL_INTRIN_H_

/* ---- Integer lane-wise ops -------------------------------------------------------------------
 * V: vector, E: element, N: lanes, U: unsigned vector, UE: unsigned element, MIN/MAX: range. */
#define __TESSERA_INTRIN_INT(V, E, N, U, UE, MIN, MAX)                                        \
  static inline V __vadds_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      long long s = (long long)a[i] + (long long)b[i];                                        \
      r[i] = (E)(s < (long long)(MIN) ? (MIN) : s > (long long)(MAX) ? (MAX) : s);            \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vsubs_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      long long s = (long long)a[i] - (long long)b[i];                                        \
      r[i] = (E)(s < (long long)(MIN) ? (MIN) : s > (long long)(MAX) ? (MAX) : s);            \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vasrr_##V(V a, V s) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned long long c = (UE)s[i];                                                        \
      long long x = a[i];                                                                     \
      if (c == 0) { r[i] = a[i]; continue; }                                                  \
      if (c > 8 * sizeof(E)) c = 8 * sizeof(E) + 1;                                           \
      long long q = x >> c, rem = x - (q << c), half = 1ll << (c - 1);                        \
      if (rem > half || (rem == half && (q & 1))) q += 1;                                     \
      r[i] = (E)q;                                                                            \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vlsls_##V(V a, V s) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned long long c = (UE)s[i];                                                        \
      long long x = a[i];                                                                     \
      if (x == 0) { r[i] = 0; continue; }                                                     \
      if (c >= 8 * sizeof(E)) { r[i] = x < 0 ? (MIN) : (MAX); continue; }                     \
      long long y = x * (1ll << c);                                                           \
      r[i] = (E)(y < (long long)(MIN) ? (MIN) : y > (long long)(MAX) ? (MAX) : y);            \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vabs_##V(V a, int sat) {                                                  \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      long long x = a[i];                                                                     \
      x = x < 0 ? -x : x;                                                                     \
      r[i] = (E)(sat && x > (long long)(MAX) ? (MAX) : x);                                    \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vror_##V(V a, V s) {                                                      \
    const unsigned bits = 8 * sizeof(E);                                                      \
    U r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned c = (unsigned)((UE)s[i] % bits);                                               \
      UE x = (UE)a[i];                                                                        \
      r[i] = c == 0 ? x : (UE)((x >> c) | (UE)(x << (bits - c)));                             \
    }                                                                                         \
    return (V)r;                                                                              \
  }                                                                                           \
  static inline V __vclz_##V(V a) {                                                           \
    const int bits = 8 * sizeof(E);                                                           \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned x = (UE)a[i];                                                                  \
      r[i] = (E)(x == 0 ? bits : __builtin_clz(x) - (32 - bits));                             \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vcls_##V(V a) {                                                           \
    const int bits = 8 * sizeof(E);                                                           \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned x = (UE)a[i];                                                                  \
      if ((x >> (bits - 1)) & 1u) x = (UE)~x;                                                 \
      int lz = x == 0 ? bits : __builtin_clz(x) - (32 - bits);                                \
      r[i] = (E)(lz - 1);                                                                     \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vbrevs_##V(V a) {                                                         \
    const int bits = 8 * sizeof(E);                                                           \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned x = (UE)a[i], y = 0;                                                           \
      for (int b = 0; b < bits; ++b) y |= ((x >> b) & 1u) << (bits - 1 - b);                  \
      r[i] = (E)y;                                                                            \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vpcnt_##V(V a) {                                                          \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) r[i] = (E)__builtin_popcount((UE)a[i]);                       \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vaddh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      long long x = (long long)a[2 * i] + a[2 * i + 1], y = (long long)b[2 * i] + b[2 * i + 1]; \
      r[i] = (E)(x < (long long)(MIN) ? (MIN) : x > (long long)(MAX) ? (MAX) : x);            \
      r[i + N / 2] = (E)(y < (long long)(MIN) ? (MIN) : y > (long long)(MAX) ? (MAX) : y);     \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vsubh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      long long x = (long long)a[2 * i] - a[2 * i + 1], y = (long long)b[2 * i] - b[2 * i + 1]; \
      r[i] = (E)(x < (long long)(MIN) ? (MIN) : x > (long long)(MAX) ? (MAX) : x);            \
      r[i + N / 2] = (E)(y < (long long)(MIN) ? (MIN) : y > (long long)(MAX) ? (MAX) : y);     \
    }                                                                                         \
    return r;                                                                                 \
  }

__TESSERA_INTRIN_INT(char32, char, 32, uchar32, uchar, -128, 127)
__TESSERA_INTRIN_INT(uchar32, uchar, 32, uchar32, uchar, 0, 255)
__TESSERA_INTRIN_INT(short16, short, 16, ushort16, ushort, -32768, 32767)
__TESSERA_INTRIN_INT(ushort16, ushort, 16, ushort16, ushort, 0, 65535)
__TESSERA_INTRIN_INT(int8, int, 8, uint8, uint, (-2147483647ll - 1), 2147483647ll)
__TESSERA_INTRIN_INT(uint8, uint, 8, uint8, uint, 0, 4294967295ll)

/* S.vreplic's lane chosen at run time: `i` when it is a lane of an n-lane vector. Another index
 * fails the call (the first failure of a call is the one reported), as PySim refuses it, and
 * reads lane 0 meanwhile, so that nothing outside the vector is read. */
static inline int __tessera_replic_lane(int i, int n) {
  if (i >= 0 && i < n) return i;
  int expected = 0;
  if (atomic_compare_exchange_strong(&__tessera_call_failed, &expected, 1)) {
    snprintf(__tessera_call_error, sizeof __tessera_call_error,
             "S.vreplic: the lane index %d is not a lane of the %d-lane vector (expected 0 to %d)",
             i, n, n - 1);
  }
  return 0;
}

/* ---- Lane-wise ops of every type (float lanes through float) --------------------------------
 * GET/SET read and write a lane as float or element. */
#define __TESSERA_INTRIN_ANY(V, E, N, IDX)                                                    \
  static inline V __vreplic_##V(V x, int index) {                                             \
    V r = x;                                                                                  \
    int k = __tessera_replic_lane(index, N);                                                  \
    for (int i = 0; i < N; ++i) __TESSERA_SET_##V(r, i, __TESSERA_GET_##V(x, k));             \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vperm_##V(V x, V y, IDX idx) {                                            \
    V r = x;                                                                                  \
    for (int i = 0; i < N; ++i) {                                                             \
      unsigned k = (unsigned)idx[i];                                                          \
      if (k < N) __TESSERA_SET_##V(r, i, __TESSERA_GET_##V(x, k));                            \
      else if (k < 2 * N) __TESSERA_SET_##V(r, i, __TESSERA_GET_##V(y, k - N));               \
      else __TESSERA_SET_##V(r, i, __tessera_zero_##V);                                       \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vcompc_##V(V x, V y, uint32_t m) {                                        \
    V r = x;                                                                                  \
    int k = 0;                                                                                \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N)) __TESSERA_SET_##V(r, k++, __TESSERA_GET_##V(x, i));     \
    for (int j = 0; k < N; ++j, ++k) __TESSERA_SET_##V(r, k, __TESSERA_GET_##V(y, j));        \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vcompt_##V(V x, uint32_t m) {                                             \
    V z = x;                                                                                  \
    for (int i = 0; i < N; ++i) __TESSERA_SET_##V(z, i, __tessera_zero_##V);                  \
    return __vcompc_##V(x, z, m);                                                             \
  }

#define __tessera_zero_char32 ((char)0)
#define __tessera_zero_uchar32 ((uchar)0)
#define __tessera_zero_short16 ((short)0)
#define __tessera_zero_ushort16 ((ushort)0)
#define __tessera_zero_int8 0
#define __tessera_zero_uint8 0u
#define __tessera_zero_half16 ((half)0)
#define __tessera_zero_float8 0.0f
#define __tessera_zero_bfloat16x16 ((bfloat16){0})

__TESSERA_INTRIN_ANY(char32, char, 32, uchar32)
__TESSERA_INTRIN_ANY(uchar32, uchar, 32, uchar32)
__TESSERA_INTRIN_ANY(short16, short, 16, ushort16)
__TESSERA_INTRIN_ANY(ushort16, ushort, 16, ushort16)
__TESSERA_INTRIN_ANY(int8, int, 8, uint8)
__TESSERA_INTRIN_ANY(uint8, uint, 8, uint8)
__TESSERA_IF_HALF(__TESSERA_INTRIN_ANY(half16, half, 16, ushort16))
__TESSERA_INTRIN_ANY(float8, float, 8, uint8)
__TESSERA_INTRIN_ANY(bfloat16x16, bfloat16, 16, ushort16)

/* ---- Float lane-wise ops: math and classification ------------------------------------------ */
#define __TESSERA_FLOAT_TO(V, v, i) ((float)(v)[i])
#define __TESSERA_FLOAT_FROM(V, E, f) ((E)(f))

static inline float __tessera_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float __tessera_exp2f(float x) { return exp2f(x); }

#define __TESSERA_MATH1(V, E, N, name, fn)                                                    \
  static inline V name##_##V(V a) {                                                           \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) r[i] = (E)fn((float)a[i]);                                    \
    return r;                                                                                 \
  }
#define __TESSERA_INTRIN_FLOAT(V, E, N)                                                       \
  __TESSERA_MATH1(V, E, N, __vexp, expf)                                                      \
  __TESSERA_MATH1(V, E, N, __vlog, logf)                                                      \
  __TESSERA_MATH1(V, E, N, __vtanh, tanhf)                                                    \
  __TESSERA_MATH1(V, E, N, __vsin, sinf)                                                      \
  __TESSERA_MATH1(V, E, N, __vcos, cosf)                                                      \
  __TESSERA_MATH1(V, E, N, __vrsqrt, __tessera_rsqrtf)                                        \
  __TESSERA_MATH1(V, E, N, __vceil, ceilf)                                                    \
  __TESSERA_MATH1(V, E, N, __verf, erff)                                                      \
  __TESSERA_MATH1(V, E, N, __vexp2, __tessera_exp2f)                                          \
  __TESSERA_MATH1(V, E, N, __vrint, nearbyintf)                                               \
  static inline V __vsqrt_##V(V a) {                                                          \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) r[i] = (E)sqrtf((float)a[i]);                                 \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vpow_##V(V a, V b) {                                                      \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) r[i] = (E)powf((float)a[i], (float)b[i]);                     \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vabs_##V(V a, int sat) {                                                  \
    (void)sat;                                                                                \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i) r[i] = (E)fabsf((float)a[i]);                                 \
    return r;                                                                                 \
  }                                                                                           \
  static inline uint32_t __visnan_##V(V a, uint32_t m) {                                      \
    uint32_t r = 0;                                                                           \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N) && isnan((float)a[i])) r |= __TESSERA_LANE_BITS(i, N);   \
    return r;                                                                                 \
  }                                                                                           \
  static inline uint32_t __visinf_##V(V a, uint32_t m) {                                      \
    uint32_t r = 0;                                                                           \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N) && isinf((float)a[i])) r |= __TESSERA_LANE_BITS(i, N);   \
    return r;                                                                                 \
  }                                                                                           \
  static inline uint32_t __visfinite_##V(V a, uint32_t m) {                                   \
    uint32_t r = 0;                                                                           \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N) && isfinite((float)a[i])) r |= __TESSERA_LANE_BITS(i, N); \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vaddh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      r[i] = a[2 * i] + a[2 * i + 1];                                                         \
      r[i + N / 2] = b[2 * i] + b[2 * i + 1];                                                 \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vsubh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      r[i] = a[2 * i] - a[2 * i + 1];                                                         \
      r[i + N / 2] = b[2 * i] - b[2 * i + 1];                                                 \
    }                                                                                         \
    return r;                                                                                 \
  }

__TESSERA_INTRIN_FLOAT(float8, float, 8)
__TESSERA_IF_HALF(__TESSERA_INTRIN_FLOAT(half16, half, 16))

/* bfloat16x16: through float8 halves. */
static inline float8 __tessera_bf16_half(bfloat16x16 v, int first) {
  float8 r;
  for (int i = 0; i < 8; ++i) r[i] = __tessera_bf16_lane(v, first + i);
  return r;
}
static inline bfloat16x16 __tessera_bf16_join(float8 lo, float8 hi) {
  bfloat16x16 r;
  for (int i = 0; i < 8; ++i) {
    r.bits[i] = __bfloat16_from_float(lo[i]).bits;
    r.bits[i + 8] = __bfloat16_from_float(hi[i]).bits;
  }
  return r;
}
#define __TESSERA_BF16_MATH1(name)                                                            \
  static inline bfloat16x16 name##_bfloat16x16(bfloat16x16 a) {                               \
    return __tessera_bf16_join(name##_float8(__tessera_bf16_half(a, 0)),                      \
                               name##_float8(__tessera_bf16_half(a, 8)));                     \
  }
__TESSERA_BF16_MATH1(__vexp)
__TESSERA_BF16_MATH1(__vlog)
__TESSERA_BF16_MATH1(__vtanh)
__TESSERA_BF16_MATH1(__vsin)
__TESSERA_BF16_MATH1(__vcos)
__TESSERA_BF16_MATH1(__vrsqrt)
__TESSERA_BF16_MATH1(__vsqrt)
__TESSERA_BF16_MATH1(__vceil)
__TESSERA_BF16_MATH1(__verf)
__TESSERA_BF16_MATH1(__vexp2)
__TESSERA_BF16_MATH1(__vrint)
#undef __TESSERA_BF16_MATH1
static inline bfloat16x16 __vpow_bfloat16x16(bfloat16x16 a, bfloat16x16 b) {
  return __tessera_bf16_join(__vpow_float8(__tessera_bf16_half(a, 0), __tessera_bf16_half(b, 0)),
                             __vpow_float8(__tessera_bf16_half(a, 8), __tessera_bf16_half(b, 8)));
}
static inline bfloat16x16 __vabs_bfloat16x16(bfloat16x16 a, int sat) {
  (void)sat;
  bfloat16x16 r = a;
  for (int i = 0; i < 16; ++i) r.bits[i] &= 0x7FFF;
  return r;
}
#define __TESSERA_BF16_CLASS(name, test)                                                      \
  static inline uint32_t name##_bfloat16x16(bfloat16x16 a, uint32_t m) {                      \
    uint32_t r = 0;                                                                           \
    for (int i = 0; i < 16; ++i)                                                              \
      if (__TESSERA_LANE_ON(m, i, 16) && test(__tessera_bf16_lane(a, i)))                     \
        r |= __TESSERA_LANE_BITS(i, 16);                                                      \
    return r;                                                                                 \
  }
__TESSERA_BF16_CLASS(__visnan, isnan)
__TESSERA_BF16_CLASS(__visinf, isinf)
__TESSERA_BF16_CLASS(__visfinite, isfinite)
#undef __TESSERA_BF16_CLASS

/* Pairwise maximum / minimum: pairs of a fill the low half, pairs of b the high half. */
#define __TESSERA_PAIRWISE(V, N)                                                              \
  static inline V __vmaxh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      r[i] = a[2 * i] > a[2 * i + 1] ? a[2 * i] : a[2 * i + 1];                               \
      r[i + N / 2] = b[2 * i] > b[2 * i + 1] ? b[2 * i] : b[2 * i + 1];                       \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vminh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      r[i] = a[2 * i] < a[2 * i + 1] ? a[2 * i] : a[2 * i + 1];                               \
      r[i + N / 2] = b[2 * i] < b[2 * i + 1] ? b[2 * i] : b[2 * i + 1];                       \
    }                                                                                         \
    return r;                                                                                 \
  }
__TESSERA_PAIRWISE(char32, 32)
__TESSERA_PAIRWISE(uchar32, 32)
__TESSERA_PAIRWISE(short16, 16)
__TESSERA_PAIRWISE(ushort16, 16)
__TESSERA_PAIRWISE(int8, 8)
__TESSERA_PAIRWISE(uint8, 8)
__TESSERA_PAIRWISE(float8, 8)
__TESSERA_IF_HALF(__TESSERA_PAIRWISE(half16, 16))
/* bfloat16x16: compared as float (the chosen lane keeps its bits). */
#define __TESSERA_BF16_PAIRWISE(name, better)                                                 \
  static inline bfloat16x16 name##_bfloat16x16(bfloat16x16 a, bfloat16x16 b) {                \
    bfloat16x16 r;                                                                            \
    for (int i = 0; i < 8; ++i) {                                                             \
      float a0 = __tessera_bf16_lane(a, 2 * i), a1 = __tessera_bf16_lane(a, 2 * i + 1);       \
      float b0 = __tessera_bf16_lane(b, 2 * i), b1 = __tessera_bf16_lane(b, 2 * i + 1);       \
      r.bits[i] = a0 better a1 ? a.bits[2 * i] : a.bits[2 * i + 1];                           \
      r.bits[i + 8] = b0 better b1 ? b.bits[2 * i] : b.bits[2 * i + 1];                       \
    }                                                                                         \
    return r;                                                                                 \
  }
__TESSERA_BF16_PAIRWISE(__vmaxh, >)
__TESSERA_BF16_PAIRWISE(__vminh, <)
#undef __TESSERA_BF16_PAIRWISE

/* ---- Reductions: inactive lanes are left out; lanes above 0 (1 with an index) are zero. ---- */
#define __TESSERA_REDUCE(V, E, N, R, RE, LANE)                                                \
  static inline R __vrpadd_##V(V a, uint32_t m) {                                             \
    R r = {0};                                                                                \
    RE s = 0;                                                                                 \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N)) s = (RE)(s + (RE)LANE(a, i));                           \
    r[0] = s;                                                                                 \
    return r;                                                                                 \
  }
#define __TESSERA_PLAIN_LANE(v, i) ((v)[i])
#define __TESSERA_BF16_LANE(v, i) __tessera_bf16_lane(v, i)
/* A signed sum keeps its type (as Compass's S.vrpadd does); it wraps, added in unsigned. */
__TESSERA_REDUCE(char32, char, 32, char32, uchar, __TESSERA_PLAIN_LANE)
__TESSERA_REDUCE(uchar32, uchar, 32, uchar32, uchar, __TESSERA_PLAIN_LANE)
__TESSERA_REDUCE(short16, short, 16, short16, ushort, __TESSERA_PLAIN_LANE)
__TESSERA_REDUCE(ushort16, ushort, 16, ushort16, ushort, __TESSERA_PLAIN_LANE)
__TESSERA_REDUCE(int8, int, 8, int8, uint, __TESSERA_PLAIN_LANE)
__TESSERA_REDUCE(uint8, uint, 8, uint8, uint, __TESSERA_PLAIN_LANE)
/* Float sums (16-bit floats into float32) in the order of the NPU's adder tree, as Compass gives
 * them (its PySim: numpy's pairwise sum): inactive lanes are 0; 16 lanes are first added in
 * pairs i, i + 8; the 8 values t then as ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7)),
 * added to 0. */
typedef float __tessera_floatx16 __attribute__((vector_size(64)));
typedef uint32_t __tessera_uintx16 __attribute__((vector_size(64)));
typedef uint32_t __tessera_uintx8 __attribute__((vector_size(32)));
/* 0.0f + ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7)). */
static inline float __tessera_tree_sum8(float8 t) {
  float8 p = t + __builtin_shufflevector(t, t, 1, 0, 3, 2, 5, 4, 7, 6);  /* lanes 0 2 4 6 */
  float8 q = p + __builtin_shufflevector(p, p, 2, 3, 0, 1, 6, 7, 4, 5);  /* lanes 0 4 */
  return 0.0f + (q[0] + q[4]);
}
static inline float8 __vrpadd_float8(float8 a, uint32_t m) {
  const __tessera_uintx8 shift = {0, 4, 8, 12, 16, 20, 24, 28};
  const __tessera_uintx8 on = -((((__tessera_uintx8){0} + m) >> shift) & 1u);
  float8 r = {0};
  r[0] = __tessera_tree_sum8((float8)((__tessera_uintx8)a & on));
  return r;
}
/* 16-bit floats: lanes i and i + 8 first. */
static inline float8 __tessera_rpadd16(__tessera_floatx16 f, uint32_t m) {
  const __tessera_uintx16 shift = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  const __tessera_uintx16 on = -((((__tessera_uintx16){0} + m) >> shift) & 1u);
  f = (__tessera_floatx16)((__tessera_uintx16)f & on);
  float8 t = __builtin_shufflevector(f, f, 0, 1, 2, 3, 4, 5, 6, 7) +
             __builtin_shufflevector(f, f, 8, 9, 10, 11, 12, 13, 14, 15);
  float8 r = {0};
  r[0] = __tessera_tree_sum8(t);
  return r;
}
__TESSERA_IF_HALF(static inline float8 __vrpadd_half16(half16 a, uint32_t m) {
  return __tessera_rpadd16(__builtin_convertvector(a, __tessera_floatx16), m);
})
static inline float8 __vrpadd_bfloat16x16(bfloat16x16 a, uint32_t m) {
  __tessera_floatx16 f;
  for (int i = 0; i < 16; ++i) f[i] = __tessera_bf16_lane(a, i);
  return __tessera_rpadd16(f, m);
}

#define __TESSERA_REDUCE_EXT(V, N, name, better)                                              \
  static inline V name##_##V(V a, uint32_t m, int with_index) {                               \
    V r = a;                                                                                  \
    int best = -1;                                                                            \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N) && (best < 0 || better)) best = i;                       \
    for (int i = 0; i < N; ++i) __TESSERA_SET_##V(r, i, __tessera_zero_##V);                  \
    if (best >= 0) __TESSERA_SET_##V(r, 0, __TESSERA_GET_##V(a, best));                       \
    if (with_index) __TESSERA_SET_##V(r, 1, __tessera_index_##V(best < 0 ? 0 : best));        \
    return r;                                                                                 \
  }
#define __tessera_index_char32(i) ((char)(i))
#define __tessera_index_uchar32(i) ((uchar)(i))
#define __tessera_index_short16(i) ((short)(i))
#define __tessera_index_ushort16(i) ((ushort)(i))
#define __tessera_index_int8(i) (i)
#define __tessera_index_uint8(i) ((uint)(i))
/* Float vectors hold the index's integer bits (5 is the float whose bits are 5), as Compass. */
static inline half __tessera_half_bits(uint16_t b) {
  half h;
  memcpy(&h, &b, sizeof h);
  return h;
}
static inline float __tessera_float_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static inline bfloat16 __tessera_bfloat16_bits(uint16_t b) {
  bfloat16 r;
  r.bits = b;
  return r;
}
#define __tessera_index_half16(i) (__tessera_half_bits((uint16_t)(i)))
#define __tessera_index_float8(i) (__tessera_float_bits((uint32_t)(i)))
#define __tessera_index_bfloat16x16(i) (__tessera_bfloat16_bits((uint16_t)(i)))
#define __TESSERA_CMP_GT(V) (__tessera_as_float_##V(a, i) > __tessera_as_float_##V(a, best))
#define __TESSERA_CMP_LT(V) (__tessera_as_float_##V(a, i) < __tessera_as_float_##V(a, best))
#define __tessera_as_float_char32(v, i) ((v)[i])
#define __tessera_as_float_uchar32(v, i) ((v)[i])
#define __tessera_as_float_short16(v, i) ((v)[i])
#define __tessera_as_float_ushort16(v, i) ((v)[i])
#define __tessera_as_float_int8(v, i) ((v)[i])
#define __tessera_as_float_uint8(v, i) ((v)[i])
#define __tessera_as_float_half16(v, i) ((v)[i])
#define __tessera_as_float_float8(v, i) ((v)[i])
#define __tessera_as_float_bfloat16x16(v, i) __tessera_bf16_lane(v, i)
#define __TESSERA_REDUCE_BOTH(V, N)                                  \
  __TESSERA_REDUCE_EXT(V, N, __vrpmax, __TESSERA_CMP_GT(V))          \
  __TESSERA_REDUCE_EXT(V, N, __vrpmin, __TESSERA_CMP_LT(V))
__TESSERA_REDUCE_BOTH(char32, 32)
__TESSERA_REDUCE_BOTH(uchar32, 32)
__TESSERA_REDUCE_BOTH(short16, 16)
__TESSERA_REDUCE_BOTH(ushort16, 16)
__TESSERA_REDUCE_BOTH(int8, 8)
__TESSERA_REDUCE_BOTH(uint8, 8)
__TESSERA_IF_HALF(__TESSERA_REDUCE_BOTH(half16, 16))
__TESSERA_REDUCE_BOTH(float8, 8)
__TESSERA_REDUCE_BOTH(bfloat16x16, 16)

/* ---- Widening products and dot products ------------------------------------------------------ */
#define __TESSERA_WIDEN(V, N, W, WE)                                                          \
  static inline W __vmull_##V(V a, V b) {                                                     \
    W r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) r[i] = (WE)((WE)a[i] * (WE)b[i]);                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline W __vmulh_##V(V a, V b) {                                                     \
    W r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) r[i] = (WE)((WE)a[i + N / 2] * (WE)b[i + N / 2]);         \
    return r;                                                                                 \
  }                                                                                           \
  static inline W __vdot_##V(V a, V b, uint32_t m) {                                          \
    W r;                                                                                      \
    for (int i = 0; i < N / 2; ++i) {                                                         \
      long long s = 0;                                                                        \
      for (int k = 2 * i; k < 2 * i + 2; ++k)                                                 \
        if (__TESSERA_LANE_ON(m, k, N)) s += (long long)a[k] * (long long)b[k];               \
      const long long lo = (WE)-1 < 0 ? -(1ll << (8 * sizeof(WE) - 1)) : 0;                   \
      const long long hi = (WE)-1 < 0 ? (1ll << (8 * sizeof(WE) - 1)) - 1                     \
                                      : (long long)((1ull << (8 * sizeof(WE))) - 1);          \
      r[i] = (WE)(s < lo ? lo : s > hi ? hi : s);                                             \
    }                                                                                         \
    return r;                                                                                 \
  }
__TESSERA_WIDEN(char32, 32, short16, short)
__TESSERA_WIDEN(uchar32, 32, ushort16, ushort)
__TESSERA_WIDEN(short16, 16, int8, int)
__TESSERA_WIDEN(ushort16, 16, uint8, uint)

/* __vmull_to_<W>(a, b) / __vmulh_to_<W>(a, b): the products of the low / high half of the lanes
 * of two 8- or 16-bit vectors whose signs may differ, each lane extended by its own sign, wrapped
 * to W's lanes (dsl.CombineInstructions: a product of two widening casts). */
#define __TESSERA_VMUL_TO(W, WE, WN, a, b, first)                                             \
  ({                                                                                          \
    __auto_type __tessera_a = (a);                                                            \
    __auto_type __tessera_b = (b);                                                            \
    W __tessera_r;                                                                            \
    for (int __tessera_i = 0; __tessera_i < (WN); ++__tessera_i)                              \
      __tessera_r[__tessera_i] = (WE)((long long)__tessera_a[(first) + __tessera_i] *         \
                                      (long long)__tessera_b[(first) + __tessera_i]);         \
    __tessera_r;                                                                              \
  })
#define __vmull_to_short16(a, b) __TESSERA_VMUL_TO(short16, short, 16, a, b, 0)
#define __vmulh_to_short16(a, b) __TESSERA_VMUL_TO(short16, short, 16, a, b, 16)
#define __vmull_to_ushort16(a, b) __TESSERA_VMUL_TO(ushort16, ushort, 16, a, b, 0)
#define __vmulh_to_ushort16(a, b) __TESSERA_VMUL_TO(ushort16, ushort, 16, a, b, 16)
#define __vmull_to_int8(a, b) __TESSERA_VMUL_TO(int8, int, 8, a, b, 0)
#define __vmulh_to_int8(a, b) __TESSERA_VMUL_TO(int8, int, 8, a, b, 8)
#define __vmull_to_uint8(a, b) __TESSERA_VMUL_TO(uint8, uint, 8, a, b, 0)
#define __vmulh_to_uint8(a, b) __TESSERA_VMUL_TO(uint8, uint, 8, a, b, 8)

/* 32-bit operands: (low word, high word) pairs of the 64-bit products of lanes 0-3 / 4-7. */
#define __TESSERA_WIDEN32(V, E, W64)                                                          \
  static inline V __vmull_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < 4; ++i) {                                                             \
      W64 p = (W64)a[i] * (W64)b[i];                                                          \
      r[2 * i] = (E)(uint32_t)((unsigned long long)p);                                        \
      r[2 * i + 1] = (E)(uint32_t)((unsigned long long)p >> 32);                              \
    }                                                                                         \
    return r;                                                                                 \
  }                                                                                           \
  static inline V __vmulh_##V(V a, V b) {                                                     \
    V r;                                                                                      \
    for (int i = 0; i < 4; ++i) {                                                             \
      W64 p = (W64)a[i + 4] * (W64)b[i + 4];                                                  \
      r[2 * i] = (E)(uint32_t)((unsigned long long)p);                                        \
      r[2 * i + 1] = (E)(uint32_t)((unsigned long long)p >> 32);                              \
    }                                                                                         \
    return r;                                                                                 \
  }
__TESSERA_WIDEN32(int8, int, long long)
__TESSERA_WIDEN32(uint8, uint, unsigned long long)

/* __vdpa(acc, a, b, m): acc[i] + a[2i]*b[2i] + a[2i+1]*b[2i+1] (active lanes), computed exactly
 * and saturated once to acc's lanes, as Compass gives. a and b are 8- or 16-bit vectors of one
 * width whose signs may differ; acc has half their lanes at twice their bits. */
#define __vdpa(acc, a, b, m)                                                                  \
  ({                                                                                          \
    __auto_type __tessera_acc = (acc);                                                        \
    __auto_type __tessera_a = (a);                                                            \
    __auto_type __tessera_b = (b);                                                            \
    const uint32_t __tessera_m = (m);                                                         \
    typedef __typeof__(__tessera_acc[0]) __tessera_we;                                        \
    enum { __tessera_n = sizeof(__tessera_a) / sizeof(__tessera_a[0]) };                      \
    const long long __tessera_lo =                                                            \
        (__tessera_we)-1 < 0 ? -(1ll << (8 * sizeof(__tessera_we) - 1)) : 0;                  \
    const long long __tessera_hi = (__tessera_we)-1 < 0                                       \
                                       ? (1ll << (8 * sizeof(__tessera_we) - 1)) - 1          \
                                       : (long long)((1ull << (8 * sizeof(__tessera_we))) - 1); \
    __typeof__(__tessera_acc) __tessera_r;                                                    \
    for (int __tessera_i = 0; __tessera_i < __tessera_n / 2; ++__tessera_i) {                 \
      long long __tessera_s = (long long)__tessera_acc[__tessera_i];                          \
      for (int __tessera_k = 2 * __tessera_i; __tessera_k < 2 * __tessera_i + 2; ++__tessera_k) \
        if (__TESSERA_LANE_ON(__tessera_m, __tessera_k, __tessera_n))                         \
          __tessera_s += (long long)__tessera_a[__tessera_k] * (long long)__tessera_b[__tessera_k]; \
      __tessera_r[__tessera_i] = (__tessera_we)(__tessera_s < __tessera_lo   ? __tessera_lo   \
                                                : __tessera_s > __tessera_hi ? __tessera_hi   \
                                                                             : __tessera_s);  \
    }                                                                                         \
    __tessera_r;                                                                              \
  })

#define __TESSERA_QDOT(V, N, W, WE)                                                           \
  static inline W __vqdot_##V(V a, V b, uint32_t m) {                                         \
    W r;                                                                                      \
    for (int i = 0; i < N / 4; ++i) {                                                         \
      long long s = 0;                                                                        \
      for (int k = 4 * i; k < 4 * i + 4; ++k)                                                 \
        if (__TESSERA_LANE_ON(m, k, N)) s += (long long)a[k] * (long long)b[k];               \
      r[i] = (WE)s;                                                                           \
    }                                                                                         \
    return r;                                                                                 \
  }
__TESSERA_QDOT(char32, 32, int8, int)
__TESSERA_QDOT(uchar32, 32, uint8, uint)

/* fp16/bf16 4-lane dot products added to a float32 accumulator (S.vqdpa), as Compass computes
 * them: each even lane of acc plus the active products of its 4 lanes, added one by one in
 * double, rounded to float32 once; odd lanes keep acc. fp16 S.vqdot is the same sum from 0 (odd
 * lanes zero). PROD(a, b, k) is the exact product of lane k as a double: fp16 products are
 * exact in float (22 bits, well inside its range), so they are made there and widened (GCC
 * widens _Float16 to double by a library call, many times slower); bf16 ones in double. */
#define __TESSERA_QDPA_F(V, PROD)                                                             \
  static inline float8 __vqdpa_##V(float8 acc, V a, V b, uint32_t m) {                        \
    float8 r = acc;                                                                           \
    for (int i = 0; i < 4; ++i) {                                                             \
      double s = (double)acc[2 * i];                                                          \
      for (int k = 4 * i; k < 4 * i + 4; ++k)                                                 \
        if (__TESSERA_LANE_ON(m, k, 16)) s += PROD(a, b, k);                                  \
      r[2 * i] = (float)s;                                                                    \
    }                                                                                         \
    return r;                                                                                 \
  }
#define __TESSERA_HALF_PROD(a, b, k) ((double)((float)(a)[k] * (float)(b)[k]))
#define __TESSERA_BF16_PROD(a, b, k) \
  ((double)__TESSERA_BF16_LANE(a, k) * (double)__TESSERA_BF16_LANE(b, k))
__TESSERA_IF_HALF(__TESSERA_QDPA_F(half16, __TESSERA_HALF_PROD))
__TESSERA_QDPA_F(bfloat16x16, __TESSERA_BF16_PROD)
__TESSERA_IF_HALF(static inline float8 __vqdot_half16(half16 a, half16 b, uint32_t m) {
  const float8 zero = {0};
  return __vqdpa_half16(zero, a, b, m);
})

/* bf16: the adder of the NPU, as Compass's tests record it (test_vqdot_bf16_corner_case): the
 * four products (exact) are aligned to the exponent of the largest, each cut toward zero to the
 * 24 bits of a float32 mantissa at that exponent, summed exactly, and the sum rounded to
 * float32 once. Products that are not finite are summed as they are. */
static inline float __tessera_bf16_qdot_sum(const double* p, int n) {
  double big = 0.0, plain = 0.0;
  for (int k = 0; k < n; ++k) {
    plain += p[k];
    if (fabs(p[k]) > big) big = fabs(p[k]);
  }
  if (big == 0.0 || !isfinite(plain) || !isfinite(big)) return (float)plain;
  const int unit = ilogb(big) - 23;
  double s = 0.0;
  for (int k = 0; k < n; ++k) s += ldexp(trunc(ldexp(p[k], -unit)), unit);
  return (float)s;
}
static inline float8 __vqdot_bfloat16x16(bfloat16x16 a, bfloat16x16 b, uint32_t m) {
  float8 r = {0};
  for (int i = 0; i < 4; ++i) {
    double p[4];
    int n = 0;
    for (int k = 4 * i; k < 4 * i + 4; ++k)
      if (__TESSERA_LANE_ON(m, k, 16))
        p[n++] = (double)__TESSERA_BF16_LANE(a, k) * (double)__TESSERA_BF16_LANE(b, k);
    r[2 * i] = __tessera_bf16_qdot_sum(p, n);
  }
  return r;
}

/* S.fma: acc + x * y rounded to float32 once (a fused multiply-add; the FMA instruction where
 * the host has one), as Compass computes it; a scalar S.fma is computed in lane 0. */
static inline float8 __vfma_float8(float8 acc, float8 x, float8 y) {
  float8 r;
  for (int i = 0; i < 8; ++i) r[i] = __builtin_fmaf(x[i], y[i], acc[i]);
  return r;
}
#define __vfma(acc, x, y) __vfma_float8((acc), (x), (y))

/* fp16/bf16: acc + even (odd) lane products, acc float32. */
#define __TESSERA_FMAEO(V, LANE)                                                              \
  static inline float8 __vfmae_##V(float8 acc, V x, V y, uint32_t m) {                        \
    float8 r = acc;                                                                           \
    for (int i = 0; i < 8; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, 8))                                                         \
        r[i] = acc[i] + (float)LANE(x, 2 * i) * (float)LANE(y, 2 * i);                        \
    return r;                                                                                 \
  }                                                                                           \
  static inline float8 __vfmao_##V(float8 acc, V x, V y, uint32_t m) {                        \
    float8 r = acc;                                                                           \
    for (int i = 0; i < 8; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, 8))                                                         \
        r[i] = acc[i] + (float)LANE(x, 2 * i + 1) * (float)LANE(y, 2 * i + 1);                \
    return r;                                                                                 \
  }                                                                                           \
  static inline void __vmml_##V(float* p, V x, V y, int accumulate) {                         \
    for (int i = 0; i < 4; ++i)                                                               \
      for (int j = 0; j < 4; ++j) {                                                           \
        float s = accumulate ? p[4 * i + j] : 0.0f;                                           \
        for (int k = 0; k < 4; ++k) s += (float)LANE(x, 4 * i + k) * (float)LANE(y, 4 * j + k); \
        p[4 * i + j] = s;                                                                     \
      }                                                                                       \
  }
__TESSERA_IF_HALF(__TESSERA_FMAEO(half16, __TESSERA_PLAIN_LANE))
__TESSERA_FMAEO(bfloat16x16, __TESSERA_BF16_LANE)

/* x >> c for a lane of `bits` bits (a count past the width shifts everything out), rounded to
 * nearest with ties to even when rnd: the shift shared by the narrowing shifts below. */
static inline long long __tessera_shift_right(long long x, unsigned long long c, unsigned bits,
                                              int rnd) {
  if (c > bits) c = bits + 1;
  if (c == 0) return x;
  long long q = x >> c;
  if (rnd) {
    long long rem = x - (q << c), half = 1ll << (c - 1);
    if (rem > half || (rem == half && (q & 1))) q += 1;
  }
  return q;
}

/* ---- Narrowing right shift: results keep their source lane positions, the gaps are zero. ---- */
#define __TESSERA_NSR(V, E, N, UE, R, RE, RN, RMIN, RMAX, URMAX)                              \
  static inline R __vnsr_##V##_##R(V a, V s, uint32_t m, int sat, int rnd, int out_signed) {  \
    R r = {0};                                                                                \
    const int step = RN / N;                                                                  \
    for (int i = 0; i < N; ++i) {                                                             \
      if (!__TESSERA_LANE_ON(m, i, N)) continue;                                              \
      long long q = __tessera_shift_right(a[i], (UE)s[i], 8 * sizeof(E), rnd);                \
      if (sat) {                                                                              \
        long long lo = out_signed ? (RMIN) : 0, hi = out_signed ? (RMAX) : (URMAX);           \
        q = q < lo ? lo : q > hi ? hi : q;                                                    \
      }                                                                                       \
      r[i * step] = (RE)q;                                                                    \
    }                                                                                         \
    return r;                                                                                 \
  }
__TESSERA_NSR(short16, short, 16, ushort, char32, char, 32, -128, 127, 255)
__TESSERA_NSR(ushort16, ushort, 16, ushort, char32, char, 32, -128, 127, 255)
__TESSERA_NSR(int8, int, 8, uint, char32, char, 32, -128, 127, 255)
__TESSERA_NSR(uint8, uint, 8, uint, char32, char, 32, -128, 127, 255)
__TESSERA_NSR(int8, int, 8, uint, short16, short, 16, -32768, 32767, 65535)
__TESSERA_NSR(uint8, uint, 8, uint, short16, short, 16, -32768, 32767, 65535)

/* __vnsr_into_<R>(acc, x, s, first, sat, rnd): x's lanes shifted right (rounded to nearest, ties
 * to even, when rnd), clamped to R's range (sat) or wrapped, into acc from lane first. The
 * combined form of a narrowing cast of a shift (dsl.CombineInstructions). */
#define __TESSERA_NSR_INTO(V, E, N, UE, R, RE, RN, RLO, RHI)                                  \
  static inline R __vnsr_into_##R##_##V(R acc, V a, V s, int first, int sat, int rnd) {      \
    for (int i = 0; i < N && first + i < RN; ++i) {                                           \
      long long q = __tessera_shift_right(a[i], (UE)s[i], 8 * sizeof(E), rnd);                \
      if (sat) q = q < (RLO) ? (RLO) : q > (RHI) ? (RHI) : q;                                 \
      acc[first + i] = (RE)q;                                                                 \
    }                                                                                         \
    return acc;                                                                               \
  }
#define __TESSERA_NSR_INTO_8(R, RE, LO, HI)                          \
  __TESSERA_NSR_INTO(short16, short, 16, ushort, R, RE, 32, LO, HI)  \
  __TESSERA_NSR_INTO(ushort16, ushort, 16, ushort, R, RE, 32, LO, HI) \
  __TESSERA_NSR_INTO(int8, int, 8, uint, R, RE, 32, LO, HI)          \
  __TESSERA_NSR_INTO(uint8, uint, 8, uint, R, RE, 32, LO, HI)
__TESSERA_NSR_INTO_8(char32, char, -128, 127)
__TESSERA_NSR_INTO_8(uchar32, uchar, 0, 255)
__TESSERA_NSR_INTO(int8, int, 8, uint, short16, short, 16, -32768, 32767)
__TESSERA_NSR_INTO(uint8, uint, 8, uint, short16, short, 16, -32768, 32767)
__TESSERA_NSR_INTO(int8, int, 8, uint, ushort16, ushort, 16, 0, 65535)
__TESSERA_NSR_INTO(uint8, uint, 8, uint, ushort16, ushort, 16, 0, 65535)

/* ---- Gathers and scatters (element pointers, 16-bit indices) --------------------------------
 * Lane i uses index lane first + i of the 32 lanes lo ++ hi (one native part of a wider index
 * vector: 8-bit data takes two index parts, 32-bit data half of one). */
#define __TESSERA_GIDX(lo, hi, k) ((k) < 16 ? (lo)[(k)] : (hi)[(k) - 16])
#define __TESSERA_GATHER(V, E, N)                                                             \
  static inline V __vload_gather_##V(const E* p, ushort16 lo, ushort16 hi, int first,         \
                                     uint32_t m) {                                            \
    V r;                                                                                      \
    for (int i = 0; i < N; ++i)                                                               \
      __TESSERA_SET_##V(r, i, __TESSERA_LANE_ON(m, i, N) ? p[__TESSERA_GIDX(lo, hi, first + i)] \
                                                         : __tessera_zero_##V);               \
    return r;                                                                                 \
  }                                                                                           \
  static inline void __vstore_scatter_##V(V v, E* p, ushort16 lo, ushort16 hi, int first,     \
                                          uint32_t m) {                                       \
    for (int i = 0; i < N; ++i)                                                               \
      if (__TESSERA_LANE_ON(m, i, N)) p[__TESSERA_GIDX(lo, hi, first + i)] = __TESSERA_GET_##V(v, i); \
  }
__TESSERA_GATHER(char32, char, 32)
__TESSERA_GATHER(uchar32, uchar, 32)
__TESSERA_GATHER(short16, short, 16)
__TESSERA_GATHER(ushort16, ushort, 16)
__TESSERA_GATHER(int8, int, 8)
__TESSERA_GATHER(uint8, uint, 8)
__TESSERA_IF_HALF(__TESSERA_GATHER(half16, half, 16))
__TESSERA_GATHER(float8, float, 8)
__TESSERA_GATHER(bfloat16x16, bfloat16, 16)

/* ---- Overloading ------------------------------------------------------------------------------ */
#define __TESSERA_INT_ONLY(f) __TESSERA_INTEGER_CASES(f)
#define __TESSERA_FLOATS(f) float8: f##_float8, bfloat16x16: f##_bfloat16x16 __TESSERA_IF_HALF(, half16: f##_half16)
#define __TESSERA_NUMBERS(f) __TESSERA_INTEGER_CASES(f), __TESSERA_FLOATS(f)
#define __TESSERA_CALL1(cases, x) \
  ({                              \
    __auto_type __tessera_x = (x); \
    _Generic(__tessera_x, cases)(__tessera_x); \
  })

#define __vadds(a, b) __TESSERA_CALL(__TESSERA_INT_ONLY(__vadds), a, (b))
#define __vsubs(a, b) __TESSERA_CALL(__TESSERA_INT_ONLY(__vsubs), a, (b))
#define __vasrr(a, s) __TESSERA_CALL(__TESSERA_INT_ONLY(__vasrr), a, (s))
#define __vlsls(a, s) __TESSERA_CALL(__TESSERA_INT_ONLY(__vlsls), a, (s))
#define __vror(a, s) __TESSERA_CALL(__TESSERA_INT_ONLY(__vror), a, (s))
#define __vclz(a) __TESSERA_CALL1(__TESSERA_INT_ONLY(__vclz), a)
#define __vcls(a) __TESSERA_CALL1(__TESSERA_INT_ONLY(__vcls), a)
#define __vbrevs(a) __TESSERA_CALL1(__TESSERA_INT_ONLY(__vbrevs), a)
#define __vpcnt(a) __TESSERA_CALL1(__TESSERA_INT_ONLY(__vpcnt), a)
#define __vabs(a, sat) __TESSERA_CALL(__TESSERA_NUMBERS(__vabs), a, (sat))
#define __vrint(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vrint), a)
#define __vexp(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vexp), a)
#define __vlog(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vlog), a)
#define __vtanh(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vtanh), a)
#define __vsin(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vsin), a)
#define __vcos(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vcos), a)
#define __vrsqrt(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vrsqrt), a)
#define __vsqrt(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vsqrt), a)
#define __vceil(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vceil), a)
#define __verf(a) __TESSERA_CALL1(__TESSERA_FLOATS(__verf), a)
#define __vexp2(a) __TESSERA_CALL1(__TESSERA_FLOATS(__vexp2), a)
#define __vpow(a, b) __TESSERA_CALL(__TESSERA_FLOATS(__vpow), a, (b))
#define __visnan(a, m) __TESSERA_CALL(__TESSERA_FLOATS(__visnan), a, (m))
#define __visinf(a, m) __TESSERA_CALL(__TESSERA_FLOATS(__visinf), a, (m))
#define __visfinite(a, m) __TESSERA_CALL(__TESSERA_FLOATS(__visfinite), a, (m))
#define __vperm(x, y, idx) __TESSERA_CALL(__TESSERA_ALL(__vperm), x, (y), (idx))
#define __vreplic(x, index) __TESSERA_CALL(__TESSERA_ALL(__vreplic), x, (index))
#define __vcompt(x, m) __TESSERA_CALL(__TESSERA_ALL(__vcompt), x, (m))
#define __vcompc(x, y, m) __TESSERA_CALL(__TESSERA_ALL(__vcompc), x, (y), (m))
#define __vrpadd(x, m) __TESSERA_CALL(__TESSERA_ALL(__vrpadd), x, (m))
#define __vrpmax(x, m, idx) __TESSERA_CALL(__TESSERA_ALL(__vrpmax), x, (m), (idx))
#define __vrpmin(x, m, idx) __TESSERA_CALL(__TESSERA_ALL(__vrpmin), x, (m), (idx))
#define __vaddh(a, b) __TESSERA_CALL(__TESSERA_NUMERIC_CASES(__vaddh), a, (b))
#define __vsubh(a, b) __TESSERA_CALL(__TESSERA_NUMERIC_CASES(__vsubh), a, (b))
#define __TESSERA_MAXH_CASES(f) __TESSERA_NUMERIC_CASES(f), bfloat16x16: f##_bfloat16x16
#define __vmaxh(a, b) __TESSERA_CALL(__TESSERA_MAXH_CASES(__vmaxh), a, (b))
#define __vminh(a, b) __TESSERA_CALL(__TESSERA_MAXH_CASES(__vminh), a, (b))
#define __vmull(a, b) __TESSERA_CALL(__TESSERA_INT_ONLY(__vmull), a, (b))
#define __vmulh(a, b) __TESSERA_CALL(__TESSERA_INT_ONLY(__vmulh), a, (b))
#define __TESSERA_DOT_CASES(f) \
  char32: f##_char32, uchar32: f##_uchar32, short16: f##_short16, ushort16: f##_ushort16
#define __TESSERA_BYTE_CASES(f) \
  char32: f##_char32, uchar32: f##_uchar32, bfloat16x16: f##_bfloat16x16 __TESSERA_IF_HALF(, half16: f##_half16)
#define __vdot(a, b, m) __TESSERA_CALL(__TESSERA_DOT_CASES(__vdot), a, (b), (m))
#define __vqdot(a, b, m) __TESSERA_CALL(__TESSERA_BYTE_CASES(__vqdot), a, (b), (m))
#define __vqdpa(acc, x, y, m)                                                                 \
  _Generic((x), bfloat16x16: __vqdpa_bfloat16x16 __TESSERA_IF_HALF(, half16: __vqdpa_half16))( \
      (acc), (x), (y), (m))
#define __vfmae(acc, x, y, m)                                                                 \
  _Generic((x), bfloat16x16: __vfmae_bfloat16x16 __TESSERA_IF_HALF(, half16: __vfmae_half16))( \
      (acc), (x), (y), (m))
#define __vfmao(acc, x, y, m)                                                                 \
  _Generic((x), bfloat16x16: __vfmao_bfloat16x16 __TESSERA_IF_HALF(, half16: __vfmao_half16))( \
      (acc), (x), (y), (m))
#define __vmml(p, x, y) \
  _Generic((x), bfloat16x16: __vmml_bfloat16x16 __TESSERA_IF_HALF(, half16: __vmml_half16))((p), (x), (y), 0)
#define __vmma(p, x, y) \
  _Generic((x), bfloat16x16: __vmml_bfloat16x16 __TESSERA_IF_HALF(, half16: __vmml_half16))((p), (x), (y), 1)
/* 8-bit results; __vnsr_h gives 16-bit ones (to_h). */
#define __TESSERA_NSR_B_CASES(f)                                                   \
  short16: f##_short16_char32, ushort16: f##_ushort16_char32, int8: f##_int8_char32, \
  uint8: f##_uint8_char32
#define __TESSERA_NSR_H_CASES(f) int8: f##_int8_short16, uint8: f##_uint8_short16
#define __vnsr(a, s, m, sat, rnd, out_signed) \
  __TESSERA_CALL(__TESSERA_NSR_B_CASES(__vnsr), a, (s), (m), (sat), (rnd), (out_signed))
#define __vnsr_h(a, s, m, sat, rnd, out_signed) \
  __TESSERA_CALL(__TESSERA_NSR_H_CASES(__vnsr), a, (s), (m), (sat), (rnd), (out_signed))
#define __TESSERA_NSR_INTO_CALL(R, acc, x, s, f, sat, rnd)                                \
  ({                                                                                      \
    __auto_type __tessera_x = (x);                                                        \
    _Generic(__tessera_x, short16: __vnsr_into_##R##_short16,                             \
             ushort16: __vnsr_into_##R##_ushort16, int8: __vnsr_into_##R##_int8,          \
             uint8: __vnsr_into_##R##_uint8)((acc), __tessera_x, (s), (f), (sat), (rnd)); \
  })
#define __TESSERA_NSR_INTO_H_CALL(R, acc, x, s, f, sat, rnd)                                    \
  ({                                                                                            \
    __auto_type __tessera_x = (x);                                                              \
    _Generic(__tessera_x, int8: __vnsr_into_##R##_int8, uint8: __vnsr_into_##R##_uint8)(       \
        (acc), __tessera_x, (s), (f), (sat), (rnd));                                            \
  })
#define __vnsr_into_char32(acc, x, s, f, sat, rnd) __TESSERA_NSR_INTO_CALL(char32, acc, x, s, f, sat, rnd)
#define __vnsr_into_uchar32(acc, x, s, f, sat, rnd) __TESSERA_NSR_INTO_CALL(uchar32, acc, x, s, f, sat, rnd)
#define __vnsr_into_short16(acc, x, s, f, sat, rnd) \
  __TESSERA_NSR_INTO_H_CALL(short16, acc, x, s, f, sat, rnd)
#define __vnsr_into_ushort16(acc, x, s, f, sat, rnd) \
  __TESSERA_NSR_INTO_H_CALL(ushort16, acc, x, s, f, sat, rnd)
#define __vload_gather(p, lo, hi, first, m)                                                   \
  _Generic((p), char*: __vload_gather_char32, uchar*: __vload_gather_uchar32,                 \
           short*: __vload_gather_short16, ushort*: __vload_gather_ushort16,                  \
           int*: __vload_gather_int8, uint*: __vload_gather_uint8, float*: __vload_gather_float8, \
           bfloat16*: __vload_gather_bfloat16x16                                              \
           __TESSERA_IF_HALF(, half*: __vload_gather_half16))((p), (lo), (hi), (first), (m))
#define __vstore_scatter(v, p, lo, hi, first, m) \
  __TESSERA_CALL(__TESSERA_ALL(__vstore_scatter), v, (p), (lo), (hi), (first), (m))
/* Inactive lanes of most intrinsics are undefined: the host keeps whatever was computed. */
#define __vundef_inactive(x, m) ((void)(m), (x))
/* ---- Profiling: S.perf_tick_begin(cid) / S.perf_tick_end(cid) ------------------------------
 * Each TEC keeps, per custom id, the ticks (nanoseconds of CLOCK_MONOTONIC: the host's counter)
 * spent between begin and end and how many regions ended; the launcher's __tessera_perf_read
 * hands them to Executor.profile. An end without a begin, and ids beyond the first
 * __TESSERA_PERF_IDS distinct ones of a TEC, are counted in `dropped`. */
#include <time.h>
#define __TESSERA_PERF_IDS 64
typedef struct {
  int64_t cid, start, ticks, count;
  int open;
} __tessera_perf_slot;
static struct {
  __tessera_perf_slot slots[TESSERA_NUM_TECS][__TESSERA_PERF_IDS];
  int used[TESSERA_NUM_TECS];
  int64_t dropped[TESSERA_NUM_TECS];
} __tessera_perf;
static inline int64_t __tessera_perf_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static inline __tessera_perf_slot* __tessera_perf_slot_of(int64_t cid, int create) {
  int tec = get_local_id(0);
  for (int i = 0; i < __tessera_perf.used[tec]; ++i) {
    if (__tessera_perf.slots[tec][i].cid == cid) return &__tessera_perf.slots[tec][i];
  }
  if (!create || __tessera_perf.used[tec] == __TESSERA_PERF_IDS) return NULL;
  __tessera_perf_slot* s = &__tessera_perf.slots[tec][__tessera_perf.used[tec]++];
  memset(s, 0, sizeof(*s));
  s->cid = cid;
  return s;
}
static inline void __perf_tick_begin(int64_t cid) {
  __tessera_perf_slot* s = __tessera_perf_slot_of(cid, 1);
  if (s == NULL) {
    ++__tessera_perf.dropped[get_local_id(0)];
    return;
  }
  s->open = 1;
  s->start = __tessera_perf_now();
}
static inline void __perf_tick_end(int64_t cid) {
  int64_t now = __tessera_perf_now();
  __tessera_perf_slot* s = __tessera_perf_slot_of(cid, 0);
  if (s == NULL || !s->open) {
    ++__tessera_perf.dropped[get_local_id(0)];
    return;
  }
  s->open = 0;
  s->ticks += now - s->start;
  s->count += 1;
}
/* Records as (tec, cid, ticks, count) quadruples into out[0 .. 4 * cap); returns how many. */
static inline int32_t __tessera_perf_collect(int64_t* out, int32_t cap, int64_t* dropped) {
  int32_t n = 0;
  *dropped = 0;
  for (int tec = 0; tec < TESSERA_NUM_TECS; ++tec) {
    *dropped += __tessera_perf.dropped[tec];
    for (int i = 0; i < __tessera_perf.used[tec] && n < cap; ++i, ++n) {
      const __tessera_perf_slot* s = &__tessera_perf.slots[tec][i];
      out[4 * n] = tec, out[4 * n + 1] = s->cid, out[4 * n + 2] = s->ticks, out[4 * n + 3] = s->count;
    }
  }
  return n;
}
static inline void __tessera_perf_reset(void) { memset(&__tessera_perf, 0, sizeof(__tessera_perf)); }

#endif /* TESSERA_DSL_INTRIN_H_ */
