/* The CUDA C surface that tessera's CPU emulator compiles kernels against with the host C++
 * compiler: qualifiers, built-in variables, barriers and warp operations (served by the
 * emulator through TesseraEmuState), float math, and half / nv_bfloat16 as 16-bit storage types
 * that compute in float and round to nearest even. See src/runtime/cuda/emulator.cc. */
#ifndef TESSERA_CUDA_EMU_H_
#define TESSERA_CUDA_EMU_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>
#include <utility>

#include "tessera/cuda_emu_abi.h"

/* ---- qualifiers ---- */
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
/* Blocks run one after another on one host thread, so a block's shared memory is a static. */
#define __shared__ static
#define __constant__ static

extern "C" {
__attribute__((visibility("default"))) TesseraEmuState* __tessera_emu_state = nullptr;
}

/* ---- built-in variables ---- */
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
  dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  operator uint3() const { return uint3{x, y, z}; }
};
namespace tessera_emu {
inline uint3 Vec(const unsigned int* v) { return uint3{v[0], v[1], v[2]}; }
}  // namespace tessera_emu
#define threadIdx (::tessera_emu::Vec(__tessera_emu_state->cur->thread_idx))
#define blockIdx (::tessera_emu::Vec(__tessera_emu_state->cur->block_idx))
#define blockDim (::tessera_emu::Vec(__tessera_emu_state->cur->block_dim))
#define gridDim (::tessera_emu::Vec(__tessera_emu_state->cur->grid_dim))
#define warpSize 32

/* ---- vector types of vector_types.h: the words of vectorized loads and stores ---- */
#define __align__(n) __attribute__((aligned(n)))
#define TESSERA_EMU_VEC2(T, N, A)                                                   \
  struct __attribute__((aligned(A))) N##2 { T x, y; };                               \
  static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define TESSERA_EMU_VEC4(T, N, A)                                                   \
  struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                         \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
TESSERA_EMU_VEC2(float, float, 8)
TESSERA_EMU_VEC4(float, float, 16)
TESSERA_EMU_VEC2(int, int, 8)
TESSERA_EMU_VEC4(int, int, 16)
TESSERA_EMU_VEC2(unsigned int, uint, 8)
TESSERA_EMU_VEC4(unsigned int, uint, 16)
#undef TESSERA_EMU_VEC2
#undef TESSERA_EMU_VEC4

/* ---- dynamic shared memory (CodeGenCUDA's TESSERA_DYNAMIC_SHARED): one static array, like
   the __shared__ ones, as large as the most any GPU grants a block ---- */
#define TESSERA_DYNAMIC_SHARED(name) static __attribute__((aligned(16))) unsigned char name[232448]

/* ---- barriers and warp operations ---- */
static inline void __syncthreads() { __tessera_emu_state->syncthreads(__tessera_emu_state->sched); }
/* cp.async (CodeGenCUDA's helpers): the emulator copies at once, so committing is nothing and
   every wait is already satisfied. */
template <int N>
static inline void __tessera_cp_async(void* smem, const void* gmem) { memcpy(smem, gmem, N); }
static inline void __tessera_cp_async_commit() {}
template <int N>
static inline void __tessera_cp_async_wait() {}
static inline void __syncwarp(unsigned int mask = 0xffffffffu) {
  __tessera_emu_state->warp_op(__tessera_emu_state->sched, TESSERA_EMU_SYNCWARP, mask, 0, 0, 32);
}
static inline void __threadfence() {}
static inline void __threadfence_block() {}

namespace tessera_emu {
template <typename T>
inline T Shuffle(int kind, unsigned int mask, T v, int arg, int width) {
  static_assert(sizeof(T) <= 8, "warp shuffles exchange values of at most 8 bytes");
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T));
  bits = __tessera_emu_state->warp_op(__tessera_emu_state->sched, kind, mask, bits, arg, width);
  T out;
  memcpy(&out, &bits, sizeof(T));
  return out;
}
}  // namespace tessera_emu

