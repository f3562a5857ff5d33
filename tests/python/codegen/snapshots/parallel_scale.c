#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_parallel_scale(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!(num_args == 2)) {
    tessera_set_error("%s", "parallel_scale: num_args should be 2");
    return -1;
  }
  if (!((arg_type_ids[0] == 7) || ((arg_type_ids[0] == 4) || (arg_type_ids[0] == 3)))) {
    tessera_set_error("%s", "parallel_scale: Expect arg[0] to be pointer");
    return -1;
  }
  void* A = ((TesseraValue*)args)[0].v_handle;
  if (!((arg_type_ids[1] == 7) || ((arg_type_ids[1] == 4) || (arg_type_ids[1] == 3)))) {
    tessera_set_error("%s", "parallel_scale: Expect arg[1] to be pointer");
    return -1;
  }
  void* B = ((TesseraValue*)args)[1].v_handle;
  if (!(!(A == NULL))) {
    tessera_set_error("%s", "parallel_scale.A is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(A)->ndim == 2)) {
    tessera_set_error("%s", "parallel_scale.A.ndim is expected to equal 2");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(A)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(A)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(A)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "parallel_scale.A.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(A, 0))) {
    tessera_set_error("Argument parallel_scale.A.shape[0] has an unsatisfied constraint: 8 == A.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(A, 0));
    return -1;
  }
  if (!(((int64_t)32) == TESSERA_DLT_SHAPE(A, 1))) {
    tessera_set_error("Argument parallel_scale.A.shape[1] has an unsatisfied constraint: 32 == A.shape[1] (got %lld)", (long long)TESSERA_DLT_SHAPE(A, 1));
    return -1;
  }
  if (!(((TESSERA_DLT_SHAPE(A, 0) == 0LL) || (TESSERA_DLT_SHAPE(A, 1) == 0LL)) || ((((void*)TESSERA_DLT(A)->strides) == NULL) || (((TESSERA_DLT_SHAPE(A, 0) == 1LL) || (TESSERA_DLT_STRIDE(A, 0) == (1LL * TESSERA_DLT_SHAPE(A, 1)))) && ((TESSERA_DLT_SHAPE(A, 1) == 1LL) || (TESSERA_DLT_STRIDE(A, 1) == 1LL)))))) {
    tessera_set_error("%s", "parallel_scale.A.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(A)->device.device_type == 1)) {
    tessera_set_error("Argument parallel_scale.A.device_type has an unsatisfied constraint: 1 == A.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(A)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(A)->data == NULL)) || ((TESSERA_DLT_SHAPE(A, 0) == 0LL) || (TESSERA_DLT_SHAPE(A, 1) == 0LL)))) {
    tessera_set_error("%s", "parallel_scale.A is expected to have non-NULL data pointer");
    return -1;
  }
  float* A_1 = ((void*)((char*)TESSERA_DLT(A)->data + TESSERA_DLT(A)->byte_offset));
  if (!(!(B == NULL))) {
    tessera_set_error("%s", "parallel_scale.B is expected to have non-NULL DLTensor* pointer");
    return -1;
  }
  if (!(TESSERA_DLT(B)->ndim == 2)) {
    tessera_set_error("%s", "parallel_scale.B.ndim is expected to equal 2");
    return -1;
  }
  if (!(((((int32_t)TESSERA_DLT(B)->dtype.code) == 2) && (((int32_t)TESSERA_DLT(B)->dtype.bits) == 32)) && (((int32_t)TESSERA_DLT(B)->dtype.lanes) == 1))) {
    tessera_set_error("%s", "parallel_scale.B.dtype is expected to be float32");
    return -1;
  }
  if (!(((int64_t)8) == TESSERA_DLT_SHAPE(B, 0))) {
    tessera_set_error("Argument parallel_scale.B.shape[0] has an unsatisfied constraint: 8 == B.shape[0] (got %lld)", (long long)TESSERA_DLT_SHAPE(B, 0));
    return -1;
  }
  if (!(((int64_t)32) == TESSERA_DLT_SHAPE(B, 1))) {
    tessera_set_error("Argument parallel_scale.B.shape[1] has an unsatisfied constraint: 32 == B.shape[1] (got %lld)", (long long)TESSERA_DLT_SHAPE(B, 1));
    return -1;
  }
  if (!(((TESSERA_DLT_SHAPE(B, 0) == 0LL) || (TESSERA_DLT_SHAPE(B, 1) == 0LL)) || ((((void*)TESSERA_DLT(B)->strides) == NULL) || (((TESSERA_DLT_SHAPE(B, 0) == 1LL) || (TESSERA_DLT_STRIDE(B, 0) == (1LL * TESSERA_DLT_SHAPE(B, 1)))) && ((TESSERA_DLT_SHAPE(B, 1) == 1LL) || (TESSERA_DLT_STRIDE(B, 1) == 1LL)))))) {
    tessera_set_error("%s", "parallel_scale.B.strides: expected to be compact array");
    return -1;
  }
  if (!(TESSERA_DLT(B)->device.device_type == 1)) {
    tessera_set_error("Argument parallel_scale.B.device_type has an unsatisfied constraint: 1 == B.device_type (got %lld)", (long long)((int64_t)TESSERA_DLT(B)->device.device_type));
    return -1;
  }
  if (!((!(TESSERA_DLT(B)->data == NULL)) || ((TESSERA_DLT_SHAPE(B, 0) == 0LL) || (TESSERA_DLT_SHAPE(B, 1) == 0LL)))) {
    tessera_set_error("%s", "parallel_scale.B is expected to have non-NULL data pointer");
    return -1;
  }
  float* B_1 = ((void*)((char*)TESSERA_DLT(B)->data + TESSERA_DLT(B)->byte_offset));
  #pragma omp parallel for
  for (int32_t i = 0; i < 8; ++i) {
    for (int32_t j = 0; j < 32; ++j) {
      int32_t cse_v1 = ((i * 32) + j);
      B_1[cse_v1] = (A_1[cse_v1] * 0.5f);
    }
  }
  return tessera_status();
}
