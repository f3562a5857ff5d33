// dsl.TruncDivMod: a scalar integer floordiv / floormod whose numerator is provably non-negative
// and whose divisor is provably positive is C's `/` / `%` (both round the same way there).
//
//   if (0 < __floormod(each_size, 127))  ->  if (0 < (each_size % 127))
//
// The simplifier writes a remainder of a non-negative value as floormod (its canonical form);
// the DSL's C then needs the __floormod helper where the target's own `%` gives the same result,
// and Compass's generated code shows `%`. Loop ranges and the values of let-bound variables are
// known to the analyzer; anything it cannot prove is left as it is, except a signed floordiv by
// a constant 2^k, which is the arithmetic shift right by k:
//
//   __floordiv(n, 32)  ->  (n >> 5)
#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

class TruncDivModRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->loop_var->dtype.is_integer() && op->loop_var->dtype.is_scalar()) {
      ana_.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    if (!op->var->pointer && op->var->dtype.is_integer() && op->var->dtype.is_scalar() &&
        op->value->dtype == op->var->dtype) {
      ana_.Bind(op->var, op->value);
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Expr VisitExpr_(const FloorDivNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* div = AsPtr<FloorDivNode>(e);
    if (div != nullptr && Truncates(div->a, div->b)) {
      return DivNode::Make(div->a, div->b, div->span);
    }
    // A signed value of unknown sign divided by 2^k rounding down is its arithmetic shift right
    // by k (the generated C is compiled where `>>` of a negative int is arithmetic, as on the
    // NPU); Compass's C writes `(n >> 5)` for n // 32.
    if (div != nullptr && div->a->dtype.is_scalar() && div->a->dtype.is_int()) {
      if (const auto* imm = AsPtr<IntImmNode>(div->b)) {
        int64_t c = imm->value;
        if (c >= 2 && (c & (c - 1)) == 0 && c < (int64_t(1) << (div->a->dtype.bits() - 1))) {
          int k = 0;
          for (int64_t v = c; v > 1; v >>= 1) ++k;
          return CallNode::Make(div->a->dtype, OpNode::Get("tir.shift_right"),
                                {div->a, MakeConst(div->a->dtype, int64_t(k))}, div->span);
        }
      }
    }
    return e;
  }

  Expr VisitExpr_(const FloorModNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* mod = AsPtr<FloorModNode>(e);
    if (mod != nullptr && Truncates(mod->a, mod->b)) {
      return ModNode::Make(mod->a, mod->b, mod->span);
    }
    return e;
  }

 private:
  bool Truncates(const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    if (!t.is_scalar() || !(t.is_int() || t.is_uint())) return false;
    return ana_.CanProveGreaterEqual(a, 0) && ana_.CanProveGreaterEqual(b, 1);
  }

  arith::Analyzer ana_;
};

PrimFunc TruncDivModFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = TruncDivModRewriter().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass TruncDivMod() { return CreatePrimFuncPass(TruncDivModFunc, 0, "dsl.TruncDivMod"); }
TESSERA_REGISTER_PASS("dsl.TruncDivMod", TruncDivMod);

}  // namespace transform
}  // namespace tessera