template <typename T>
static inline T __shfl_sync(unsigned int mask, T v, int lane, int width = 32) {
  return ::tessera_emu::Shuffle(TESSERA_EMU_SHFL_IDX, mask, v, lane, width);
}
template <typename T>
static inline T __shfl_up_sync(unsigned int mask, T v, unsigned int delta, int width = 32) {
  return ::tessera_emu::Shuffle(TESSERA_EMU_SHFL_UP, mask, v, int(delta), width);
}
template <typename T>
static inline T __shfl_down_sync(unsigned int mask, T v, unsigned int delta, int width = 32) {
  return ::tessera_emu::Shuffle(TESSERA_EMU_SHFL_DOWN, mask, v, int(delta), width);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned int mask, T v, int lane_mask, int width = 32) {
  return ::tessera_emu::Shuffle(TESSERA_EMU_SHFL_XOR, mask, v, lane_mask, width);
}
static inline unsigned int __ballot_sync(unsigned int mask, int pred) {
  return (unsigned int)__tessera_emu_state->warp_op(__tessera_emu_state->sched, TESSERA_EMU_BALLOT,
                                                    mask, pred != 0, 0, 32);
}
static inline int __any_sync(unsigned int mask, int pred) { return __ballot_sync(mask, pred) != 0; }
static inline int __all_sync(unsigned int mask, int pred) {
  return __ballot_sync(mask, pred) == __ballot_sync(mask, 1);
}
static inline unsigned int __activemask() {
  return (unsigned int)__tessera_emu_state->warp_op(__tessera_emu_state->sched,
                                                    TESSERA_EMU_ACTIVEMASK, 0, 0, 0, 32);
}

/* Threads of a block never run at the same time: read-modify-write is atomic. */
template <typename T>
static inline T atomicAdd(T* p, T v) {
  T old = *p;
  *p = old + v;
  return old;
}
template <typename T>
static inline T atomicMax(T* p, T v) {
  T old = *p;
  *p = old < v ? v : old;
  return old;
}
template <typename T>
static inline T atomicMin(T* p, T v) {
  T old = *p;
  *p = v < old ? v : old;
  return old;
}
template <typename T>
static inline T atomicExch(T* p, T v) {
  T old = *p;
  *p = v;
  return old;
}
template <typename T>
static inline T atomicCAS(T* p, T compare, T v) {
  T old = *p;
  if (old == compare) *p = v;
  return old;
}

/* ---- bit casts ---- */
static inline float __int_as_float(int x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}
static inline int __float_as_int(float f) {
  int x;
  memcpy(&x, &f, 4);
  return x;
}
static inline float __uint_as_float(unsigned int x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}
static inline unsigned int __float_as_uint(float f) {
  unsigned int x;
  memcpy(&x, &f, 4);
  return x;
}
static inline double __longlong_as_double(long long x) {
  double d;
  memcpy(&d, &x, 8);
  return d;
}
static inline long long __double_as_longlong(double d) {
  long long x;
  memcpy(&x, &d, 8);
  return x;
}

/* ---- math that C lacks (names that glibc may also declare go through macros) ---- */
static inline float tessera_emu_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double tessera_emu_rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float tessera_emu_exp10f(float x) { return powf(10.0f, x); }
static inline double tessera_emu_exp10(double x) { return pow(10.0, x); }
#define rsqrtf tessera_emu_rsqrtf
#define rsqrt tessera_emu_rsqrt
#define exp10f tessera_emu_exp10f
#define exp10 tessera_emu_exp10
/* CUDA's fast intrinsics (glibc uses some of these names internally, hence the macros). */
static inline float tessera_emu_fast_expf(float x) { return expf(x); }
static inline float tessera_emu_fast_logf(float x) { return logf(x); }
static inline float tessera_emu_fast_sinf(float x) { return sinf(x); }
static inline float tessera_emu_fast_cosf(float x) { return cosf(x); }
static inline float tessera_emu_fast_powf(float x, float y) { return powf(x, y); }
static inline float tessera_emu_fdividef(float x, float y) { return x / y; }
static inline float tessera_emu_saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
#define __expf tessera_emu_fast_expf
#define __logf tessera_emu_fast_logf
#define __sinf tessera_emu_fast_sinf
#define __cosf tessera_emu_fast_cosf
#define __powf tessera_emu_fast_powf
#define __fdividef tessera_emu_fdividef
#define __saturatef tessera_emu_saturatef

/* CUDA's min and max for every pair of arithmetic types (the usual arithmetic conversions). */
template <typename A, typename B,
          typename = typename std::enable_if<std::is_arithmetic<A>::value &&
                                             std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type min(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  return C(b) < C(a) ? C(b) : C(a);
}
template <typename A, typename B,
          typename = typename std::enable_if<std::is_arithmetic<A>::value &&
                                             std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type max(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  return C(a) < C(b) ? C(b) : C(a);
}

