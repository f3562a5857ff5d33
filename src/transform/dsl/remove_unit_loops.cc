// dsl.RemoveUnitLoops: a loop of one iteration (constant extent 1, no annotation, unit step, not
// bound to a thread) is replaced by its body with the loop variable replaced by the loop's start,
// as Compass's DSL build of a scheduled function does when it lowers the function's blocks (TVM's
// tir.LowerOpaqueBlock drops such loops; tessera's shared pipeline keeps them):
//
//   for (int i_0 = 0; i_0 < 1; i_0 += 1) { B[i_0 * 8] = ... }  ->  B[0] = ...
//
// A te split by 8 of fewer than 9 elements then prints its one (masked) vector without a loop.
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsOne(const Expr& e) {
  const auto* imm = AsPtr<IntImmNode>(e);
  return imm != nullptr && imm->value == 1;
}

class UnitLoopRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool unit = IsOne(op->extent) && op->annotations.empty() && op->HasTrivialStep() &&
                op->for_kind != ForKind::kThreadBinding && op->for_kind != ForKind::kParallel;
    if (!unit) return StmtMutator::VisitStmt_(op);
    Stmt body = Substitute(op->body, VarMap{{op->loop_var.get(), op->min}});
    return VisitStmt(body);
  }
};

PrimFunc RemoveUnitLoopsFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = UnitLoopRemover().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass RemoveUnitLoops() { return CreatePrimFuncPass(RemoveUnitLoopsFunc, 0, "dsl.RemoveUnitLoops"); }
TESSERA_REGISTER_PASS("dsl.RemoveUnitLoops", RemoveUnitLoops);

}  // namespace transform
}  // namespace tessera
