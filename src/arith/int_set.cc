// Symbolic interval sets: interval arithmetic on expression ends (TVM's IntervalSetEvaluator).
#include "tessera/arith/int_set.h"

#include <numeric>

#include "tessera/arith/const_fold.h"
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"

namespace tessera {
namespace arith {

const Var& PosInf() {
  static const Var v = VarNode::Make("pos_inf", DataType::Handle());
  return v;
}

const Var& NegInf() {
  static const Var v = VarNode::Make("neg_inf", DataType::Handle());
  return v;
}

namespace {

using S = IntervalSet;

Expr Bin(NodeKind kind, const Expr& a, const Expr& b) { return FoldBinary(kind, a, b); }
Expr Const(DataType t, int64_t v) { return MakeConst(t, v); }

// min / max of interval ends, where an infinite end decides by itself.
Expr MinEnd(const Expr& a, const Expr& b, EndOp end = Bin) {
  if (IsNegInf(a) || IsNegInf(b)) return NegInf();
  if (IsPosInf(a)) return b;
  if (IsPosInf(b)) return a;
  return end(NodeKind::kMin, a, b);
}
Expr MaxEnd(const Expr& a, const Expr& b, EndOp end = Bin) {
  if (IsPosInf(a) || IsPosInf(b)) return PosInf();
  if (IsNegInf(a)) return b;
  if (IsNegInf(b)) return a;
  return end(NodeKind::kMax, a, b);
}

class Evaluator : public ExprFunctor<S> {
 public:
  Evaluator(const std::vector<std::pair<Var, S>>& dom, Analyzer& ana) : dom_(dom), ana_(ana) {}

