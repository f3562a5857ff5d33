// tir.Simplify: canonical simplification of every expression with loop ranges and let values
// known to the arithmetic analyzer; constant branches and proven asserts are removed.
#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class StmtSimplifier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  void SetTransitiveComparisons(bool on) { ana_.SetTransitiveComparisons(on); }

  Expr VisitExpr(const Expr& e) override { return ana_.Simplify(e); }

  Stmt VisitStmt_(const ForNode* op) override {
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    ana_.Bind(op->loop_var, RangeNode::Make(min, extent));
    // A loop of one iteration: its variable is its min in the body (as TVM's analyzer binds
    // it), so that indices of unit batch loops fold to constants.
    Stmt body = op->body;
    if (IsConstInt(extent, 1) && op->for_kind != ForKind::kThreadBinding) {
      body = Substitute(body, VarMap{{op->loop_var.get(), min}});
    }
    body = VisitStmt(body);
    ana_.Unbind(op->loop_var);
    if (min == op->min && extent == op->extent && body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    bool bound = value->dtype.is_integer() && value->dtype.is_scalar();
    if (bound) ana_.Bind(op->var, value);
    Stmt body = VisitStmt(op->body);
    if (bound) ana_.Unbind(op->var);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Expr c = VisitExpr(op->condition);
    if (auto v = AsConstInt(c)) {
      if (*v) return VisitStmt(op->then_case);
      return op->else_case ? VisitStmt(op->else_case) : EvaluateNode::Make(Int32(0), op->span);
    }
    // As TVM: the condition is known inside the then branch, its negation inside the else.
    Stmt t, e;
    {
      arith::ConstraintContext known(ana_, c);
      t = VisitStmt(op->then_case);
    }
    if (op->else_case) {
      arith::ConstraintContext known(ana_, arith::NegateCondition(c));
      e = VisitStmt(op->else_case);
    }
    if (c == op->condition && t == op->then_case && e == op->else_case) return GetRef(op);
    return IfThenElseNode::Make(c, t, e, op->span);
  }

  Stmt VisitStmt_(const AssertStmtNode* op) override {
    Expr c = VisitExpr(op->condition);
    if (IsConstInt(c, 1)) return VisitStmt(op->body);  // proven: the check cannot fail
    Stmt body = VisitStmt(op->body);
    if (c == op->condition && body == op->body) return GetRef(op);
    return AssertStmtNode::Make(c, op->message, body, op->span);
  }

 private:
  arith::Analyzer ana_;
};

PrimFunc SimplifyFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  StmtSimplifier simplifier;
  simplifier.SetTransitiveComparisons(
      ctx.GetRecordBool("tir.Simplify", "transitively_prove_inequalities", false));
  Stmt body = simplifier.VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Expr SimplifyExpr(const Expr& e) { return arith::Analyzer().Simplify(e); }

Pass Simplify() { return CreatePrimFuncPass(SimplifyFunc, 0, "tir.Simplify"); }
TESSERA_REGISTER_PASS("tir.Simplify", Simplify);

}  // namespace transform
}  // namespace tessera
