/* tessera/runtime.h: the prelude of generated host C (targets "c" and "llvm"). Each generated
 * library is one translation unit that includes this header, so everything here is static. */
#ifndef TESSERA_RUNTIME_H_
#define TESSERA_RUNTIME_H_

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "tessera/runtime_abi.h"

#define TESSERA_EXPORT __attribute__((visibility("default")))

/* TESSERA_KEEP_IN_REGISTER<bits>(v): the vector variable v is in a vector register here. GCC
 * folds a vector load into every instruction that uses it as a memory operand, even when the
 * same vector feeds several FMAs of a register tile; an empty asm with a register operand keeps
 * one load. Other compilers (clang keeps such values in registers) and other hosts: nothing. */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define TESSERA_KEEP_IN_REGISTER128(v) __asm__("" : "+x"(v))
#if defined(__AVX__)
#define TESSERA_KEEP_IN_REGISTER256(v) __asm__("" : "+x"(v))
#endif
#if defined(__AVX512F__)
#define TESSERA_KEEP_IN_REGISTER512(v) __asm__("" : "+v"(v))
#endif
#endif
#ifndef TESSERA_KEEP_IN_REGISTER128
#define TESSERA_KEEP_IN_REGISTER128(v) ((void)0)
#endif
#ifndef TESSERA_KEEP_IN_REGISTER256
#define TESSERA_KEEP_IN_REGISTER256(v) ((void)0)
#endif
#ifndef TESSERA_KEEP_IN_REGISTER512
#define TESSERA_KEEP_IN_REGISTER512(v) ((void)0)
#endif

/* ---- Vector math: glibc's libmvec (x86-64, glibc >= 2.35) has SSE/AVX/AVX2/AVX-512 variants
 * of the float and double math functions (within 4 ulp). Declared "simd" here, the lane loops
 * of vector math calls vectorize into them. The build defines TESSERA_HAVE_LIBMVEC and links
 * libmvec where it finds the library. */
#if defined(TESSERA_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__) && defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
#define TESSERA_SIMD_MATH(name)                                        \
  __attribute__((__simd__("notinbranch"))) extern float name##f(float); \
  __attribute__((__simd__("notinbranch"))) extern double name(double);
TESSERA_SIMD_MATH(exp)
TESSERA_SIMD_MATH(exp2)
TESSERA_SIMD_MATH(exp10)
TESSERA_SIMD_MATH(expm1)
TESSERA_SIMD_MATH(log)
TESSERA_SIMD_MATH(log2)
TESSERA_SIMD_MATH(log10)
TESSERA_SIMD_MATH(log1p)
TESSERA_SIMD_MATH(sin)
TESSERA_SIMD_MATH(cos)
TESSERA_SIMD_MATH(tan)
TESSERA_SIMD_MATH(sinh)
TESSERA_SIMD_MATH(cosh)
TESSERA_SIMD_MATH(tanh)
TESSERA_SIMD_MATH(asin)
TESSERA_SIMD_MATH(acos)
TESSERA_SIMD_MATH(atan)
TESSERA_SIMD_MATH(asinh)
TESSERA_SIMD_MATH(acosh)
TESSERA_SIMD_MATH(atanh)
TESSERA_SIMD_MATH(erf)
TESSERA_SIMD_MATH(erfc)
TESSERA_SIMD_MATH(cbrt)
#undef TESSERA_SIMD_MATH
#define TESSERA_SIMD_MATH2(name)                                              \
  __attribute__((__simd__("notinbranch"))) extern float name##f(float, float); \
  __attribute__((__simd__("notinbranch"))) extern double name(double, double);
TESSERA_SIMD_MATH2(pow)
TESSERA_SIMD_MATH2(atan2)
TESSERA_SIMD_MATH2(hypot)
#undef TESSERA_SIMD_MATH2
#endif

/* ---- Errors: a message per thread, read by the runtime after a call returns non-zero ---- */

