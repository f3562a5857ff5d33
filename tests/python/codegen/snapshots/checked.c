#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_checked(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!(num_args == 2)) {
    tessera_set_error("%s", "checked: num_args should be 2");
    return -1;
  }
  if (!((arg_type_ids[0] == 7) || ((arg_type_ids[0] == 4) || (arg_type_ids[0] == 3)))) {
    tessera_set_error("%s", "checked: Expect arg[0] to be pointer");
    return -1;
  }
  void* A = ((TesseraValue*)args)[0].v_handle;
  if (!((arg_type_ids[1] == 0) || (arg_type_ids[1] == 1))) {
    tessera_set_error("%s", "checked: Expect arg[1] to be int");
    return -1;
  }
  int32_t n = ((int32_t)((TesseraValue*)args)[1].v_int64);
  if (!(!(A == NULL))) {
    tessera_set_error("%s", "checked.A is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(A)->ndim == 1)) {
    tessera_set_error("%s", "checked.A.ndim is expected to equal 1");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(A)->dtype.code) == 0) && (((int32_t)TESSERA_DLT(A)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(A)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "checked.A.dtype is expected to be int32");
    return -1;
  }
  if (!(((int64_t)4) == TESSERA_DLT_SHAPE(A, 0))) {
    tessera_set_error("Argument checked.A.shape[0] has an unsatisfied constraint: 4 == A.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(A, 0));
    return -1;
  }
  if (!((TESSERA_DLT_SHAPE(A, 0) == 0LL) || ((((void*)TESSERA_DLT(A)->strides) == NULL) || ((TESSERA_DLT_SHAPE(A, 0) == 1LL) || (TESSERA_DLT_STRIDE(A, 0) == 1LL))))) {
    tessera_set_error("%s", "checked.A.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(A)->device.device_type == 1)) {
    tessera_set_error("Argument checked.A.device_type has an unsatisfied constraint: 1 == A.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(A)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(A)->data == NULL)) || (TESSERA_DLT_SHAPE(A, 0) == 0LL))) {
    tessera_set_error("%s", "checked.A is expected to have non-NULL data pointer");
    return -1;
  }
  int32_t* A_1 = ((void*)((char*)TESSERA_DLT(A)->data + TESSERA_DLT(A)->byte_offset));
  if (!(n < 4)) {
    tessera_set_error("%s", "n is \"out\" of\trange\\\n (4 elements)");
    return -1;
  }
  A_1[n] = n;
  return tessera_status();
}