/* ---- half and nv_bfloat16: 16-bit storage, float arithmetic, round to nearest even ---- */
namespace tessera_emu {
inline unsigned int FloatBits(float f) {
  unsigned int x;
  memcpy(&x, &f, 4);
  return x;
}
inline float BitsFloat(unsigned int x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}
inline unsigned short FloatToHalfBits(float f) {
  unsigned int x = FloatBits(f);
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
  unsigned int ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf, or nan (kept quiet, with the top of its payload)
    return (unsigned short)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
  }
  if (ax >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {
    // Below 2^-14 the half is subnormal: adding 0.5 lines the half's ulp (2^-24) up with the
    // float's last mantissa bit, so the float addition rounds to nearest even for us.
    float shifted = BitsFloat(ax) + 0.5f;
    return (unsigned short)(sign | (FloatBits(shifted) - 0x3f000000u));
  }
  unsigned int odd = (ax >> 13) & 1u;
  ax += 0xc8000000u /* rebias the exponent: (15 - 127) << 23 */ + 0xfffu + odd;
  return (unsigned short)(sign | (ax >> 13));
}
inline float HalfBitsToFloat(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  unsigned int exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = (float)mant * 5.9604644775390625e-8f;  // mant * 2^-24
    return BitsFloat(sign | FloatBits(v));
  }
  return BitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}
inline unsigned short FloatToBF16Bits(float f) {
  unsigned int x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}
inline float BF16BitsToFloat(unsigned short b) { return BitsFloat((unsigned int)b << 16); }

struct HalfTag {
  static unsigned short Encode(float f) { return FloatToHalfBits(f); }
  static float Decode(unsigned short b) { return HalfBitsToFloat(b); }
};
struct BF16Tag {
  static unsigned short Encode(float f) { return FloatToBF16Bits(f); }
  static float Decode(unsigned short b) { return BF16BitsToFloat(b); }
};

template <typename Tag>
struct Float16 {
  unsigned short bits;
  Float16() = default;
  template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  Float16(T v) : bits(Tag::Encode(float(v))) {}
  static Float16 FromBits(unsigned short b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return Tag::Decode(bits); }
  Float16& operator+=(Float16 o) { return *this = Float16(float(*this) + float(o)); }
  Float16& operator-=(Float16 o) { return *this = Float16(float(*this) - float(o)); }
  Float16& operator*=(Float16 o) { return *this = Float16(float(*this) * float(o)); }
  Float16& operator/=(Float16 o) { return *this = Float16(float(*this) / float(o)); }
};
template <typename Tag>
inline Float16<Tag> operator+(Float16<Tag> a, Float16<Tag> b) { return Float16<Tag>(float(a) + float(b)); }
template <typename Tag>
inline Float16<Tag> operator-(Float16<Tag> a, Float16<Tag> b) { return Float16<Tag>(float(a) - float(b)); }
template <typename Tag>
inline Float16<Tag> operator*(Float16<Tag> a, Float16<Tag> b) { return Float16<Tag>(float(a) * float(b)); }
template <typename Tag>
inline Float16<Tag> operator/(Float16<Tag> a, Float16<Tag> b) { return Float16<Tag>(float(a) / float(b)); }
template <typename Tag>
inline Float16<Tag> operator-(Float16<Tag> a) { return Float16<Tag>::FromBits((unsigned short)(a.bits ^ 0x8000u)); }
template <typename Tag>
inline Float16<Tag> operator+(Float16<Tag> a) { return a; }
template <typename Tag>
inline bool operator==(Float16<Tag> a, Float16<Tag> b) { return float(a) == float(b); }
template <typename Tag>
inline bool operator!=(Float16<Tag> a, Float16<Tag> b) { return float(a) != float(b); }
template <typename Tag>
inline bool operator<(Float16<Tag> a, Float16<Tag> b) { return float(a) < float(b); }
template <typename Tag>
inline bool operator<=(Float16<Tag> a, Float16<Tag> b) { return float(a) <= float(b); }
template <typename Tag>
inline bool operator>(Float16<Tag> a, Float16<Tag> b) { return float(a) > float(b); }
template <typename Tag>
inline bool operator>=(Float16<Tag> a, Float16<Tag> b) { return float(a) >= float(b); }
}  // namespace tessera_emu

typedef ::tessera_emu::Float16<::tessera_emu::HalfTag> __half;
typedef __half half;
typedef ::tessera_emu::Float16<::tessera_emu::BF16Tag> __nv_bfloat16;
typedef __nv_bfloat16 nv_bfloat16;