/* The error state belongs to the library. A library compiled as one file keeps it static; one
 * compiled as several units (tessera splits a very large program, each unit defining
 * TESSERA_SPLIT_UNIT) shares one copy, defined by the unit that also defines
 * TESSERA_SPLIT_UNIT_OWNER, hidden from other libraries. */
#if defined(TESSERA_SPLIT_UNIT) && defined(TESSERA_SPLIT_UNIT_OWNER)
#define TESSERA_LIBRARY_STATE __attribute__((visibility("hidden")))
#elif defined(TESSERA_SPLIT_UNIT)
#define TESSERA_LIBRARY_STATE extern __attribute__((visibility("hidden")))
#else
#define TESSERA_LIBRARY_STATE static
#endif

TESSERA_LIBRARY_STATE __thread char tessera_last_error[1024];

#if !defined(TESSERA_SPLIT_UNIT) || defined(TESSERA_SPLIT_UNIT_OWNER)
TESSERA_EXPORT const char* __tessera_get_last_error(void) { return tessera_last_error; }
#endif

__attribute__((format(printf, 1, 2))) static void tessera_set_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tessera_last_error, sizeof(tessera_last_error), fmt, ap);
  va_end(ap);
}

/* An assert that fails in a private function cannot return an error code through its caller's
 * expressions: it records the error here, returns, and the packed entry reports it at its end. */
TESSERA_LIBRARY_STATE __thread int tessera_error_pending;

/* Failed bound checks (tir.instrument_bound_checkers) can happen on OpenMP worker threads: the
 * first one is recorded for the library, the access is skipped, and the packed entry returns it
 * when it returns. */
TESSERA_LIBRARY_STATE int tessera_bound_claimed;
TESSERA_LIBRARY_STATE int tessera_bound_failed;
TESSERA_LIBRARY_STATE char tessera_bound_message[1024];

__attribute__((format(printf, 1, 0))) static void tessera_bound_error_v(const char* fmt,
                                                                        va_list ap) {
  if (__atomic_exchange_n(&tessera_bound_claimed, 1, __ATOMIC_ACQ_REL) != 0) return;
  vsnprintf(tessera_bound_message, sizeof(tessera_bound_message), fmt, ap);
  __atomic_store_n(&tessera_bound_failed, 1, __ATOMIC_RELEASE);
}

__attribute__((format(printf, 1, 2))) static void tessera_bound_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tessera_bound_error_v(fmt, ap);
  va_end(ap);
}

static inline int32_t tessera_status(void) {
  if (__atomic_load_n(&tessera_bound_failed, __ATOMIC_ACQUIRE)) {
    memcpy(tessera_last_error, tessera_bound_message, sizeof(tessera_last_error));
    __atomic_store_n(&tessera_bound_failed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&tessera_bound_claimed, 0, __ATOMIC_RELEASE);
    tessera_error_pending = 0;
    return -1;
  }
  if (!tessera_error_pending) return 0;
  tessera_error_pending = 0;
  return -1;
}

/* ---- Argument access ---- */

#define TESSERA_DLT(h) ((TesseraDLTensor*)(h))
#define TESSERA_DLT_SHAPE(h, i) (TESSERA_DLT(h)->shape[i])
#define TESSERA_DLT_STRIDE(h, i) (TESSERA_DLT(h)->strides[i])

/* The count and type codes of a packed call's arguments against the parameters of `func`:
 * `kinds` has one letter per parameter, 'p' a pointer (array, handle or NULL), 'f' a float (an
 * int converts), 'i' an int or bool. Returns 1, or sets the error and returns 0. */
