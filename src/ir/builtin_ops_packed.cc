// Intrinsics of the packed calling convention ("tessera.*"), used by MakePackedAPI and printed
// by the host code generator against tessera/runtime.h.
#include "tessera/ir/op.h"

namespace tessera {
namespace {

TESSERA_REGISTER_OP("tessera.packed_arg")
    .set_num_inputs(2)
    .set_effect(CallEffect::kReadState)
    .describe("Argument `index` of a packed call (args, index); the call's dtype picks the field.");
TESSERA_REGISTER_OP("tessera.packed_type_code")
    .set_num_inputs(2)
    .set_effect(CallEffect::kReadState)
    .describe("The type code of argument `index` (type_codes, index), as int32.");
TESSERA_REGISTER_OP("tessera.dltensor_get")
    .set_num_inputs(2)
    .set_effect(CallEffect::kReadState)
    .describe("A field of a DLTensor argument (handle, TESSERA_DLT_* field).");
TESSERA_REGISTER_OP("tessera.dltensor_shape")
    .set_num_inputs(2)
    .set_effect(CallEffect::kReadState)
    .describe("shape[dim] of a DLTensor argument, as int64.");
TESSERA_REGISTER_OP("tessera.dltensor_stride")
    .set_num_inputs(2)
    .set_effect(CallEffect::kReadState)
    .describe("strides[dim] of a DLTensor argument whose strides are not NULL, as int64.");
TESSERA_REGISTER_OP("tessera.check_args")
    .set_num_inputs(4)
    .set_effect(CallEffect::kUpdateState)
    .describe("Whether a packed call's arguments match the parameters (type_codes, num_args, "
              "\"func\", kinds: 'p' pointer, 'f' float, 'i' int per parameter): "
              "tessera_check_args of tessera/runtime.h, which sets the error when not.");
TESSERA_REGISTER_OP("tessera.check_dltensor")
    .set_effect(CallEffect::kUpdateState)
    .describe("Whether a DLTensor argument matches its buffer (handle, \"func.param\", \"param\", "
              "\"dtype\", ndim, code, bits, lanes, full, device_type, shape...): "
              "tessera_check_dltensor of tessera/runtime.h, which sets the error when not.");
TESSERA_REGISTER_OP("tessera.check_dltensor_table")
    .set_effect(CallEffect::kUpdateState)
    .describe("Whether a run of DLTensor arguments with constant shapes matches their buffers "
              "(args, device_type, count, then per argument: index, \"func.param\", "
              "\"param\", \"dtype\", ndim, code, bits, lanes, full, shape...): "
              "tessera_check_dltensor_table of tessera/runtime.h, one loop over a static table.");
TESSERA_REGISTER_OP("tessera.isnullptr")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .describe("Whether a handle is NULL.");
TESSERA_REGISTER_OP("tessera.set_return")
    .set_num_inputs(3)
    .set_effect(CallEffect::kUpdateState)
    .describe("Store the return value of a packed call (ret_value, ret_tcode, value).");
TESSERA_REGISTER_OP("tessera.bound_error")
    .set_num_inputs(3)
    .set_effect(CallEffect::kUpdateState)
    .describe("Record a failed bound check (printf format, index, extent); the packed entry "
              "returns the first one as its error.");
TESSERA_REGISTER_OP("tessera.format")
    .set_effect(CallEffect::kPure)
    .describe("An assert message: a printf format (StringImm) and int64 values.");

}  // namespace
}  // namespace tessera
