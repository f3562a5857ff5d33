#include <compass/dsl.h>

__kernel void multi_width(__global half* a, __global half* b, __global half* o, __global float* q, __global int* c, __global int* s);

__kernel void multi_width(__global half* a, __global half* b, __global half* o, __global float* q, __global int* c, __global int* s) {
  half16 x_0 = __vload((__global half16*)a, ALL_TRUE_h);
  half16 x_1 = __vload((__global half16*)(a + 16), ALL_TRUE_h);
  half16 y_0 = __vload((__global half16*)b, ALL_TRUE_h);
  half16 y_1 = __vload((__global half16*)(b + 16), ALL_TRUE_h);
  __vstore(__vminh(x_0, x_1), (__global half16*)o, ALL_TRUE_h);
  __vstore(__vminh(y_0, y_1), (__global half16*)(o + 16), ALL_TRUE_h);
  __vstore(__vqdot(x_0, y_0, ALL_TRUE_h), (__global float8*)q, ALL_TRUE_w);
  __vstore(__vqdot(x_1, y_1, __vmov_h(0x05555555)), (__global float8*)(q + 8), ALL_TRUE_w);
  __vstore((__vrpadd(__vload((__global int8*)c, ALL_TRUE_w), ALL_TRUE_w) + __vrpadd(__vload((__global int8*)(c + 8), ALL_TRUE_w), ALL_TRUE_w)), (__global int8*)s, ALL_TRUE_w);
  __vstore((int8)__vbcast(0), (__global int8*)(s + 8), ALL_TRUE_w);
  barrier(CLK_LOCAL_MEM_FENCE);
}


/* Packed entry point (tessera/runtime_abi.h): checks every argument, then runs multi_width on every TEC. */
#include "tessera/dsl/packed.h"

typedef struct {
  __global half* a0;
  __global half* a1;
  __global half* a2;
  __global float* a3;
  __global int* a4;
  __global int* a5;
} __tessera_args_t;

static void __tessera_tec_main(void* data) {
  __tessera_args_t* v = (__tessera_args_t*)data;
  multi_width(v->a0, v->a1, v->a2, v->a3, v->a4, v->a5);
}