__attribute__((noinline, unused)) static int tessera_check_args(const int32_t* codes,
                                                                int32_t num_args,
                                                                const char* func,
                                                                const char* kinds) {
  int32_t n = (int32_t)strlen(kinds);
  if (num_args != n) {
    tessera_set_error("%s: num_args should be %d", func, (int)n);
    return 0;
  }
  for (int32_t i = 0; i < n; ++i) {
    int32_t c = codes[i];
    int ok;
    const char* what;
    if (kinds[i] == 'p') {
      ok = c == TESSERA_ARG_DLTENSOR || c == TESSERA_ARG_NULL || c == TESSERA_ARG_HANDLE;
      what = "pointer";
    } else if (kinds[i] == 'f') {
      ok = c == TESSERA_ARG_FLOAT || c == TESSERA_ARG_INT;
      what = "float";
    } else {
      ok = c == TESSERA_ARG_INT || c == TESSERA_ARG_UINT;
      what = "int";
    }
    if (!ok) {
      tessera_set_error("%s: Expect arg[%d] to be %s", func, (int)i, what);
      return 0;
    }
  }
  return 1;
}

/* A DLTensor argument against the buffer a packed function declares (tir.MakePackedAPI calls
 * this once per buffer parameter instead of emitting the checks inline, which kept the C
 * compiler busy on large functions). `arg` is "<function>.<parameter>", `param` the parameter.
 * `ndim` dimensions of element type `dtype` = (code, bits, lanes); TESSERA_DL_BOOL accepts any
 * 8-bit integer code. With `full` == 0 only the pointer, ndim and dtype are checked (the
 * generated code checks the rest); with `full` == 1 (int32 extents) or 2 (int64 extents) also
 * the constant `shape` (ndim values), compact strides, the device type and the data pointer.
 * Returns 1, or sets the error (the message the inline checks would give) and returns 0. */
__attribute__((noinline, unused)) static int tessera_check_dltensor(
    const void* handle, const char* arg, const char* param, const char* dtype, int32_t ndim,
    int32_t code, int32_t bits, int32_t lanes, int32_t full, int32_t device_type,
    const int64_t* shape) {
  const TesseraDLTensor* t = (const TesseraDLTensor*)handle;
  if (t == NULL) {
    tessera_set_error("%s is a NULL DLTensor* pointer", arg);
    return 0;
  }
  if (t->ndim != ndim) {
    tessera_set_error("%s.ndim is expected to equal %d", arg, (int)ndim);
    return 0;
  }
  int code_ok = code == TESSERA_DL_BOOL ? (t->dtype.code == TESSERA_DL_BOOL ||
                                           t->dtype.code == TESSERA_DL_INT ||
                                           t->dtype.code == TESSERA_DL_UINT)
                                        : t->dtype.code == code;
  if (!code_ok || t->dtype.bits != bits || t->dtype.lanes != lanes) {
    tessera_set_error("%s.dtype is expected to be %s", arg, dtype);
    return 0;
  }
  if (!full) return 1;
  int empty = 0;
  for (int32_t k = 0; k < ndim; ++k) {
    if (t->shape[k] != shape[k]) {
      tessera_set_error("Argument %s.shape[%d] has an unsatisfied constraint: %s%lld%s == "
                        "%s.shape[%d] (got %lld)",
                        arg, (int)k, full == 2 ? "T.int64(" : "", (long long)shape[k],
                        full == 2 ? ")" : "", param, (int)k, (long long)t->shape[k]);
      return 0;
    }
    empty = empty || shape[k] == 0;
  }
  if (!empty && t->strides != NULL) {
    int64_t expect = 1;
    for (int32_t k = ndim; k-- > 0;) {
      if (shape[k] != 1 && t->strides[k] != expect) {
        tessera_set_error("%s.strides: expected to be compact array", arg);
        return 0;
      }
      expect *= shape[k];
    }
  }
  if (t->device.device_type != device_type) {
    tessera_set_error(
        "Argument %s.device_type has an unsatisfied constraint: %d == %s.device_type (got %lld)",
        arg, (int)device_type, param, (long long)t->device.device_type);
    return 0;
  }
  if (t->data == NULL && !empty) {
    tessera_set_error("%s has a NULL data pointer", arg);
    return 0;
  }
  return 1;
}

/* One buffer argument of a table that tessera_check_dltensor_table checks: the argument's
 * index in the packed call, then the arguments of tessera_check_dltensor, with its constant
 * shape at `shape_offset` of the table's shapes. */
