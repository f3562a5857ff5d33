#include <tessera/runtime.h>

TESSERA_EXPORT int32_t __tessera_packed_checked(void* args, int32_t* arg_type_ids, int32_t num_args, void* out_ret_value, int32_t* out_ret_tcode) {
  if (!tessera_check_args(arg_type_ids, num_args, "checked", "pi")) return -1;
  int32_t n = ((int32_t)((TesseraValue*)args)[1].v_int64);
  void* A = ((TesseraValue*)args)[0].v_handle;
  if (!tessera_check_dltensor(A, "checked.A", "A", "int32", 1, 0, 32, 1, 1, 1, (const int64_t[]){4LL})) return -1;
  int32_t* A_1 = ((void*)((char*)TESSERA_DLT(A)->data + TESSERA_DLT(A)->byte_offset));
  if (!(n < 4)) {
    tessera_set_error("%s", "n is \"out\" of\trange\\\n (4 elements)");
    return -1;
  }
  A_1[n] = n;
  return tessera_status();
}
