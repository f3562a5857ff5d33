#include <compass/dsl.h>

__kernel void scalar_math(__global float* a, __global half* h, __global float* o, __global int* n);

__kernel void scalar_math(__global float* a, __global half* h, __global float* o, __global int* n) {
  float8 v = __vload((__global float8*)a, ALL_TRUE_w);
  __vstore(__vsel(__vexp(v), __vabs(v, 0), __vclt((float8)__vbcast(0x1p+0f/*1.000000e+00*/), v, ALL_TRUE_w)), (__global float8*)o, ALL_TRUE_w);
  o[8] = (float)(__vget_lane(__vexp((float8)__vbcast(a[0])), 0) + __vget_lane(__vabs((float8)__vbcast(a[1]), 0), 0));
  __vstore(__vcvt_float8(__vload((__global half16*)h, ALL_TRUE_h), 0, 1), (__global float8*)(o + 16), ALL_TRUE_w);
  __vstore(__vcvt_float8(__vload((__global half16*)h, ALL_TRUE_h), 8, 1), (__global float8*)(o + 24), ALL_TRUE_w);
  n[0] = __vget_lane(__vclz((int8)__vbcast(n[1])), 0);
  barrier(CLK_LOCAL_MEM_FENCE);
}


/* Packed entry point (tessera/runtime_abi.h): checks every argument, then runs scalar_math on every TEC. */
#include "tessera/dsl/packed.h"

typedef struct {
  __global float* a0;
  __global half* a1;
  __global float* a2;
  __global int* a3;
} __tessera_args_t;

static void __tessera_tec_main(void* data) {
  __tessera_args_t* v = (__tessera_args_t*)data;
  scalar_math(v->a0, v->a1, v->a2, v->a3);
}

__attribute__((visibility("default")))
int32_t __tessera_packed_scalar_math(TesseraValue* args, int32_t* codes, int32_t num_args, TesseraValue* ret,
    int32_t* ret_code) {
  __tessera_args_t v;
  char dtype[32];
  (void)args; (void)codes; (void)ret; (void)dtype;
  if (num_args != 4) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "scalar_math() takes 4 arguments (a, h, o, n) but %d were given", (int)num_args);
  }
  /* a */
  if (codes[0] == TESSERA_ARG_NULL || ((codes[0] == TESSERA_ARG_INT || codes[0] == TESSERA_ARG_UINT) && args[0].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of scalar_math() must be a numpy array, got %s: the kernel accesses 8 elements through it", codes[0] == TESSERA_ARG_NULL ? "None" : "0");
    v.a0 = NULL;
  } else if (codes[0] != TESSERA_ARG_DLTENSOR && codes[0] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of scalar_math() must be a numpy array, got %s", __tessera_arg_kind(codes[0]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[0].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of scalar_math() must have dtype float32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of scalar_math() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of scalar_math() must be a C-contiguous array");
    }
    if (size < 8) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of scalar_math() has %lld elements but the kernel accesses 8", (long long)size);
    }
    v.a0 = (__global float*)((char*)t->data + t->byte_offset);
  }
  /* h */
  if (codes[1] == TESSERA_ARG_NULL || ((codes[1] == TESSERA_ARG_INT || codes[1] == TESSERA_ARG_UINT) && args[1].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'h' of scalar_math() must be a numpy array, got %s: the kernel accesses 16 elements through it", codes[1] == TESSERA_ARG_NULL ? "None" : "0");
    v.a1 = NULL;
  } else if (codes[1] != TESSERA_ARG_DLTENSOR && codes[1] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'h' of scalar_math() must be a numpy array, got %s", __tessera_arg_kind(codes[1]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[1].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 16 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'h' of scalar_math() must have dtype float16, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'h' of scalar_math() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'h' of scalar_math() must be a C-contiguous array");
    }
    if (size < 16) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'h' of scalar_math() has %lld elements but the kernel accesses 16", (long long)size);
    }
    v.a1 = (__global half*)((char*)t->data + t->byte_offset);
  }
  /* o */
  if (codes[2] == TESSERA_ARG_NULL || ((codes[2] == TESSERA_ARG_INT || codes[2] == TESSERA_ARG_UINT) && args[2].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of scalar_math() must be a numpy array, got %s: the kernel accesses 32 elements through it", codes[2] == TESSERA_ARG_NULL ? "None" : "0");
    v.a2 = NULL;
  } else if (codes[2] != TESSERA_ARG_DLTENSOR && codes[2] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of scalar_math() must be a numpy array, got %s", __tessera_arg_kind(codes[2]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[2].v_handle;
    int compact;
    int64_t size;
    if (codes[2] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of scalar_math() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of scalar_math() must have dtype float32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'o' of scalar_math() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'o' of scalar_math() must be a C-contiguous array");
    }
    if (size < 32) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'o' of scalar_math() has %lld elements but the kernel accesses 32", (long long)size);
    }
    v.a2 = (__global float*)((char*)t->data + t->byte_offset);
  }
  /* n */
  if (codes[3] == TESSERA_ARG_NULL || ((codes[3] == TESSERA_ARG_INT || codes[3] == TESSERA_ARG_UINT) && args[3].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'n' of scalar_math() must be a numpy array, got %s: the kernel accesses 2 elements through it", codes[3] == TESSERA_ARG_NULL ? "None" : "0");
    v.a3 = NULL;
  } else if (codes[3] != TESSERA_ARG_DLTENSOR && codes[3] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'n' of scalar_math() must be a numpy array, got %s", __tessera_arg_kind(codes[3]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[3].v_handle;
    int compact;
    int64_t size;
    if (codes[3] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'n' of scalar_math() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'n' of scalar_math() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'n' of scalar_math() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'n' of scalar_math() must be a C-contiguous array");
    }
    if (size < 2) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'n' of scalar_math() has %lld elements but the kernel accesses 2", (long long)size);
    }
    v.a3 = (__global int*)((char*)t->data + t->byte_offset);
  }
  if (__tessera_run_tecs(__tessera_tec_main, &v, __tessera_last_error,
                        (int)sizeof __tessera_last_error) != 0) {
    return 1;
  }
  if (ret_code != NULL) *ret_code = TESSERA_ARG_NULL;
  return 0;
}

/* Profiling records of S.perf_tick_begin/end (Executor.profile). */
__attribute__((visibility("default")))
int32_t __tessera_perf_read(int64_t* out, int32_t cap, int64_t* dropped) {
  return __tessera_perf_collect(out, cap, dropped);
}
__attribute__((visibility("default")))
void __tessera_perf_clear(void) { __tessera_perf_reset(); }
