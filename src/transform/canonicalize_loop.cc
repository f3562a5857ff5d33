// tir.CanonicalizeLoop: every loop starts at 0 (the old minimum moves into the body).
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class LoopCanonicalizer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt body = VisitStmt(op->body);
    // Thread-bound loops keep their range: it belongs to the thread axis.
    if (IsConstInt(op->min, 0) || op->for_kind == ForKind::kThreadBinding) {
      if (body == op->body) return GetRef(op);
      return ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body,
                           op->thread_binding, op->annotations, op->span);
    }
    // for i in [m, m + e): body(i)  ==>  for i in [0, e): body(i + m)
    Expr shifted = SimplifyExpr(AddNode::Make(op->loop_var, op->min));
    body = Substitute(body, {{op->loop_var.get(), shifted}});
    return ForNode::Make(op->loop_var, MakeConst(op->min->dtype, int64_t(0)),
                         SimplifyExpr(op->extent), op->for_kind, body, op->thread_binding,
                         op->annotations, op->span);
  }
};

PrimFunc CanonicalizeLoopFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = LoopCanonicalizer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CanonicalizeLoop() {
  return CreatePrimFuncPass(CanonicalizeLoopFunc, 0, "tir.CanonicalizeLoop");
}
TESSERA_REGISTER_PASS("tir.CanonicalizeLoop", CanonicalizeLoop);

}  // namespace transform
}  // namespace tessera
