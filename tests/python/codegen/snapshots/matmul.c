#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_matmul(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!(num_args == 3)) {
    tessera_set_error("%s", "matmul: num_args should be 3");
    return -1;
  }
  if (!((arg_type_ids[0] == 7) || ((arg_type_ids[0] == 4) || (arg_type_ids[0] == 3)))) {
    tessera_set_error("%s", "matmul: Expect arg[0] to be pointer");
    return -1;
  }
  void* var_A = ((TesseraValue*)args)[0].v_handle;
  if (!((arg_type_ids[1] == 7) || ((arg_type_ids[1] == 4) || (arg_type_ids[1] == 3)))) {
    tessera_set_error("%s", "matmul: Expect arg[1] to be pointer");
    return -1;
  }
  void* var_B = ((TesseraValue*)args)[1].v_handle;
  if (!((arg_type_ids[2] == 7) || ((arg_type_ids[2] == 4) || (arg_type_ids[2] == 3)))) {
    tessera_set_error("%s", "matmul: Expect arg[2] to be pointer");
    return -1;
  }
  void* var_C = ((TesseraValue*)args)[2].v_handle;
  if (!(!(var_A == NULL))) {
    tessera_set_error("%s", "matmul.var_A is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(var_A)->ndim == 2)) {
    tessera_set_error("%s", "matmul.var_A.ndim is expected to equal 2");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(var_A)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(var_A)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(var_A)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "matmul.var_A.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(var_A, 0))) {
    tessera_set_error("Argument matmul.var_A.shape[0] has an unsatisfied constraint: 8 == var_A.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(var_A, 0));
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(var_A, 1))) {
    tessera_set_error("Argument matmul.var_A.shape[1] has an unsatisfied constraint: 8 == var_A.shape[1] (got %lld)", (long long)TESSERA_DLT_SHAPE(var_A, 1));
    return -1;
  }
  if (!(((TESSERA_DLT_SHAPE(var_A, 0) == 0LL) || (TESSERA_DLT_SHAPE(var_A, 1) == 0LL)) || ((((void*)TESSERA_DLT(var_A)->strides) == NULL) || (((TESSERA_DLT_SHAPE(var_A, 0) == 1LL) || (TESSERA_DLT_STRIDE(var_A, 0) == (1LL * TESSERA_DLT_SHAPE(var_A, 1)))) && ((TESSERA_DLT_SHAPE(var_A, 1) == 1LL) || (TESSERA_DLT_STRIDE(var_A, 1) == 1LL)))))) {
    tessera_set_error("%s", "matmul.var_A.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(var_A)->device.device_type == 1)) {
    tessera_set_error("Argument matmul.var_A.device_type has an unsatisfied constraint: 1 == var_A.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(var_A)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(var_A)->data == NULL)) || ((TESSERA_DLT_SHAPE(var_A, 0) == 0LL) || (TESSERA_DLT_SHAPE(var_A, 1) == 0LL)))) {
    tessera_set_error("%s", "matmul.var_A is expected to have non-NULL data pointer");
    return -1;
  }
  float* restrict A = ((void*)((char*)TESSERA_DLT(var_A)->data + TESSERA_DLT(var_A)->byte_offset));
  if (!(!(var_B == NULL))) {
    tessera_set_error("%s", "matmul.var_B is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(var_B)->ndim == 2)) {
    tessera_set_error("%s", "matmul.var_B.ndim is expected to equal 2");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(var_B)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(var_B)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(var_B)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "matmul.var_B.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(var_B, 0))) {
    tessera_set_error("Argument matmul.var_B.shape[0] has an unsatisfied constraint: 8 == var_B.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(var_B, 0));
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(var_B, 1))) {
    tessera_set_error("Argument matmul.var_B.shape[1] has an unsatisfied constraint: 8 == var_B.shape[1] (got %lld)", (long long)TESSERA_DLT_SHAPE(var_B, 1));
    return -1;
  }
  if (!(((TESSERA_DLT_SHAPE(var_B, 0) == 0LL) || (TESSERA_DLT_SHAPE(var_B, 1) == 0LL)) || ((((void*)TESSERA_DLT(var_B)->strides) == NULL) || (((TESSERA_DLT_SHAPE(var_B, 0) == 1LL) || (TESSERA_DLT_STRIDE(var_B, 0) == (1LL * TESSERA_DLT_SHAPE(var_B, 1)))) && ((TESSERA_DLT_SHAPE(var_B, 1) == 1LL) || (TESSERA_DLT_STRIDE(var_B, 1) == 1LL)))))) {
    tessera_set_error("%s", "matmul.var_B.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(var_B)->device.device_type == 1)) {
    tessera_set_error("Argument matmul.var_B.device_type has an unsatisfied constraint: 1 == var_B.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(var_B)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(var_B)->data == NULL)) || ((TESSERA_DLT_SHAPE(var_B, 0) == 0LL) || (TESSERA_DLT_SHAPE(var_B, 1) == 0LL)))) {
    tessera_set_error("%s", "matmul.var_B is expected to have non-NULL data pointer");
    return -1;
  }
  float* restrict B = ((void*)((char*)TESSERA_DLT(var_B)->data + TESSERA_DLT(var_B)->byte_offset));
  if (!(!(var_C == NULL))) {
    tessera_set_error("%s", "matmul.var_C is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(var_C)->ndim == 2)) {
    tessera_set_error("%s", "matmul.var_C.ndim is expected to equal 2");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(var_C)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(var_C)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(var_C)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "matmul.var_C.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(var_C, 0))) {
    tessera_set_error("Argument matmul.var_C.shape[0] has an unsatisfied constraint: 8 == var_C.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(var_C, 0));
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(var_C, 1))) {
    tessera_set_error("Argument matmul.var_C.shape[1] has an unsatisfied constraint: 8 == var_C.shape[1] (got %lld)", (long long)TESSERA_DLT_SHAPE(var_C, 1));
    return -1;
  }
  if (!(((TESSERA_DLT_SHAPE(var_C, 0) == 0LL) || (TESSERA_DLT_SHAPE(var_C, 1) == 0LL)) || ((((void*)TESSERA_DLT(var_C)->strides) == NULL) || (((TESSERA_DLT_SHAPE(var_C, 0) == 1LL) || (TESSERA_DLT_STRIDE(var_C, 0) == (1LL * TESSERA_DLT_SHAPE(var_C, 1)))) && ((TESSERA_DLT_SHAPE(var_C, 1) == 1LL) || (TESSERA_DLT_STRIDE(var_C, 1) == 1LL)))))) {
    tessera_set_error("%s", "matmul.var_C.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(var_C)->device.device_type == 1)) {
    tessera_set_error("Argument matmul.var_C.device_type has an unsatisfied constraint: 1 == var_C.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(var_C)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(var_C)->data == NULL)) || ((TESSERA_DLT_SHAPE(var_C, 0) == 0LL) || (TESSERA_DLT_SHAPE(var_C, 1) == 0LL)))) {
    tessera_set_error("%s", "matmul.var_C is expected to have non-NULL data pointer");
    return -1;
  }
  float* restrict C = ((void*)((char*)TESSERA_DLT(var_C)->data + TESSERA_DLT(var_C)->byte_offset));
  for (int32_t i = 0; i < 8; ++i) {
    for (int32_t j = 0; j < 8; ++j) {
      for (int32_t k = 0; k < 1; ++k) {
        C[((i * 8) + j)] = 0.0f;
        int32_t cse_v1 = ((i * 8) + j);
        C[cse_v1] = (C[cse_v1] + (A[(i * 8)] * B[j]));
      }
      for (int32_t k_1 = 1; k_1 < 8; ++k_1) {
        int32_t cse_v2 = ((i * 8) + j);
        C[cse_v2] = (C[cse_v2] + (A[((i * 8) + k_1)] * B[((k_1 * 8) + j)]));
      }
    }
  }
  return tessera_status();
}
