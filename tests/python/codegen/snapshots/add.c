#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_add(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!tessera_check_args(arg_type_ids, num_args, "add", "ppp")) return -1;
  void* A = ((TesseraValue*)args)[0].v_handle;
  if (!tessera_check_dltensor(A, "add.A", "A", "float32", 1, 2, 32, 1, 1, 1, (const int64_t[]){16LL})) return -1;
  float* A_1 = ((void*)((char*)TESSERA_DLT(A)->data + TESSERA_DLT(A)->byte_offset));
  void* B = ((TesseraValue*)args)[1].v_handle;
  if (!tessera_check_dltensor(B, "add.B", "B", "float32", 1, 2, 32, 1, 1, 1, (const int64_t[]){16LL})) return -1;
  float* B_1 = ((void*)((char*)TESSERA_DLT(B)->data + TESSERA_DLT(B)->byte_offset));
  void* C = ((TesseraValue*)args)[2].v_handle;
  if (!tessera_check_dltensor(C, "add.C", "C", "float32", 1, 2, 32, 1, 1, 1, (const int64_t[]){16LL})) return -1;
  float* C_1 = ((void*)((char*)TESSERA_DLT(C)->data + TESSERA_DLT(C)->byte_offset));
  for (int32_t i = 0; i < 16; ++i) {
    C_1[i] = (A_1[i] + B_1[i]);
  }
  return tessera_status();
}
