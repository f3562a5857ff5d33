// tir.DecorateDeviceScope: a function's whole body is marked as device code with
// `T.attr(0, "device_scope", 0)`, as TVM's pass of this name does.
#include "tessera/ir/functor.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

PrimFunc DecorateDeviceScopeFunc(PrimFunc f, IRModule, const PassContext&) {
  return f->WithBody(AttrStmtNode::Make(Int32(0), "device_scope", Int32(0), f->body, f->span));
}

}  // namespace

Pass DecorateDeviceScope() {
  return CreatePrimFuncPass(DecorateDeviceScopeFunc, 0, "tir.DecorateDeviceScope");
}
TESSERA_REGISTER_PASS("tir.DecorateDeviceScope", DecorateDeviceScope);

}  // namespace transform
}  // namespace tessera
