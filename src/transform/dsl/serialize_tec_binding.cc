// dsl.SerializeTecBinding: TensorIR built for a DSL target runs on the host CPU; its loops bound
// to "threadIdx.x" (Compass's TECs, `bind_tec`) become serial loops, the TECs running one after
// another. That is the same computation as long as no TEC waits for another, so loops whose body
// synchronises threads are refused.
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

bool Synchronises(const Stmt& body) {
  bool found = false;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    const auto* call = AsPtr<CallNode>(node);
    if (call && (call->op_name() == "tir.tvm_storage_sync" || call->op_name() == "dsl.barrier")) {
      found = true;
    }
  });
  return found;
}

class TecSerializer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt body = VisitStmt(op->body);
    if (op->for_kind != ForKind::kThreadBinding || !op->thread_binding ||
        op->thread_binding->thread_tag != "threadIdx.x") {
      if (body == op->body) return GetRef(op);
      return ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body,
                           op->thread_binding, op->annotations, op->span);
    }
    if (Synchronises(body)) {
      TESSERA_THROW(op->span) << "the loop over " << op->loop_var->name
                              << " is bound to the TECs (threadIdx.x) and synchronises them; "
                                 "tessera runs the TECs of a TensorIR kernel one after another "
                                 "and cannot build it";
    }
    return ForNode::Make(op->loop_var, op->min, op->extent, ForKind::kSerial, body, nullptr,
                         op->annotations, op->span);
  }
};

PrimFunc SerializeTecBindingFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = TecSerializer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass SerializeTecBinding() {
  return CreatePrimFuncPass(SerializeTecBindingFunc, 0, "dsl.SerializeTecBinding");
}
TESSERA_REGISTER_PASS("dsl.SerializeTecBinding", SerializeTecBinding);

}  // namespace transform
}  // namespace tessera