  S VisitExpr_(const IntImmNode* op) override { return S::SinglePoint(GetRef(op)); }
  S VisitExpr_(const FloatImmNode* op) override { return S::SinglePoint(GetRef(op)); }
  S VisitExpr_(const StringImmNode*) override { return S::Everything(); }
  S VisitExpr_(const VarNode* op) override { return OfVar(op); }
  S VisitExpr_(const SizeVarNode* op) override { return OfVar(op); }
  S VisitExpr_(const CastNode* op) override {
    S v = VisitExpr(op->value);
    if (v.IsSinglePoint()) return S::SinglePoint(CastNode::Make(op->dtype, v.min_value));
    return IntervalMapEnds(v, [&](const Expr& e) { return Expr(CastNode::Make(op->dtype, e)); });
  }
  S VisitExpr_(const AddNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kAdd, a, b)) return *p;
    return IntervalAdd(a, b, Bin);
  }
  S VisitExpr_(const SubNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kSub, a, b)) return *p;
    return IntervalSub(a, b, Bin);
  }
  S VisitExpr_(const MulNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kMul, a, b)) return *p;
    if (a.IsSinglePoint()) std::swap(a, b);
    if (!b.IsSinglePoint()) return S::Everything();
    const Expr& e = b.min_value;
    if (IsConstInt(e, 0)) return S::SinglePoint(Const(op->dtype, 0));
    if (IsConstInt(e, 1)) return a;
    return Scale(a, e, NodeKind::kMul);
  }
  S VisitExpr_(const DivNode* op) override { return Divide(op, NodeKind::kDiv); }
  S VisitExpr_(const FloorDivNode* op) override { return Divide(op, NodeKind::kFloorDiv); }
  S VisitExpr_(const ModNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kMod, a, b)) return *p;
    if (!b.IsSinglePoint()) return S::Everything();
    const Expr& c = b.min_value;
    CheckNonZero(c, op->span);
    if (auto q = SameQuotient(a, c, NodeKind::kDiv)) return *q;
    return RemainderRange(c);
  }
  S VisitExpr_(const FloorModNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kFloorMod, a, b)) return *p;
    if (!b.IsSinglePoint()) return S::Everything();
    const Expr& c = b.min_value;
    CheckNonZero(c, op->span);
    if (!ana_.CanProveGreaterEqual(c, 0)) return RemainderRange(c);
    if (auto q = SameQuotient(a, c, NodeKind::kFloorDiv)) return *q;
    // Multiples of g = gcd(coeff, c) (plus a base) modulo c stop at c - g + base mod g.
    if (auto k = AsConstInt(c)) {
      ModularSet m = ana_.GetModularSet(op->a);
      int64_t g = std::gcd(m.coeff, *k);
      if (m.coeff > 0 && g > 1) {
        int64_t top = (*k / g - 1) * g + FloorMod(m.base, g);
        if (top >= 0 && top < *k) return {Const(op->dtype, 0), Const(op->dtype, top)};
      }
    }
    return RemainderRange(c);
  }
  S VisitExpr_(const MinNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kMin, a, b)) return *p;
    return IntervalMin(a, b, Bin);
  }
  S VisitExpr_(const MaxNode* op) override {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(NodeKind::kMax, a, b)) return *p;
    return IntervalMax(a, b, Bin);
  }
  S VisitExpr_(const EQNode* op) override { return Logical(op, NodeKind::kEQ); }
  S VisitExpr_(const NENode* op) override { return Logical(op, NodeKind::kNE); }
  S VisitExpr_(const LTNode* op) override { return Logical(op, NodeKind::kLT); }
  S VisitExpr_(const LENode* op) override { return Logical(op, NodeKind::kLE); }
  S VisitExpr_(const GTNode* op) override { return Logical(op, NodeKind::kGT); }
  S VisitExpr_(const GENode* op) override { return Logical(op, NodeKind::kGE); }
  S VisitExpr_(const AndNode* op) override { return Logical(op, NodeKind::kAnd); }
  S VisitExpr_(const OrNode* op) override { return Logical(op, NodeKind::kOr); }
  S VisitExpr_(const NotNode* op) override {
    S a = VisitExpr(op->a);
    if (a.IsSinglePoint()) return S::SinglePoint(FoldNot(a.min_value));
    return {Const(op->dtype, 0), Const(op->dtype, 1)};
  }
  S VisitExpr_(const SelectNode* op) override {
    S t = VisitExpr(op->true_value), f = VisitExpr(op->false_value);
    return {MinEnd(f.min_value, t.min_value), MaxEnd(f.max_value, t.max_value)};
  }
  S VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  S VisitExpr_(const RampNode* op) override {
    S base = VisitExpr(op->base);
    if (op->lanes < 0) return {base.min_value, PosInf()};
    S last = VisitExpr(AddNode::Make(
        op->base, MulNode::Make(op->stride, MakeConst(op->stride->dtype, int64_t(op->lanes - 1)))));
    return {MinEnd(base.min_value, last.min_value), MaxEnd(base.max_value, last.max_value)};
  }
  S VisitExpr_(const LetNode*) override { return S::Everything(); }
  S VisitExpr_(const CallNode*) override { return S::Everything(); }
  S VisitExpr_(const BufferLoadNode*) override { return S::Everything(); }
  S VisitExpr_(const ShuffleNode*) override { return S::Everything(); }

 private:
  S OfVar(const VarNode* op) {
    for (const auto& [var, set] : dom_) {
      if (var.get() != op) continue;
      // The ends may mention other ranging vars: relax them too (as deep as there are vars).
      if (depth_ >= dom_.size()) return set;
      ++depth_;
      S lo = set.HasLowerBound() ? VisitExpr(set.min_value) : S::Everything();
      S hi = set.HasUpperBound() ? VisitExpr(set.max_value) : S::Everything();
      --depth_;
      return {set.HasLowerBound() ? lo.min_value : set.min_value,
              set.HasUpperBound() ? hi.max_value : set.max_value};
    }
    return S::SinglePoint(GetRef(op));
  }
  std::optional<S> Points(NodeKind kind, const S& a, const S& b) {
    if (!a.IsSinglePoint() || !b.IsSinglePoint()) return std::nullopt;
    if (!a.HasLowerBound() || !b.HasLowerBound()) return std::nullopt;
    return S::SinglePoint(Bin(kind, a.min_value, b.min_value));
  }
  S Logical(const BinaryNode* op, NodeKind kind) {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (auto p = Points(kind, a, b)) return *p;
    return {Const(op->dtype, 0), Const(op->dtype, 1)};
  }
  // a * e or a / e for a single point e: the ends in order for e >= 0, swapped for e < 0, and
  // a select on the sign otherwise (a bounded on both sides).
  S Scale(const S& a, const Expr& e, NodeKind kind) {
    auto apply = [&](const Expr& end) { return Bin(kind, end, e); };
    if (ana_.CanProveGreaterEqual(e, 0)) return IntervalMapEnds(a, apply);
    if (ana_.CanProveLess(e, 0)) return IntervalMapEnds(a, apply, /*decreasing=*/true);
    if (a.HasLowerBound() && a.HasUpperBound()) {
      Expr sign = GENode::Make(e, MakeConst(e->dtype.element_of(), int64_t(0)));
      Expr e1 = apply(a.min_value), e2 = apply(a.max_value);
      return {SelectNode::Make(sign, e1, e2), SelectNode::Make(sign, e2, e1)};
    }
    return S::Everything();
  }
  S Divide(const BinaryNode* op, NodeKind kind) {
    S a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (!b.IsSinglePoint()) return S::Everything();
    CheckNonZero(b.min_value, op->span);
    if (auto p = Points(kind, a, b)) return *p;
    if (IsConstInt(b.min_value, 1)) return a;
    return Scale(a, b.min_value, kind);
  }
  // As TVM: a % c for a constant c >= 0 whose bounded ends share a quotient is a - c * q.
  std::optional<S> SameQuotient(const S& a, const Expr& c, NodeKind div) {
    if (!AsConstInt(c) || !ana_.CanProveGreaterEqual(c, 0)) return std::nullopt;
    if (!a.HasLowerBound() || !a.HasUpperBound()) return std::nullopt;
    Expr qmin = Bin(div, a.min_value, c), qmax = Bin(div, a.max_value, c);
    if (!ana_.CanProveEqual(qmax, qmin)) return std::nullopt;
    Expr shift = Bin(NodeKind::kMul, c, qmin);
    return S{Bin(NodeKind::kSub, a.min_value, shift), Bin(NodeKind::kSub, a.max_value, shift)};
  }
  S RemainderRange(const Expr& c) {
    Expr one = MakeConst(c->dtype, int64_t(1));
    if (ana_.CanProveGreaterEqual(c, 0)) {
      return {MakeConst(c->dtype, int64_t(0)), Bin(NodeKind::kSub, c, one)};
    }
    Expr abs = Bin(NodeKind::kMax, c, Bin(NodeKind::kSub, MakeConst(c->dtype, int64_t(0)), c));
    Expr bound = Bin(NodeKind::kSub, abs, one);
    return {Bin(NodeKind::kSub, MakeConst(c->dtype, int64_t(0)), bound), bound};
  }
  static void CheckNonZero(const Expr& c, const Span& span) {
    if (IsConstInt(c, 0)) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue) << "int_set: division or modulo by zero";
    }
  }

  const std::vector<std::pair<Var, S>>& dom_;
  Analyzer& ana_;
  size_t depth_ = 0;
};

}  // namespace

