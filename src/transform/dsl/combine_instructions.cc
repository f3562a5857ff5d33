// dsl.CombineInstructions: pairs of DSL operations that the target does in one instruction.
//
//   x & ~y    -> dsl.vbclr(x, y)        x | ~y   -> dsl.vbset(x, y)
//   ~(x & y)  -> dsl.vnand(x, y)        ~(x | y) -> dsl.vnor(x, y)
// on integer vectors (tir.bitwise_*) and on masks (And / Or / Not of bool vectors), and two
// strength reductions that give bit-identical results:
//   integer vector * 2^k     -> vector << k   (two's complement wraps the same way)
//   float / c, 1/c exact     -> float * (1/c) (c a power of two whose reciprocal is
//                                              representable: both round x * 2^-k once)
// Divisions whose reciprocal is inexact (x / 10) are kept, so results never change.
#include <cmath>
#include <optional>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/dsl_passes.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

const CallNode* AsOpCall(const Expr& e, const char* name) {
  const auto* call = AsPtr<CallNode>(e);
  if (call == nullptr || AsPtr<OpNode>(call->op) == nullptr) return nullptr;
  return call->op_name() == name ? call : nullptr;
}

Expr Combined(const char* name, DataType t, Expr x, Expr y, const Span& span) {
  return CallNode::Make(t, OpNode::Get(name), {std::move(x), std::move(y)}, span);
}

bool IsNativeIntVector(DataType t) {
  return t.is_vector() && (t.is_int() || t.is_uint()) &&
         (t.bits() == 8 || t.bits() == 16 || t.bits() == 32);
}

// The scalar constant of `e`, itself or broadcast.
const ExprNode* ScalarConst(const Expr& e) {
  if (const auto* b = AsPtr<BroadcastNode>(e)) return b->value.get();
  return e.get();
}

// k where `e` (an integer constant or its broadcast) is 2^k, k >= 1.
std::optional<int> PowerOfTwoShift(const Expr& e) {
  const auto* imm = dynamic_cast<const IntImmNode*>(ScalarConst(e));
  if (imm == nullptr || imm->value < 2 || (imm->value & (imm->value - 1)) != 0) return std::nullopt;
  int k = 0;
  for (int64_t v = imm->value; v > 1; v >>= 1) ++k;
  if (k >= e->dtype.bits()) return std::nullopt;
  return k;
}

// 1/c where `e` (a float constant or its broadcast) is c = +-2^k and 2^-k is a normal number of
// the type, so that x / c and x * (1/c) are the same rounding of the same exact value.
std::optional<double> ExactReciprocal(const Expr& e) {
  const auto* imm = dynamic_cast<const FloatImmNode*>(ScalarConst(e));
  if (imm == nullptr || imm->value == 0.0 || !std::isfinite(imm->value)) return std::nullopt;
  int exp = 0;
  double mant = std::frexp(imm->value, &exp);  // value = mant * 2^exp, |mant| in [0.5, 1)
  if (std::fabs(mant) != 0.5) return std::nullopt;
  int k = exp - 1;  // |value| = 2^k
  DataType t = e->dtype;
  int min_exp = -126, max_exp = 127;  // float32 and bfloat16
  if (t.bits() == 16 && !t.is_bfloat16()) min_exp = -14, max_exp = 15;
  if (t.bits() == 64) min_exp = -1022, max_exp = 1023;
  if (-k < min_exp || -k > max_exp) return std::nullopt;
  return 1.0 / imm->value;
}

Expr SameShape(const Expr& like, Expr scalar) {
  if (const auto* b = AsPtr<BroadcastNode>(like)) {
    return BroadcastNode::Make(std::move(scalar), b->lanes, like->span);
  }
  return scalar;
}

