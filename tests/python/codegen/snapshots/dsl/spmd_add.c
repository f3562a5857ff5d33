#include <compass/dsl.h>

__kernel void spmd_add(__global int* a, __global int* b, __global int* c, int n);

__kernel void spmd_add(__global int* a, __global int* b, __global int* c, int n) {
  int per_tec = (((n + get_local_size(0)) - 1) / get_local_size(0));
  int i = (get_local_id(0) * per_tec);
  int end = min((i + per_tec), n);
  while ((i < end)) {
    bool8 m = __vtail_mask((end - i), 8);
    __vstore(__vadds(__vload((__global int8*)(a + i), m), __vload((__global int8*)(b + i), m)), (__global int8*)(c + i), m);
    i = (i + 8);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}


/* Packed entry point (tessera/runtime_abi.h): checks every argument, then runs spmd_add on every TEC. */
#include "tessera/dsl/packed.h"

typedef struct {
  __global int* a0;
  __global int* a1;
  __global int* a2;
  int a3;
} __tessera_args_t;

static void __tessera_tec_main(void* data) {
  __tessera_args_t* v = (__tessera_args_t*)data;
  spmd_add(v->a0, v->a1, v->a2, v->a3);
}

__attribute__((visibility("default")))
int32_t __tessera_packed_spmd_add(TesseraValue* args, int32_t* codes, int32_t num_args, TesseraValue* ret,
    int32_t* ret_code) {
  __tessera_args_t v;
  char dtype[32];
  (void)args; (void)codes; (void)ret; (void)dtype;
  if (num_args != 4) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "spmd_add() takes 4 arguments (a, b, c, n) but %d were given", (int)num_args);
  }
  /* a */
  if (codes[0] == TESSERA_ARG_NULL || ((codes[0] == TESSERA_ARG_INT || codes[0] == TESSERA_ARG_UINT) && args[0].v_int64 == 0)) {
    v.a0 = NULL;
  } else if (codes[0] != TESSERA_ARG_DLTENSOR && codes[0] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of spmd_add() must be a numpy array, got %s", __tessera_arg_kind(codes[0]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[0].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of spmd_add() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of spmd_add() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of spmd_add() must be a C-contiguous array");
    }
    (void)size;
    v.a0 = (__global int*)((char*)t->data + t->byte_offset);
  }
  /* b */
  if (codes[1] == TESSERA_ARG_NULL || ((codes[1] == TESSERA_ARG_INT || codes[1] == TESSERA_ARG_UINT) && args[1].v_int64 == 0)) {
    v.a1 = NULL;
  } else if (codes[1] != TESSERA_ARG_DLTENSOR && codes[1] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of spmd_add() must be a numpy array, got %s", __tessera_arg_kind(codes[1]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[1].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of spmd_add() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of spmd_add() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of spmd_add() must be a C-contiguous array");
    }
    (void)size;
    v.a1 = (__global int*)((char*)t->data + t->byte_offset);
  }
  /* c */
  if (codes[2] == TESSERA_ARG_NULL || ((codes[2] == TESSERA_ARG_INT || codes[2] == TESSERA_ARG_UINT) && args[2].v_int64 == 0)) {
    v.a2 = NULL;
  } else if (codes[2] != TESSERA_ARG_DLTENSOR && codes[2] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'c' of spmd_add() must be a numpy array, got %s", __tessera_arg_kind(codes[2]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[2].v_handle;
    int compact;
    int64_t size;
    if (codes[2] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'c' of spmd_add() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'c' of spmd_add() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'c' of spmd_add() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'c' of spmd_add() must be a C-contiguous array");
    }
    (void)size;
    v.a2 = (__global int*)((char*)t->data + t->byte_offset);
  }
  /* n */
  if (!(codes[3] == TESSERA_ARG_INT || codes[3] == TESSERA_ARG_UINT || codes[3] == TESSERA_ARG_BOOL)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'n' of spmd_add() must be an integer (int32), got %s", __tessera_arg_kind(codes[3]));
  }
  v.a3 = (int)args[3].v_int64;
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