typedef struct {
  int32_t index;
  const char* arg;
  const char* param;
  const char* dtype;
  int32_t ndim, code, bits, lanes, full;
  int32_t shape_offset;
} TesseraBufferCheck;

/* tessera_check_dltensor of `count` buffer arguments, described by a static table: a packed
 * function of thousands of buffer parameters checks them in one loop instead of thousands of
 * calls, which the C compiler's optimiser took seconds over. Returns 1, or sets the first
 * wrong argument's error and returns 0. */
__attribute__((noinline, unused)) static int tessera_check_dltensor_table(
    const void* args, const TesseraBufferCheck* checks, int32_t count, const int64_t* shapes,
    int32_t device_type) {
  for (int32_t i = 0; i < count; ++i) {
    const TesseraBufferCheck* c = &checks[i];
    if (!tessera_check_dltensor(((const TesseraValue*)args)[c->index].v_handle, c->arg,
                                c->param, c->dtype, c->ndim, c->code, c->bits, c->lanes,
                                c->full, device_type, shapes + c->shape_offset)) {
      return 0;
    }
  }
  return 1;
}

static inline void tessera_set_return_int(TesseraValue* ret, int32_t* code, int64_t v, int32_t c) {
  ret->v_int64 = v;
  *code = c;
}
static inline void tessera_set_return_float(TesseraValue* ret, int32_t* code, double v) {
  ret->v_float64 = v;
  *code = TESSERA_ARG_FLOAT;
}

/* ---- Workspace: heap allocations freed when their variable leaves scope ---- */

/* A workspace of 2 MiB or more (a matmul's packed panels) is aligned to 2 MiB and advised into
 * transparent huge pages where the kernel offers them: the panels stream through one TLB entry
 * per 2 MiB instead of 512 (matmul 1024^3 with packed panels on AVX2, one thread: ~5% faster). */
#define TESSERA_HUGE_PAGE_BYTES ((size_t)2 << 20)
static inline void* tessera_alloc_workspace(size_t bytes) {
  void* p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= TESSERA_HUGE_PAGE_BYTES) {
    size_t rounded = (bytes + TESSERA_HUGE_PAGE_BYTES - 1) & ~(TESSERA_HUGE_PAGE_BYTES - 1);
    if (posix_memalign(&p, TESSERA_HUGE_PAGE_BYTES, rounded) != 0) return NULL;
    (void)madvise(p, rounded, MADV_HUGEPAGE);
    return p;
  }
#endif
  if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) return NULL;
  return p;
}
static inline void tessera_free_workspace(void* slot) { free(*(void**)slot); }
#define TESSERA_WORKSPACE __attribute__((cleanup(tessera_free_workspace)))

/* ---- Scalar helpers chosen by the type of a + b (after C's usual conversions) ---- */

#define TESSERA_SCALAR_OPS(T, name)                                                  \
  static inline T tessera_min_##name(T a, T b) { return a < b ? a : b; }             \
  static inline T tessera_max_##name(T a, T b) { return a > b ? a : b; }
#define TESSERA_INT_FLOOR_OPS(T, name)                                               \
  static inline T tessera_floordiv_##name(T a, T b) {                                \
    T q = a / b;                                                                     \
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;                         \
  }                                                                                  \
  static inline T tessera_floormod_##name(T a, T b) {                                \
    T r = a % b;                                                                     \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                             \
  }
#define TESSERA_UINT_FLOOR_OPS(T, name)                                              \
  static inline T tessera_floordiv_##name(T a, T b) { return a / b; }                \
  static inline T tessera_floormod_##name(T a, T b) { return a % b; }
#define TESSERA_FLOAT_FLOOR_OPS(T, name, FLOOR)                                      \
  static inline T tessera_floordiv_##name(T a, T b) { return FLOOR(a / b); }         \
  static inline T tessera_floormod_##name(T a, T b) { return a - FLOOR(a / b) * b; }

#if defined(__FLT16_MAX__)
#define TESSERA_IF_HALF(...) __VA_ARGS__
#else
#define TESSERA_IF_HALF(...)
#endif