class Combiner : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* call = AsPtr<CallNode>(e);
    if (call == nullptr || AsPtr<OpNode>(call->op) == nullptr || !IsNativeIntVector(call->dtype)) {
      return e;
    }
    const std::string& name = call->op_name();
    if ((name == "tir.bitwise_and" || name == "tir.bitwise_or") && call->args.size() == 2) {
      const char* fused = name == "tir.bitwise_and" ? "dsl.vbclr" : "dsl.vbset";
      for (int i = 0; i < 2; ++i) {
        if (const CallNode* inv = AsOpCall(call->args[1 - i], "tir.bitwise_not")) {
          return Combined(fused, call->dtype, call->args[i], inv->args[0], call->span);
        }
      }
    }
    if (name == "tir.bitwise_not" && call->args.size() == 1) {
      if (const CallNode* inner = AsOpCall(call->args[0], "tir.bitwise_and")) {
        return Combined("dsl.vnand", call->dtype, inner->args[0], inner->args[1], call->span);
      }
      if (const CallNode* inner = AsOpCall(call->args[0], "tir.bitwise_or")) {
        return Combined("dsl.vnor", call->dtype, inner->args[0], inner->args[1], call->span);
      }
    }
    return e;
  }

  // Masks: bool vectors.
  Expr VisitExpr_(const AndNode* op) override { return MaskLogic(StmtExprMutator::VisitExpr_(op)); }
  Expr VisitExpr_(const OrNode* op) override { return MaskLogic(StmtExprMutator::VisitExpr_(op)); }

  Expr VisitExpr_(const NotNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* n = AsPtr<NotNode>(e);
    if (n == nullptr || !n->dtype.is_vector()) return e;
    if (const auto* a = AsPtr<AndNode>(n->a)) {
      return Combined("dsl.vnand", n->dtype, a->a, a->b, n->span);
    }
    if (const auto* o = AsPtr<OrNode>(n->a)) {
      return Combined("dsl.vnor", n->dtype, o->a, o->b, n->span);
    }
    return e;
  }

  Expr VisitExpr_(const MulNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* m = AsPtr<MulNode>(e);
    if (m == nullptr || !IsNativeIntVector(m->dtype)) return e;
    for (int i = 0; i < 2; ++i) {
      const Expr& factor = i == 0 ? m->b : m->a;
      const Expr& other = i == 0 ? m->a : m->b;
      if (AsPtr<BroadcastNode>(factor) == nullptr) continue;
      if (auto k = PowerOfTwoShift(factor)) {
        Expr amount = BroadcastNode::Make(IntImmNode::Make(m->dtype.element_of(), *k),
                                          m->dtype.lanes(), m->span);
        return CallNode::Make(m->dtype, OpNode::Get("tir.shift_left"), {other, amount}, m->span);
      }
    }
    return e;
  }

  Expr VisitExpr_(const DivNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* d = AsPtr<DivNode>(e);
    if (d == nullptr || !d->dtype.is_float()) return e;
    auto r = ExactReciprocal(d->b);
    if (!r) return e;
    Expr scalar = FloatImmNode::Make(d->dtype.element_of(), *r, d->b->span);
    return MulNode::Make(d->a, SameShape(d->b, scalar), d->span);
  }

 private:
  Expr MaskLogic(Expr e) {
    const auto* bin = AsPtr<BinaryNode>(e);
    if (bin == nullptr || !bin->dtype.is_vector()) return e;
    const char* fused = bin->kind == NodeKind::kAnd ? "dsl.vbclr" : "dsl.vbset";
    for (int i = 0; i < 2; ++i) {
      const Expr& x = i == 0 ? bin->a : bin->b;
      if (const auto* inv = AsPtr<NotNode>(i == 0 ? bin->b : bin->a)) {
        return Combined(fused, bin->dtype, x, inv->a, bin->span);
      }
    }
    return e;
  }
};

PrimFunc CombineInstructionsFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = Combiner().VisitStmt(f->body);
  if (body == f->body) return f;
  return f->WithBody(body);
}

}  // namespace

Pass CombineInstructions() {
  return CreatePrimFuncPass(CombineInstructionsFunc, 0, "dsl.CombineInstructions");
}
TESSERA_REGISTER_PASS("dsl.CombineInstructions", CombineInstructions);

}  // namespace transform
}  // namespace tessera
