// tir.HoistIfThenElse: a condition that does not change inside a loop is tested once, outside it.
//
//   for i in range(n):            if c:
//     if c:                  ->     for i in range(n):
//       then_case                     then_case
//     else:                       else:
//       else_case                   for i in range(n):
//                                     else_case
//
// A loop whose whole body is an IfThenElse whose condition neither uses the loop variable nor
// reads memory is rewritten as above (no else: the loop runs only under the condition; with
// one, the second loop binds a fresh variable). Applied bottom-up, so a condition rises through
// every loop it does not depend on. Parallel and thread-bound loops are left alone (the condition
// may be tested per thread on purpose), as are conditions with side effects or reading memory.
#include <set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsHoistableCondition(const Expr& cond) {
  bool ok = true;
  PostOrderVisit(cond, [&ok](const ObjectRef& n) {
    if (AsPtr<BufferLoadNode>(n)) ok = false;
    if (auto* call = AsPtr<CallNode>(n)) {
      auto* op = AsPtr<OpNode>(call->op);
      if (!op || op->effect != CallEffect::kPure) ok = false;
    }
  });
  return ok;
}

class IfHoister : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (loop->for_kind == ForKind::kParallel || loop->for_kind == ForKind::kThreadBinding) {
      return s;
    }
    auto* branch = AsPtr<IfThenElseNode>(loop->body);
    if (!branch || !IsHoistableCondition(branch->condition)) return s;
    const VarNode* v = loop->loop_var.get();
    if (UsesVar(branch->condition, [v](const VarNode* x) { return x == v; })) return s;
    auto remake = [&](const Stmt& body) {
      return ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body,
                           loop->thread_binding, loop->annotations, loop->span);
    };
    Stmt then_loop = remake(branch->then_case);
    Stmt else_loop;
    if (branch->else_case) {
      // Both branches keep a loop over the same variable: the copy defines a fresh one.
      Var fresh = VarNode::Make(loop->loop_var->name, loop->loop_var->dtype, loop->loop_var->span);
      else_loop = ForNode::Make(fresh, loop->min, loop->extent, loop->for_kind,
                                Substitute(branch->else_case, {{v, fresh}}), loop->thread_binding,
                                loop->annotations, loop->span);
    }
    return IfThenElseNode::Make(branch->condition, then_loop, else_loop, branch->span);
  }
};

PrimFunc HoistIfThenElseFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = IfHoister().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass HoistIfThenElse() { return CreatePrimFuncPass(HoistIfThenElseFunc, 0, "tir.HoistIfThenElse"); }
TESSERA_REGISTER_PASS("tir.HoistIfThenElse", HoistIfThenElse);

}  // namespace transform
}  // namespace tessera
