// tir.ConvertForLoopsToSerial: parallel loops become serial ones, as TVM's pass of this name
// does (for targets that run a function on one thread).
#include "tessera/ir/functor.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class ParallelToSerial : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (loop->for_kind != ForKind::kParallel) return s;
    return ForNode::Make(loop->loop_var, loop->min, loop->extent, ForKind::kSerial, loop->body,
                         loop->thread_binding, loop->annotations, loop->span, loop->step);
  }
};

PrimFunc ConvertForLoopsToSerialFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = ParallelToSerial().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass ConvertForLoopsToSerial() {
  return CreatePrimFuncPass(ConvertForLoopsToSerialFunc, 0, "tir.ConvertForLoopsToSerial");
}
TESSERA_REGISTER_PASS("tir.ConvertForLoopsToSerial", ConvertForLoopsToSerial);

}  // namespace transform
}  // namespace tessera
