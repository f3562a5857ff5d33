/* tessera/dsl/packed.h: what the packed entry point of a DSL kernel uses to check its arguments
 * (tessera's packed calling convention, tessera/runtime_abi.h). The entry point is generated
 * (CodeGenDSLLauncher); it includes this file once, after the kernel. */
#ifndef TESSERA_DSL_PACKED_H_
#define TESSERA_DSL_PACKED_H_

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "../runtime_abi.h"

/* The message of the calling thread's last failed call. */
__TESSERA_SHARED_DATA __thread char __tessera_last_error[2048];

/* Sets the last error and returns `rc`: TESSERA_RC_TYPE_ERROR, TESSERA_RC_VALUE_ERROR or 1. */
__TESSERA_SHARED int32_t __tessera_fail(int32_t rc, const char* fmt, ...);
/* What a caller passed, in the words of Python: "int", "float", "None". */
__TESSERA_SHARED const char* __tessera_arg_kind(int32_t code);
/* An array's element type as numpy names it ("float32", "bool"). */
__TESSERA_SHARED const char* __tessera_dtype_name(TesseraDLDataType t, char* buf, int len);
/* The number of elements of `t`, and whether it is C-contiguous (size-1 dimensions may have
 * any stride). */
__TESSERA_SHARED int64_t __tessera_dlt_size(const TesseraDLTensor* t, int* compact);

#if __TESSERA_SHARED_BODIES
__attribute__((visibility("default"))) const char* __tessera_get_last_error(void) {
  return __tessera_last_error;
}

__TESSERA_SHARED int32_t __tessera_fail(int32_t rc, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(__tessera_last_error, sizeof __tessera_last_error, fmt, ap);
  va_end(ap);
  __tessera_noted_count = 0;  /* the arrays noted for a call that does not run */
  return rc;
}

__TESSERA_SHARED const char* __tessera_arg_kind(int32_t code) {
  switch (code) {
    case TESSERA_ARG_INT:
    case TESSERA_ARG_UINT:
      return "int";
    case TESSERA_ARG_BOOL:
      return "bool";
    case TESSERA_ARG_FLOAT:
      return "float";
    case TESSERA_ARG_NULL:
      return "None";
    case TESSERA_ARG_DLTENSOR:
    case TESSERA_ARG_DLTENSOR_READONLY:
      return "ndarray";
    default:
      return "handle";
  }
}

__TESSERA_SHARED const char* __tessera_dtype_name(TesseraDLDataType t, char* buf, int len) {
  const char* base = t.code == TESSERA_DL_INT     ? "int"
                     : t.code == TESSERA_DL_UINT  ? "uint"
                     : t.code == TESSERA_DL_FLOAT ? "float"
                     : t.code == TESSERA_DL_BFLOAT ? "bfloat"
                     : t.code == TESSERA_DL_BOOL  ? "bool"
                                                  : "unknown";
  if (t.code == TESSERA_DL_BOOL) {
    snprintf(buf, (size_t)len, "bool");
  } else if (t.lanes > 1) {
    snprintf(buf, (size_t)len, "%s%dx%d", base, (int)t.bits, (int)t.lanes);
  } else {
    snprintf(buf, (size_t)len, "%s%d", base, (int)t.bits);
  }
  return buf;
}

__TESSERA_SHARED int64_t __tessera_dlt_size(const TesseraDLTensor* t, int* compact) {
  int64_t size = 1, expect = 1;
  *compact = 1;
  for (int32_t k = t->ndim; k-- > 0;) {
    if (t->strides != NULL && t->shape[k] != 1 && t->strides[k] != expect) *compact = 0;
    expect *= t->shape[k];
    size *= t->shape[k];
  }
  if (size == 0) *compact = 1;
  /* Called once per array argument by the entry point: the call's DMAs are checked against it. */
  __tessera_note_array((const char*)t->data + t->byte_offset,
                       size * (int64_t)((t->dtype.bits * t->dtype.lanes + 7) / 8));
  return size;
}
#endif /* __TESSERA_SHARED_BODIES */

#endif /* TESSERA_DSL_PACKED_H_ */