IntervalSet IntervalAdd(const IntervalSet& a, const IntervalSet& b, EndOp end) {
  return {a.HasLowerBound() && b.HasLowerBound() ? end(NodeKind::kAdd, a.min_value, b.min_value)
                                                 : Expr(NegInf()),
          a.HasUpperBound() && b.HasUpperBound() ? end(NodeKind::kAdd, a.max_value, b.max_value)
                                                 : Expr(PosInf())};
}

IntervalSet IntervalSub(const IntervalSet& a, const IntervalSet& b, EndOp end) {
  return {a.HasLowerBound() && b.HasUpperBound() ? end(NodeKind::kSub, a.min_value, b.max_value)
                                                 : Expr(NegInf()),
          a.HasUpperBound() && b.HasLowerBound() ? end(NodeKind::kSub, a.max_value, b.min_value)
                                                 : Expr(PosInf())};
}

IntervalSet IntervalMin(const IntervalSet& a, const IntervalSet& b, EndOp end) {
  return {MinEnd(a.min_value, b.min_value, end), MinEnd(a.max_value, b.max_value, end)};
}

IntervalSet IntervalMax(const IntervalSet& a, const IntervalSet& b, EndOp end) {
  return {MaxEnd(a.min_value, b.min_value, end), MaxEnd(a.max_value, b.max_value, end)};
}

IntervalSet EvalIntervalSet(const Expr& e, const std::vector<std::pair<Var, IntervalSet>>& dom,
                            Analyzer& ana) {
  return Evaluator(dom, ana).VisitExpr(e);
}

IntervalSet VectorIntervalSet(const Expr& vec, Analyzer& ana) {
  std::vector<std::pair<Var, IntervalSet>> none;
  return Evaluator(none, ana).VisitExpr(vec);
}

IntervalSet UnionLowerBound(const std::vector<IntervalSet>& sets) {
  if (sets.empty()) return {PosInf(), NegInf()};
  if (sets.size() == 1) return sets[0];
  Analyzer ana;
  Expr lo = sets[0].min_value, hi = sets[0].max_value;
  for (size_t n = 1; n < sets.size(); ++n) {
    const Expr& new_lo = sets[n].min_value;
    const Expr& new_hi = sets[n].max_value;
    // Kept when it leaves no gap on either side: new_lo <= hi + 1 and lo <= new_hi + 1.
    auto touches = [&](const Expr& low, const Expr& high) {
      if (IsNegInf(low) || IsPosInf(high)) return true;
      if (IsPosInf(low) || IsNegInf(high)) return false;
      return ana.CanProve(
          LENode::Make(low, Bin(NodeKind::kAdd, high, MakeConst(high->dtype, int64_t(1)))));
    };
    if (touches(new_lo, hi) && touches(lo, new_hi)) {
      lo = MinEnd(lo, new_lo);
      hi = MaxEnd(hi, new_hi);
    }
  }
  return {lo, hi};
}

}  // namespace arith
}  // namespace tessera
