#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_add(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!(num_args == 3)) {
    tessera_set_error("%s", "add: num_args should be 3");
    return -1;
  }
  if (!((arg_type_ids[0] == 7) || ((arg_type_ids[0] == 4) || (arg_type_ids[0] == 3)))) {
    tessera_set_error("%s", "add: Expect arg[0] to be pointer");
    return -1;
  }
  void* A = ((TesseraValue*)args)[0].v_handle;
  if (!((arg_type_ids[1] == 7) || ((arg_type_ids[1] == 4) || (arg_type_ids[1] == 3)))) {
    tessera_set_error("%s", "add: Expect arg[1] to be pointer");
    return -1;
  }
  void* B = ((TesseraValue*)args)[1].v_handle;
  if (!((arg_type_ids[2] == 7) || ((arg_type_ids[2] == 4) || (arg_type_ids[2] == 3)))) {
    tessera_set_error("%s", "add: Expect arg[2] to be pointer");
    return -1;
  }
  void* C = ((TesseraValue*)args)[2].v_handle;
  if (!(!(A == NULL))) {
    tessera_set_error("%s", "add.A is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(A)->ndim == 1)) {
    tessera_set_error("%s", "add.A.ndim is expected to equal 1");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(A)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(A)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(A)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "add.A.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)16) == TESSERA_DLT_SHAPE(A, 0))) {
    tessera_set_error("Argument add.A.shape[0] has an unsatisfied constraint: 16 == A.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(A, 0));
    return -1;
  }
  if (!((TESSERA_DLT_SHAPE(A, 0) == 0LL) || ((((void*)TESSERA_DLT(A)->strides) == NULL) || ((TESSERA_DLT_SHAPE(A, 0) == 1LL) || (TESSERA_DLT_STRIDE(A, 0) == 1LL))))) {
    tessera_set_error("%s", "add.A.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(A)->device.device_type == 1)) {
    tessera_set_error("Argument add.A.device_type has an unsatisfied constraint: 1 == A.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(A)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(A)->data == NULL)) || (TESSERA_DLT_SHAPE(A, 0) == 0LL))) {
    tessera_set_error("%s", "add.A is expected to have non-NULL data pointer");
    return -1;
  }
  float* A_1 = ((void*)((char*)TESSERA_DLT(A)->data + TESSERA_DLT(A)->byte_offset));
  if (!(!(B == NULL))) {
    tessera_set_error("%s", "add.B is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(B)->ndim == 1)) {
    tessera_set_error("%s", "add.B.ndim is expected to equal 1");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(B)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(B)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(B)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "add.B.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)16) == TESSERA_DLT_SHAPE(B, 0))) {
    tessera_set_error("Argument add.B.shape[0] has an unsatisfied constraint: 16 == B.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(B, 0));
    return -1;
  }
  if (!((TESSERA_DLT_SHAPE(B, 0) == 0LL) || ((((void*)TESSERA_DLT(B)->strides) == NULL) || ((TESSERA_DLT_SHAPE(B, 0) == 1LL) || (TESSERA_DLT_STRIDE(B, 0) == 1LL))))) {
    tessera_set_error("%s", "add.B.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(B)->device.device_type == 1)) {
    tessera_set_error("Argument add.B.device_type has an unsatisfied constraint: 1 == B.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(B)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(B)->data == NULL)) || (TESSERA_DLT_SHAPE(B, 0) == 0LL))) {
    tessera_set_error("%s", "add.B is expected to have non-NULL data pointer");
    return -1;
  }
  float* B_1 = ((void*)((char*)TESSERA_DLT(B)->data + TESSERA_DLT(B)->byte_offset));
  if (!(!(C == NULL))) {
    tessera_set_error("%s", "add.C is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(C)->ndim == 1)) {
    tessera_set_error("%s", "add.C.ndim is expected to equal 1");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(C)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(C)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(C)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "add.C.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)16) == TESSERA_DLT_SHAPE(C, 0))) {
    tessera_set_error("Argument add.C.shape[0] has an unsatisfied constraint: 16 == C.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(C, 0));
    return -1;
  }
  if (!((TESSERA_DLT_SHAPE(C, 0) == 0LL) || ((((void*)TESSERA_DLT(C)->strides) == NULL) || ((TESSERA_DLT_SHAPE(C, 0) == 1LL) || (TESSERA_DLT_STRIDE(C, 0) == 1LL))))) {
    tessera_set_error("%s", "add.C.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(C)->device.device_type == 1)) {
    tessera_set_error("Argument add.C.device_type has an unsatisfied constraint: 1 == C.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(C)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(C)->data == NULL)) || (TESSERA_DLT_SHAPE(C, 0) == 0LL))) {
    tessera_set_error("%s", "add.C is expected to have non-NULL data pointer");
    return -1;
  }
  float* C_1 = ((void*)((char*)TESSERA_DLT(C)->data + TESSERA_DLT(C)->byte_offset));
  for (int32_t i = 0; i < 16; ++i) {
    C_1[i] = (A_1[i] + B_1[i]);
  }
  return tessera_status();
}
