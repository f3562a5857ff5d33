#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_parallel_scale(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!tessera_check_args(arg_type_ids, num_args, "parallel_scale", "pp")) return -1;
  void* A = ((TesseraValue*)args)[0].v_handle;
  if (!tessera_check_dltensor(A, "parallel_scale.A", "A", "float32", 2, 2, 32, 1, 1, 1, (const int64_t[]){8LL, 32LL})) return -1;
  float* A_1 = ((void*)((char*)TESSERA_DLT(A)->data + TESSERA_DLT(A)->byte_offset));
  void* B = ((TesseraValue*)args)[1].v_handle;
  if (!tessera_check_dltensor(B, "parallel_scale.B", "B", "float32", 2, 2, 32, 1, 1, 1, (const int64_t[]){8LL, 32LL})) return -1;
  float* B_1 = ((void*)((char*)TESSERA_DLT(B)->data + TESSERA_DLT(B)->byte_offset));
  #pragma omp parallel for schedule(dynamic, 1)
  for (int32_t i = 0; i < 8; ++i) {
    if (i < 0 || i >= 8) __builtin_unreachable();
    for (int32_t j = 0; j < 32; ++j) {
      int32_t cse_v1 = ((i * 32) + j);
      B_1[cse_v1] = (A_1[cse_v1] * 0.5f);
    }
  }
  return tessera_status();
}