static inline half __float2half(float f) { return half(f); }
static inline half __float2half_rn(float f) { return half(f); }
static inline float __half2float(half h) { return float(h); }
static inline half __int2half_rn(int i) { return half(float(i)); }
static inline nv_bfloat16 __float2bfloat16(float f) { return nv_bfloat16(f); }
static inline nv_bfloat16 __float2bfloat16_rn(float f) { return nv_bfloat16(f); }
static inline float __bfloat162float(nv_bfloat16 b) { return float(b); }
static inline unsigned short __half_as_ushort(half h) { return h.bits; }
static inline half __ushort_as_half(unsigned short b) { return half::FromBits(b); }
static inline unsigned short __bfloat16_as_ushort(nv_bfloat16 h) { return h.bits; }
static inline nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return nv_bfloat16::FromBits(b); }

/* The half-precision math of cuda_fp16.h / cuda_bf16.h, for both types: in float, rounded. */
#define TESSERA_EMU_HMATH(T)                                                             \
  static inline T hexp(T x) { return T(expf(float(x))); }                                \
  static inline T hexp2(T x) { return T(exp2f(float(x))); }                              \
  static inline T hexp10(T x) { return T(tessera_emu_exp10f(float(x))); }                \
  static inline T hlog(T x) { return T(logf(float(x))); }                                \
  static inline T hlog2(T x) { return T(log2f(float(x))); }                              \
  static inline T hlog10(T x) { return T(log10f(float(x))); }                            \
  static inline T hsqrt(T x) { return T(sqrtf(float(x))); }                              \
  static inline T hrsqrt(T x) { return T(1.0f / sqrtf(float(x))); }                      \
  static inline T hrcp(T x) { return T(1.0f / float(x)); }                               \
  static inline T hsin(T x) { return T(sinf(float(x))); }                                \
  static inline T hcos(T x) { return T(cosf(float(x))); }                                \
  static inline T hfloor(T x) { return T(floorf(float(x))); }                            \
  static inline T hceil(T x) { return T(ceilf(float(x))); }                              \
  static inline T htrunc(T x) { return T(truncf(float(x))); }                            \
  static inline T hrint(T x) { return T(rintf(float(x))); }                              \
  static inline T __habs(T x) { return T::FromBits((unsigned short)(x.bits & 0x7fffu)); } \
  static inline T __hneg(T x) { return -x; }                                             \
  static inline T __hadd(T a, T b) { return a + b; }                                     \
  static inline T __hsub(T a, T b) { return a - b; }                                     \
  static inline T __hmul(T a, T b) { return a * b; }                                     \
  static inline T __hdiv(T a, T b) { return a / b; }                                     \
  static inline T __hfma(T a, T b, T c) { return T(fmaf(float(a), float(b), float(c))); } \
  static inline T __hmin(T a, T b) { return T(fminf(float(a), float(b))); }              \
  static inline T __hmax(T a, T b) { return T(fmaxf(float(a), float(b))); }              \
  static inline bool __hisnan(T x) { return (x.bits & 0x7fffu) > (T(INFINITY).bits & 0x7fffu); } \
  static inline bool __heq(T a, T b) { return a == b; }                                  \
  static inline bool __hlt(T a, T b) { return a < b; }                                   \
  static inline bool __hgt(T a, T b) { return a > b; }
TESSERA_EMU_HMATH(half)
TESSERA_EMU_HMATH(nv_bfloat16)
#undef TESSERA_EMU_HMATH

/* ---- kernel registration: an exported trampoline per kernel, appended by the emulator ---- */
namespace tessera_emu {
template <typename... P, size_t... I>
inline void InvokeImpl(void (*f)(P...), void** args, std::index_sequence<I...>) {
  f(*static_cast<typename std::remove_reference<P>::type*>(args[I])...);
}
template <typename... P>
inline void Invoke(void (*f)(P...), void** args) {
  InvokeImpl(f, args, std::index_sequence_for<P...>{});
}
template <typename... P>
constexpr int Arity(void (*)(P...)) {
  return int(sizeof...(P));
}
}  // namespace tessera_emu
#define TESSERA_EMU_KERNEL(NAME)                                                              \
  extern "C" __attribute__((visibility("default"))) void __tessera_emu_##NAME(void** args) { \
    ::tessera_emu::Invoke(NAME, args);                                                        \
  }                                                                                           \
  extern "C" __attribute__((visibility("default"))) int __tessera_emu_nargs_##NAME() {        \
    return ::tessera_emu::Arity(NAME);                                                        \
  }

/* glibc's int64_t is long; the generated prelude declares CUDA's long long. The kernel source
 * comes after this header, so its typedefs are renamed rather than clashing. */
typedef long long tessera_emu_int64_t;
typedef unsigned long long tessera_emu_uint64_t;
#define int64_t tessera_emu_int64_t
#define uint64_t tessera_emu_uint64_t

#endif /* TESSERA_CUDA_EMU_H_ */