TESSERA_IF_HALF(TESSERA_SCALAR_OPS(_Float16, half))
TESSERA_IF_HALF(TESSERA_FLOAT_FLOOR_OPS(_Float16, half, (_Float16)floorf))
TESSERA_SCALAR_OPS(int, int)
TESSERA_SCALAR_OPS(unsigned, uint)
TESSERA_SCALAR_OPS(long, long)
TESSERA_SCALAR_OPS(unsigned long, ulong)
TESSERA_SCALAR_OPS(long long, llong)
TESSERA_SCALAR_OPS(unsigned long long, ullong)
TESSERA_SCALAR_OPS(float, float)
TESSERA_SCALAR_OPS(double, double)
TESSERA_INT_FLOOR_OPS(int, int)
TESSERA_INT_FLOOR_OPS(long, long)
TESSERA_INT_FLOOR_OPS(long long, llong)
TESSERA_UINT_FLOOR_OPS(unsigned, uint)
TESSERA_UINT_FLOOR_OPS(unsigned long, ulong)
TESSERA_UINT_FLOOR_OPS(unsigned long long, ullong)
TESSERA_FLOAT_FLOOR_OPS(float, float, floorf)
TESSERA_FLOAT_FLOOR_OPS(double, double, floor)

#define TESSERA_SCALAR_CALL(f, a, b)                                                     \
  ({                                                                                    \
    __auto_type tessera_a_ = (a);                                                       \
    __auto_type tessera_b_ = (b);                                                       \
    _Generic(tessera_a_ + tessera_b_, int: f##_int, unsigned: f##_uint, long: f##_long, \
             unsigned long: f##_ulong, long long: f##_llong,                            \
             unsigned long long: f##_ullong, float: f##_float,                          \
             double: f##_double TESSERA_IF_HALF(, _Float16: f##_half))(tessera_a_,      \
                                                                       tessera_b_);     \
  })

#define min(a, b) TESSERA_SCALAR_CALL(tessera_min, a, b)
#define max(a, b) TESSERA_SCALAR_CALL(tessera_max, a, b)
#define __floordiv(a, b) TESSERA_SCALAR_CALL(tessera_floordiv, a, b)
#define __floormod(a, b) TESSERA_SCALAR_CALL(tessera_floormod, a, b)

/* Vector types, their helpers and the packed entry points follow in the generated file. */
#pragma GCC diagnostic ignored "-Wpsabi"


/* ---- float8 formats: one byte of storage, converted through double ----
 * `format` is tessera's type code (include/tessera/ir/dtype.h, DLPack's numbering): 7 e3m4,
 * 8 e4m3, 9 e4m3b11fnuz, 10 e4m3fn, 11 e4m3fnuz, 12 e5m2, 13 e5m2fnuz, 14 e8m0fnu. Conversions
 * round to nearest even (e8m0fnu: ties up, as ml_dtypes does); out of range gives infinity where
 * the format has one, else NaN. */
enum { TESSERA_NARROW_IEEE, TESSERA_NARROW_FN, TESSERA_NARROW_FNUZ };

typedef struct {
  int ebits, mbits, bias, kind;
} TesseraNarrowFormat;

static inline TesseraNarrowFormat tessera_narrow_format(int format) {
  switch (format) {
    case 7: return (TesseraNarrowFormat){3, 4, 3, TESSERA_NARROW_IEEE};
    case 8: return (TesseraNarrowFormat){4, 3, 7, TESSERA_NARROW_IEEE};
    case 9: return (TesseraNarrowFormat){4, 3, 11, TESSERA_NARROW_FNUZ};
    case 10: return (TesseraNarrowFormat){4, 3, 7, TESSERA_NARROW_FN};
    case 11: return (TesseraNarrowFormat){4, 3, 8, TESSERA_NARROW_FNUZ};
    case 12: return (TesseraNarrowFormat){5, 2, 15, TESSERA_NARROW_IEEE};
    default: return (TesseraNarrowFormat){5, 2, 16, TESSERA_NARROW_FNUZ}; /* 13 */
  }
}

