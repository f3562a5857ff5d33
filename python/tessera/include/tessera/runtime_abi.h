/* tessera/runtime_abi.h: the binary interface between tessera's runtime and the host code it
 * generates (C and C++). Tensors are passed as DLPack-compatible DLTensor structs; arguments
 * travel as an array of TesseraValue with one type code each. */
#ifndef TESSERA_RUNTIME_ABI_H_
#define TESSERA_RUNTIME_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Layout-compatible with DLPack's DLDevice, DLDataType and DLTensor. */
typedef struct {
  int32_t device_type; /* 1: CPU (kDLCPU), 2: CUDA (kDLCUDA) */
  int32_t device_id;
} TesseraDLDevice;

typedef struct {
  uint8_t code; /* DLPack codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool */
  uint8_t bits;
  uint16_t lanes;
} TesseraDLDataType;

typedef struct {
  void* data;
  TesseraDLDevice device;
  int32_t ndim;
  TesseraDLDataType dtype;
  int64_t* shape;
  int64_t* strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} TesseraDLTensor;

enum {
  TESSERA_DL_INT = 0,
  TESSERA_DL_UINT = 1,
  TESSERA_DL_FLOAT = 2,
  TESSERA_DL_BFLOAT = 4,
  TESSERA_DL_BOOL = 6,
};

enum { TESSERA_DEVICE_CPU = 1, TESSERA_DEVICE_CUDA = 2 };

/* One argument or return value. */
typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
} TesseraValue;

/* Type codes of arguments and return values. */
enum {
  TESSERA_ARG_INT = 0,
  TESSERA_ARG_UINT = 1,
  TESSERA_ARG_FLOAT = 2,
  TESSERA_ARG_HANDLE = 3,
  TESSERA_ARG_NULL = 4,
  TESSERA_ARG_DLTENSOR = 7,
  TESSERA_ARG_BOOL = 8,
  /* A DLTensor the caller does not allow to be written (a read-only numpy array). Only entry
   * points that check writes accept it: those of DSL kernels, for pointers the kernel only reads. */
  TESSERA_ARG_DLTENSOR_READONLY = 9,
  /* A NUL-terminated string (v_handle is its const char*), such as a file name passed to a
   * global function by T.call_packed. */
  TESSERA_ARG_STR = 10,
};

/* Return codes of a packed entry point besides 0 (success) and other nonzero values (a runtime
 * failure): an argument of the wrong type, or of the right type with a wrong value (shape,
 * layout, range). The runtime raises TypeError / ValueError with the library's message. */
enum { TESSERA_RC_TYPE_ERROR = 2, TESSERA_RC_VALUE_ERROR = 3 };

/* Fields read from a DLTensor argument by generated code (tessera.dltensor_get). */
enum {
  TESSERA_DLT_DATA = 0,     /* data + byte_offset */
  TESSERA_DLT_RAW_DATA = 1, /* data */
  TESSERA_DLT_NDIM = 2,
  TESSERA_DLT_DTYPE_CODE = 3,
  TESSERA_DLT_DTYPE_BITS = 4,
  TESSERA_DLT_DTYPE_LANES = 5,
  TESSERA_DLT_DEVICE_TYPE = 6,
  TESSERA_DLT_DEVICE_ID = 7,
  TESSERA_DLT_BYTE_OFFSET = 8,
  TESSERA_DLT_STRIDES = 9, /* the strides pointer, to test for NULL */
};

/* A packed entry point. Returns 0 on success; otherwise the message is available from the
 * library's `__tessera_get_last_error()`. */
typedef int32_t (*TesseraPackedFunc)(TesseraValue* args, int32_t* type_codes, int32_t num_args,
                                     TesseraValue* ret, int32_t* ret_code);

/* Symbols every generated library exports. */
#define TESSERA_LAST_ERROR_SYMBOL "__tessera_get_last_error"
#define TESSERA_MODULE_INFO_SYMBOL "__tessera_module_info"
#define TESSERA_MODULE_SOURCE_SYMBOL "__tessera_module_source"
#define TESSERA_PACKED_PREFIX "__tessera_packed_"

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_RUNTIME_ABI_H_ */
