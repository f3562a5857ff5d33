#include <compass/dsl.h>

__kernel void calls_subroutine(__global int* a, __global int* b);
void calls_subroutine_add_one(__global int* a, __global int* b);

__kernel void calls_subroutine(__global int* a, __global int* b) {
  calls_subroutine_add_one(a, b);
  barrier(CLK_LOCAL_MEM_FENCE);
}

void calls_subroutine_add_one(__global int* a, __global int* b) {
  b[0] = (a[0] + 1);
}


/* Packed entry point (tessera/runtime_abi.h): checks every argument, then runs calls_subroutine on every TEC. */
#include "tessera/dsl/packed.h"

typedef struct {
  __global int* a0;
  __global int* a1;
} __tessera_args_t;

static void __tessera_tec_main(void* data) {
  __tessera_args_t* v = (__tessera_args_t*)data;
  calls_subroutine(v->a0, v->a1);
}

__attribute__((visibility("default")))
int32_t __tessera_packed_calls_subroutine(TesseraValue* args, int32_t* codes, int32_t num_args, TesseraValue* ret,
    int32_t* ret_code) {
  __tessera_args_t v;
  char dtype[32];
  (void)args; (void)codes; (void)ret; (void)dtype;
  if (num_args != 2) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "calls_subroutine() takes 2 arguments (a, b) but %d were given", (int)num_args);
  }
  /* a */
  if (codes[0] == TESSERA_ARG_NULL || ((codes[0] == TESSERA_ARG_INT || codes[0] == TESSERA_ARG_UINT) && args[0].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of calls_subroutine() must be a numpy array, got %s: the kernel accesses 1 elements through it", codes[0] == TESSERA_ARG_NULL ? "None" : "0");
    v.a0 = NULL;
  } else if (codes[0] != TESSERA_ARG_DLTENSOR && codes[0] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of calls_subroutine() must be a numpy array, got %s", __tessera_arg_kind(codes[0]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[0].v_handle;
    int compact;
    int64_t size;
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'a' of calls_subroutine() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of calls_subroutine() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of calls_subroutine() must be a C-contiguous array");
    }
    if (size < 1) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'a' of calls_subroutine() has %lld elements but the kernel accesses 1", (long long)size);
    }
    v.a0 = (__global int*)((char*)t->data + t->byte_offset);
  }
  /* b */
  if (codes[1] == TESSERA_ARG_NULL || ((codes[1] == TESSERA_ARG_INT || codes[1] == TESSERA_ARG_UINT) && args[1].v_int64 == 0)) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of calls_subroutine() must be a numpy array, got %s: the kernel accesses 1 elements through it", codes[1] == TESSERA_ARG_NULL ? "None" : "0");
    v.a1 = NULL;
  } else if (codes[1] != TESSERA_ARG_DLTENSOR && codes[1] != TESSERA_ARG_DLTENSOR_READONLY) {
    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of calls_subroutine() must be a numpy array, got %s", __tessera_arg_kind(codes[1]));
  } else {
    const TesseraDLTensor* t = (const TesseraDLTensor*)args[1].v_handle;
    int compact;
    int64_t size;
    if (codes[1] == TESSERA_ARG_DLTENSOR_READONLY) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of calls_subroutine() is a read-only array, but the kernel writes through it; pass a writable one (e.g. a copy)");
    }
    if (t->dtype.code != TESSERA_DL_INT || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      return __tessera_fail(TESSERA_RC_TYPE_ERROR, "argument 'b' of calls_subroutine() must have dtype int32, got %s", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype));
    }
    if (t->device.device_type != TESSERA_DEVICE_CPU) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of calls_subroutine() must be a host (CPU) array");
    }
    size = __tessera_dlt_size(t, &compact);
    if (!compact) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of calls_subroutine() must be a C-contiguous array");
    }
    if (size < 1) {
      return __tessera_fail(TESSERA_RC_VALUE_ERROR, "argument 'b' of calls_subroutine() has %lld elements but the kernel accesses 1", (long long)size);
    }
    v.a1 = (__global int*)((char*)t->data + t->byte_offset);
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