static inline double tessera_narrow_to_double(uint8_t bits, int format) {
  if (format == 14) return bits == 0xFF ? NAN : ldexp(1.0, (int)bits - 127);
  TesseraNarrowFormat f = tessera_narrow_format(format);
  int sign = bits >> 7, e = (bits >> f.mbits) & ((1 << f.ebits) - 1), m = bits & ((1 << f.mbits) - 1);
  int e_all = (1 << f.ebits) - 1, m_all = (1 << f.mbits) - 1;
  if (f.kind == TESSERA_NARROW_IEEE && e == e_all) return m ? NAN : (sign ? -INFINITY : INFINITY);
  if (f.kind == TESSERA_NARROW_FN && e == e_all && m == m_all) return NAN;
  if (f.kind == TESSERA_NARROW_FNUZ && bits == 0x80) return NAN;
  double v = e == 0 ? ldexp((double)m, 1 - f.bias - f.mbits)
                    : ldexp((double)(m + (1 << f.mbits)), e - f.bias - f.mbits);
  return sign ? -v : v;
}

static inline uint8_t tessera_narrow_from_double(double x, int format) {
  if (format == 14) {
    if (!(x > 0) || isinf(x)) return 0xFF;
    /* Below 2^-126 (float32's subnormals) ml_dtypes rounds the float32 bit pattern: (2^-127,
     * 2^-126) goes up to 2^-126, the rest down to 2^-127. */
    if (x < 0x1p-126) return x > 0x1p-127 ? 1 : 0;
    int k;
    double frac = frexp(x, &k); /* x = frac * 2^k, frac in [0.5, 1) */
    int e = k - 1 + (frac >= 0.75 ? 1 : 0);
    if (e > 127) return 0xFF;
    return (uint8_t)(e < -127 ? 0 : e + 127);
  }
  TesseraNarrowFormat f = tessera_narrow_format(format);
  int e_all = (1 << f.ebits) - 1, m_all = (1 << f.mbits) - 1;
  uint8_t sign = signbit(x) ? 0x80 : 0;
  uint8_t nan = f.kind == TESSERA_NARROW_FNUZ ? 0x80
              : f.kind == TESSERA_NARROW_FN   ? (uint8_t)(sign | 0x7F)
                                              : (uint8_t)(sign | (e_all << f.mbits) | (1 << (f.mbits - 1)));
  if (isnan(x)) return nan;
  if (f.kind == TESSERA_NARROW_FNUZ && sign && !(x < 0)) sign = 0; /* no negative zero */
  /* The largest finite value. */
  int top_e = f.kind == TESSERA_NARROW_IEEE ? e_all - 1 : e_all;
  int top_m = f.kind == TESSERA_NARROW_FN ? m_all - 1 : m_all;
  double max = ldexp((double)(top_m + (1 << f.mbits)), top_e - f.bias - f.mbits);
  double a = fabs(x);
  uint8_t overflow = f.kind == TESSERA_NARROW_IEEE ? (uint8_t)(sign | (e_all << f.mbits)) : nan;
  if (isinf(a)) return overflow;
  int emin = 1 - f.bias, k;
  frexp(a, &k);
  int e = k - 1 < emin ? emin : k - 1;
  double q = ldexp(1.0, e - f.mbits);
  double v = nearbyint(a / q) * q;
  if (v > max) return overflow;
  if (v == 0) return f.kind == TESSERA_NARROW_FNUZ ? 0 : sign;
  frexp(v, &k);
  e = k - 1;
  if (e < emin) return (uint8_t)(sign | (int)(v / ldexp(1.0, emin - f.mbits)));
  int m = (int)(v / ldexp(1.0, e - f.mbits)) - (1 << f.mbits);
  return (uint8_t)(sign | ((e + f.bias) << f.mbits) | m);
}

#endif /* TESSERA_RUNTIME_H_ */
