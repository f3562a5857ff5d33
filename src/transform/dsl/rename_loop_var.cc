// dsl.RenameLoopVar: a loop variable with a long name (more than 20 characters) is named i, j,
// k, ... by the depth of the renamed loops it is in, as Compass's DSL names such loops in its C:
//
//   for (int very_long_loop_var_name = 0; ...)  ->  for (int i = 0; ...)
//
// Loops written in a kernel with short names keep them. The name only says where the loop is:
// the code generator makes names unique in a function (a second `i` prints as `i_1`).
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr size_t kLongName = 20;

class LoopVarRenamer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->loop_var->name.size() <= kLongName || depth_ >= 18) {  // 18 letters: i .. z
      return StmtMutator::VisitStmt_(op);
    }
    Var renamed = VarNode::Make(std::string(1, static_cast<char>('i' + depth_)),
                                op->loop_var->dtype, op->loop_var->span);
    Stmt body = Substitute(op->body, VarMap{{op->loop_var.get(), renamed}});
    ++depth_;
    body = VisitStmt(body);
    --depth_;
    return ForNode::Make(renamed, op->min, op->extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span, op->step);
  }

 private:
  int depth_ = 0;
};

PrimFunc RenameLoopVarFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = LoopVarRenamer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass RenameLoopVar() { return CreatePrimFuncPass(RenameLoopVarFunc, 0, "dsl.RenameLoopVar"); }
TESSERA_REGISTER_PASS("dsl.RenameLoopVar", RenameLoopVar);

}  // namespace transform
}  // namespace tessera