__attribute__((visibility("default")))
int32_t __tessera_packed_multi_width(TesseraValue* args, int32_t* codes, int32_t num_args, TesseraValue* ret,
    int32_t* ret_code) {
  __tessera_args_t v;
  char dtype[32];
  (void)args; (void)codes; (void)ret; (void)dtype;
  if (num_args != 6) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "multi_width() takes 6 arguments (a, b, o, q, c, s) but %d were given", (int)num_args);
  }
  /* a */
  if (codes[0] == TESSERA_ARG_NULL || ((codes[0] == TESSERA_ARG_INT || codes[0] == TESSERA_ARG_UINT) && args[0].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of multi_width() must be a numpy array, got %s: the kernel accesses 32 elements through it", codes[0] == TESSERA_ARG_NULL ? "None" : "0");
    v.a0 = NULL;
  } else if (codes[0] != TESSERA_ARG_DLTENSOR && codes[0] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of multi_width() must be a numpy array, got %s", __tessera_arg_kind(codes[0]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[0].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 16 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of multi_width() must have dtype float16, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of multi_width() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of multi_width() must be a C-contiguous array");
    }
    if (size < 32) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of multi_width() has %lld elements but the kernel accesses 32", (long long)size);
    }
    v.a0 = (__global half*)((char*)t->data + t->byte_offset);
  }
  /* b */
  if (codes[1] == TESSERA_ARG_NULL || ((codes[1] == TESSERA_ARG_INT || codes[1] == TESSERA_ARG_UINT) && args[1].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of multi_width() must be a numpy array, got %s: the kernel accesses 32 elements through it", codes[1] == TESSERA_ARG_NULL ? "None" : "0");
    v.a1 = NULL;
  } else if (codes[1] != TESSERA_ARG_DLTENSOR && codes[1] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of multi_width() must be a numpy array, got %s", __tessera_arg_kind(codes[1]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[1].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 16 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of multi_width() must have dtype float16, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of multi_width() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of multi_width() must be a C-contiguous array");
    }
    if (size < 32) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of multi_width() has %lld elements but the kernel accesses 32", (long long)size);
    }
    v.a1 = (__global half*)((char*)t->data + t->byte_offset);
  }
  /* o */
  if (codes[2] == TESSERA_ARG_NULL || ((codes[2] == TESSERA_ARG_INT || codes[2] == TESSERA_ARG_UINT) && args[2].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of multi_width() must be a numpy array, got %s: the kernel accesses 32 elements through it", codes[2] == TESSERA_ARG_NULL ? "None" : "0");
    v.a2 = NULL;
  } else if (codes[2] != TESSERA_ARG_DLTENSOR && codes[2] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of multi_width() must be a numpy array, got %s", __tessera_arg_kind(codes[2]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[2].v_handle;
    int compact;
    int64_t size;
    if (codes[2] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of multi_width() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 16 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'o' of multi_width() must have dtype float16, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'o' of multi_width() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'o' of multi_width() must be a C-contiguous array");
    }
    if (size < 32) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'o' of multi_width() has %lld elements but the kernel accesses 32", (long long)size);
    }
    v.a2 = (__global half*)((char*)t->data + t->byte_offset);
  }
  /* q */
  if (codes[3] == TESSERA_ARG_NULL || ((codes[3] == TESSERA_ARG_INT || codes[3] == TESSERA_ARG_UINT) && args[3].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'q' of multi_width() must be a numpy array, got %s: the kernel accesses 16 elements through it", codes[3] == TESSERA_ARG_NULL ? "None" : "0");
    v.a3 = NULL;
  } else if (codes[3] != TESSERA_ARG_DLTENSOR && codes[3] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'q' of multi_width() must be a numpy array, got %s", __tessera_arg_kind(codes[3]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[3].v_handle;
    int compact;
    int64_t size;
    if (codes[3] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'q' of multi_width() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_FLOAT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'q' of multi_width() must have dtype float32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'q' of multi_width() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'q' of multi_width() must be a C-contiguous array");
    }
    if (size < 16) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'q' of multi_width() has %lld elements but the kernel accesses 16", (long long)size);
    }
    v.a3 = (__global float*)((char*)t->data + t->byte_offset);
  }
  /* c */
  if (codes[4] == TESSERA_ARG_NULL || ((codes[4] == TESSERA_ARG_INT || codes[4] == TESSERA_ARG_UINT) && args[4].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'c' of multi_width() must be a numpy array, got %s: the kernel accesses 16 elements through it", codes[4] == TESSERA_ARG_NULL ? "None" : "0");
    v.a4 = NULL;
  } else if (codes[4] != TESSERA_ARG_DLTENSOR && codes[4] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'c' of multi_width() must be a numpy array, got %s", __tessera_arg_kind(codes[4]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[4].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'c' of multi_width() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'c' of multi_width() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'c' of multi_width() must be a C-contiguous array");
    }
    if (size < 16) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'c' of multi_width() has %lld elements but the kernel accesses 16", (long long)size);
    }
    v.a4 = (__global int*)((char*)t->data + t->byte_offset);
  }
  /* s */
  if (codes[5] == TESSERA_ARG_NULL || ((codes[5] == TESSERA_ARG_INT || codes[5] == TESSERA_ARG_UINT) && args[5].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 's' of multi_width() must be a numpy array, got %s: the kernel accesses 16 elements through it", codes[5] == TESSERA_ARG_NULL ? "None" : "0");
    v.a5 = NULL;
  } else if (codes[5] != TESSERA_ARG_DLTENSOR && codes[5] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 's' of multi_width() must be a numpy array, got %s", __tessera_arg_kind(codes[5]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[5].v_handle;
    int compact;
    int64_t size;
    if (codes[5] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 's' of multi_width() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 's' of multi_width() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 's' of multi_width() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 's' of multi_width() must be a C-contiguous array");
    }
    if (size < 16) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 's' of multi_width() has %lld elements but the kernel accesses 16", (long long)size);
    }
    v.a5 = (__global int*)((char*)t->data + t->byte_offset);
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
