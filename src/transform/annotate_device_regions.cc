// tir.AnnotateDeviceRegions: in a function whose "target" has a host, each region that runs on
// the device (a thread launch, a "device_scope" or "pipeline_exec_scope" attribute) is wrapped in
// `T.attr(<the target without its host>, "target", 0)`, as TVM's pass of this name does, so that
// tir.SplitHostDevice can tell device code from host code.
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class DeviceRegionAnnotator : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  explicit DeviceRegionAnnotator(ObjectRef device) : device_(std::move(device)) {}

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "target") return GetRef(op);  // already annotated
    if (op->attr_key == "thread_extent" || op->attr_key == "device_scope" ||
        op->attr_key == "pipeline_exec_scope") {
      return AttrStmtNode::Make(device_, "target", Int32(0), GetRef(op), op->span);
    }
    return StmtMutator::VisitStmt_(op);
  }

 private:
  ObjectRef device_;
};

PrimFunc AnnotateDeviceRegionsFunc(PrimFunc f, IRModule, const PassContext&) {
  auto it = f->attrs.find("target");
  if (it == f->attrs.end()) {
    TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
        << "tir.AnnotateDeviceRegions needs the function's \"target\" attribute "
           "(T.func_attr({\"target\": T.target(\"cuda\", host=\"llvm\")}))";
  }
  auto* target = AsPtr<MapNode>(it->second);
  if (target == nullptr || target->items.count("host") == 0) return f;  // no host: all device
  AttrMap device = target->items;
  device.erase("host");
  Stmt body = DeviceRegionAnnotator(MapNode::Make(std::move(device))).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass AnnotateDeviceRegions() {
  return CreatePrimFuncPass(AnnotateDeviceRegionsFunc, 0, "tir.AnnotateDeviceRegions");
}
TESSERA_REGISTER_PASS("tir.AnnotateDeviceRegions", AnnotateDeviceRegions);

}  // namespace transform
}  // namespace tessera
