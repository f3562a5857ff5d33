#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_matmul(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!tessera_check_args(arg_type_ids, num_args, "matmul", "ppp")) return -1;
  void* var_A = ((TesseraValue*)args)[0].v_handle;
  if (!tessera_check_dltensor(var_A, "matmul.var_A", "var_A", "float32", 2, 2, 32, 1, 1, 1, (const int64_t[]){8LL, 8LL})) return -1;
  float* restrict A = ((void*)((char*)TESSERA_DLT(var_A)->data + TESSERA_DLT(var_A)->byte_offset));
  void* var_B = ((TesseraValue*)args)[1].v_handle;
  if (!tessera_check_dltensor(var_B, "matmul.var_B", "var_B", "float32", 2, 2, 32, 1, 1, 1, (const int64_t[]){8LL, 8LL})) return -1;
  float* restrict B = ((void*)((char*)TESSERA_DLT(var_B)->data + TESSERA_DLT(var_B)->byte_offset));
  void* var_C = ((TesseraValue*)args)[2].v_handle;
  if (!tessera_check_dltensor(var_C, "matmul.var_C", "var_C", "float32", 2, 2, 32, 1, 1, 1, (const int64_t[]){8LL, 8LL})) return -1;
  float* restrict C = ((void*)((char*)TESSERA_DLT(var_C)->data + TESSERA_DLT(var_C)->byte_offset));
  for (int32_t i = 0; i < 8; ++i) {
    for (int32_t j = 0; j < 8; ++j) {
      C[((i * 8) + j)] = 0.0f;
      int32_t cse_v1 = ((i * 8) + j);
      C[cse_v1] = (C[cse_v1] + (A[(i * 8)] * B[j]));
      for (int32_t k = 0; k < 7; ++k) {
        int32_t cse_v2 = ((i * 8) + j);
        C[cse_v2] = (C[cse_v2] + ((A + ((i * 8) + k))[1] * (B + ((k * 8) + j))[8]));
      }
    }
  }
  return tessera_status();
}
