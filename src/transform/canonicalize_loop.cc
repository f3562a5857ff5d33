// tir.CanonicalizeLoop: every loop starts at 0 and steps by 1 (the old minimum and step move
// into the body).
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class LoopCanonicalizer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    if (op->step) return Unstep(op);
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

 private:
  // for i in range(m, m + e, s): body(i)  ==>  for i in [0, ceildiv(e, s)): body(i * s + m)
  Stmt Unstep(const ForNode* op) {
    const Expr& step = op->step;
    auto c = AsConstInt(step);
    if (!c) {
      // As TVM: a step that cannot be proven positive would make an endless loop.
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.CanonicalizeLoop: the step of loop " << op->loop_var->name << " ("
          << AsScript(step) << ") may not be positive; only constant steps are lowered";
    }
    if (op->for_kind == ForKind::kThreadBinding) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.CanonicalizeLoop: thread-bound loop " << op->loop_var->name
          << " cannot have a step";
    }
    DataType t = op->loop_var->dtype;
    Expr value = SimplifyExpr(AddNode::Make(MulNode::Make(op->loop_var, step), op->min));
    Stmt body = Substitute(op->body, {{op->loop_var.get(), value}});
    body = VisitStmt(body);
    Expr trips;
    if (auto e = AsConstInt(op->extent)) {
      trips = MakeConst(t, *e <= 0 ? int64_t(0) : (*e + *c - 1) / *c);
    } else {
      trips = SimplifyExpr(FloorDivNode::Make(
          AddNode::Make(op->extent, MakeConst(t, *c - 1)), MakeConst(t, *c)));
    }
    return ForNode::Make(op->loop_var, MakeConst(t, int64_t(0)), trips, op->for_kind, body,
                         op->thread_binding, op->annotations, op->span);
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
