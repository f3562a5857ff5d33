// tir.Simplify: constant folding, canonical comparisons and algebraic identities.
#include <cmath>

#include "tessera/ir/functor.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// Wrap a folded value to the type's width, as the generated C would.
int64_t Wrap(DataType t, int64_t v) {
  if (t.bits() >= 64) return v;
  if (t.is_bool()) return v != 0;
  uint64_t mask = (uint64_t(1) << t.bits()) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (t.bits() - 1))) return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

class Simplifier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const AddNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const SubNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const MulNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const DivNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const ModNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const FloorDivNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const FloorModNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const MinNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }
  Expr VisitExpr_(const MaxNode* op) override { return Arith(op, VisitExpr(op->a), VisitExpr(op->b)); }

  // Comparisons: fold constants; a > b and a >= b become b < a and b <= a.
  Expr VisitExpr_(const GTNode* op) override {
    return Compare(LTNode::Make(VisitExpr(op->b), VisitExpr(op->a), op->span));
  }
  Expr VisitExpr_(const GENode* op) override {
    return Compare(LENode::Make(VisitExpr(op->b), VisitExpr(op->a), op->span));
  }
  Expr VisitExpr_(const LTNode* op) override { return Compare(StmtExprMutator::VisitExpr_(op)); }
  Expr VisitExpr_(const LENode* op) override { return Compare(StmtExprMutator::VisitExpr_(op)); }
  Expr VisitExpr_(const EQNode* op) override { return Compare(StmtExprMutator::VisitExpr_(op)); }
  Expr VisitExpr_(const NENode* op) override { return Compare(StmtExprMutator::VisitExpr_(op)); }

  Expr VisitExpr_(const AndNode* op) override {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a->dtype.is_scalar()) {
      if (IsConstInt(a, 0) || IsConstInt(b, 0)) return Bool(false);
      if (IsConstInt(a, 1)) return b;
      if (IsConstInt(b, 1)) return a;
    }
    if (a == op->a && b == op->b) return GetRef(op);
    return AndNode::Make(a, b, op->span);
  }
  Expr VisitExpr_(const OrNode* op) override {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a->dtype.is_scalar()) {
      if (IsConstInt(a, 1) || IsConstInt(b, 1)) return Bool(true);
      if (IsConstInt(a, 0)) return b;
      if (IsConstInt(b, 0)) return a;
    }
    if (a == op->a && b == op->b) return GetRef(op);
    return OrNode::Make(a, b, op->span);
  }
  Expr VisitExpr_(const NotNode* op) override {
    Expr a = VisitExpr(op->a);
    if (auto c = AsConstInt(a)) return Bool(*c == 0);
    if (a == op->a) return GetRef(op);
    return NotNode::Make(a, op->span);
  }
  Expr VisitExpr_(const SelectNode* op) override {
    Expr c = VisitExpr(op->condition);
    if (auto v = AsConstInt(c)) return VisitExpr(*v ? op->true_value : op->false_value);
    Expr t = VisitExpr(op->true_value), f = VisitExpr(op->false_value);
    if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
    return SelectNode::Make(c, t, f, op->span);
  }
  Expr VisitExpr_(const CastNode* op) override {
    Expr v = VisitExpr(op->value);
    if (v->dtype == op->dtype) return v;
    if (op->dtype.is_scalar()) {
      if (auto* i = AsPtr<IntImmNode>(v)) {
        if (op->dtype.is_int_or_bool()) return IntImmNode::Make(op->dtype, Wrap(op->dtype, i->value), op->span);
        if (op->dtype.is_float()) return FloatImmNode::Make(op->dtype, static_cast<double>(i->value), op->span);
      }
    }
    if (v == op->value) return GetRef(op);
    return CastNode::Make(op->dtype, v, op->span);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Expr c = VisitExpr(op->condition);
    if (auto v = AsConstInt(c)) {
      if (*v) return VisitStmt(op->then_case);
      return op->else_case ? VisitStmt(op->else_case) : EvaluateNode::Make(Int32(0), op->span);
    }
    Stmt t = VisitStmt(op->then_case);
    Stmt e = op->else_case ? VisitStmt(op->else_case) : nullptr;
    if (c == op->condition && t == op->then_case && e == op->else_case) return GetRef(op);
    return IfThenElseNode::Make(c, t, e, op->span);
  }

 private:
  template <class Node>
  Expr Arith(const Node* op, Expr a, Expr b) {
    constexpr NodeKind k = Node::kKind;
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    DataType t = op->dtype;
    if (ca && cb && t.is_integer()) {
      int64_t x = *ca, y = *cb;
      bool div = k == NodeKind::kDiv || k == NodeKind::kMod || k == NodeKind::kFloorDiv ||
                 k == NodeKind::kFloorMod;
      if (!(div && y == 0)) {
        int64_t r = 0;
        switch (k) {
          case NodeKind::kAdd: r = x + y; break;
          case NodeKind::kSub: r = x - y; break;
          case NodeKind::kMul: r = x * y; break;
          case NodeKind::kDiv: r = x / y; break;
          case NodeKind::kMod: r = x % y; break;
          case NodeKind::kFloorDiv: r = FloorDivInt(x, y); break;
          case NodeKind::kFloorMod: r = FloorModInt(x, y); break;
          case NodeKind::kMin: r = std::min(x, y); break;
          case NodeKind::kMax: r = std::max(x, y); break;
          default: break;
        }
        return IntImmNode::Make(t, Wrap(t, r), op->span);
      }
    }
    auto* fa = AsPtr<FloatImmNode>(a);
    auto* fb = AsPtr<FloatImmNode>(b);
    if (fa && fb) {
      double x = fa->value, y = fb->value, r;
      switch (k) {
        case NodeKind::kAdd: r = x + y; break;
        case NodeKind::kSub: r = x - y; break;
        case NodeKind::kMul: r = x * y; break;
        case NodeKind::kDiv: r = x / y; break;
        case NodeKind::kMin: r = std::min(x, y); break;
        case NodeKind::kMax: r = std::max(x, y); break;
        default: goto identities;
      }
      if (t.bits() == 32) r = static_cast<float>(r);
      return FloatImmNode::Make(t, r, op->span);
    }
  identities:
    if (t.is_integer()) {
      if ((k == NodeKind::kAdd || k == NodeKind::kSub) && IsConstInt(b, 0)) return a;
      if (k == NodeKind::kAdd && IsConstInt(a, 0)) return b;
      if (k == NodeKind::kMul && (IsConstInt(b, 1))) return a;
      if (k == NodeKind::kMul && (IsConstInt(a, 1))) return b;
      if (k == NodeKind::kMul && (IsConstInt(a, 0) || IsConstInt(b, 0))) return MakeConst(t, int64_t(0), op->span);
      if ((k == NodeKind::kDiv || k == NodeKind::kFloorDiv) && IsConstInt(b, 1)) return a;
    }
    if (a == op->a && b == op->b) return GetRef(op);
    return Node::Make(a, b, op->span);
  }

  Expr Compare(Expr e) {
    auto* cmp = AsPtr<BinaryNode>(e);
    if (!cmp || !e->dtype.is_scalar()) return e;
    auto x = AsConstInt(cmp->a), y = AsConstInt(cmp->b);
    if (!x || !y) return e;
    bool r = false;
    switch (e->kind) {
      case NodeKind::kLT: r = *x < *y; break;
      case NodeKind::kLE: r = *x <= *y; break;
      case NodeKind::kEQ: r = *x == *y; break;
      case NodeKind::kNE: r = *x != *y; break;
      default: return e;
    }
    return Bool(r);
  }
};

PrimFunc SimplifyFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = Simplifier().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Expr SimplifyExpr(const Expr& e) { return Simplifier().VisitExpr(e); }

Pass Simplify() { return CreatePrimFuncPass(SimplifyFunc, 0, "tir.Simplify"); }
TESSERA_REGISTER_PASS("tir.Simplify", Simplify);

}  // namespace transform
}  // namespace tessera
