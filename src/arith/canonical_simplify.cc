// Canonical simplification: int32/int64 index expressions become sums of products with
// combined like terms (canonical_sum.cc); floordiv/floormod are reduced with bounds and
// divisibility; everything else gets constant folding and a few algebraic rules (here).
#include "canonical_simplify.h"

#include <cmath>

#include "tessera/arith/const_fold.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace arith {
namespace canonical {

Expr CanonicalSimplifier::VisitExpr(const Expr& e) {
  if (IsCanonicalType(e->dtype) && IsArithKind(e->kind)) {
    // Keep the original node (and its spans) when the canonical form is the same program.
    Expr r = FromSum(ToSum(e), e->dtype);
    return StructuralEqual(r, e) ? e : r;
  }
  return ExprMutator::VisitExpr(e);
}

// ---- non-canonical arithmetic: vectors, floats, small and unsigned integers ----
Expr CanonicalSimplifier::VisitExpr_(const AddNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const SubNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const MulNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const DivNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const ModNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const FloorDivNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const FloorModNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const MinNode* op) { return Arith(op); }

Expr CanonicalSimplifier::VisitExpr_(const MaxNode* op) { return Arith(op); }

// ---- comparisons: a > b and a >= b become b < a and b <= a ----
Expr CanonicalSimplifier::VisitExpr_(const GTNode* op) {
  return Literal(Compare(NodeKind::kLT, VisitExpr(op->b), VisitExpr(op->a), op));
}

Expr CanonicalSimplifier::VisitExpr_(const GENode* op) {
  return Literal(Compare(NodeKind::kLE, VisitExpr(op->b), VisitExpr(op->a), op));
}

Expr CanonicalSimplifier::VisitExpr_(const LTNode* op) {
  return Literal(Compare(NodeKind::kLT, VisitExpr(op->a), VisitExpr(op->b), op));
}

Expr CanonicalSimplifier::VisitExpr_(const LENode* op) {
  return Literal(Compare(NodeKind::kLE, VisitExpr(op->a), VisitExpr(op->b), op));
}

Expr CanonicalSimplifier::VisitExpr_(const EQNode* op) {
  return Literal(Compare(NodeKind::kEQ, VisitExpr(op->a), VisitExpr(op->b), op));
}

Expr CanonicalSimplifier::VisitExpr_(const NENode* op) {
  return Literal(Compare(NodeKind::kNE, VisitExpr(op->a), VisitExpr(op->b), op));
}

// Whether the bool b is the negation of a comparison (or negation) a: `i < 3` and `3 <= i`.
static bool Complementary(const Expr& a, const Expr& b) {
  NodeKind k = a->kind;
  bool comparison = k == NodeKind::kLT || k == NodeKind::kLE || k == NodeKind::kEQ ||
                    k == NodeKind::kNE || k == NodeKind::kNot;
  return comparison && StructuralEqual(NegateCondition(a), b);
}

Expr CanonicalSimplifier::VisitExpr_(const AndNode* op) { return AndOfOrs(Literal(FoldAnd(op))); }

Expr CanonicalSimplifier::AndOfOrs(const Expr& e) {
  bool boolean = AsPtr<AndNode>(e) || AsPtr<OrNode>(e);
  if (!boolean || !ana_.ConvertBooleanToAndOfOrs() || !e->dtype.is_scalar()) return e;
  return SimplifyAsAndOfOrs(e, ana_);
}

// As TVM's rewrite rules: `x == c1` and `x != c2` (or `x == c2`) of different constants c1, c2.
// For `&&` the result is `x == c1` (false); for `||`, `x != c2` (true for two `!=`).
static Expr FoldConstantComparisons(const Expr& a, const Expr& b, bool is_or) {
  auto* ba = AsPtr<BinaryNode>(a);
  auto* bb = AsPtr<BinaryNode>(b);
  auto eq_or_ne = [](const BinaryNode* n) {
    return n && (n->kind == NodeKind::kEQ || n->kind == NodeKind::kNE) && AsPtr<IntImmNode>(n->b);
  };
  if (!eq_or_ne(ba) || !eq_or_ne(bb) || !StructuralEqual(ba->a, bb->a)) return nullptr;
  if (AsPtr<IntImmNode>(ba->b)->value == AsPtr<IntImmNode>(bb->b)->value) return nullptr;
  bool a_eq = ba->kind == NodeKind::kEQ, b_eq = bb->kind == NodeKind::kEQ;
  if (!is_or) {
    if (a_eq && b_eq) return Bool(false);
    if (a_eq) return a;
    if (b_eq) return b;
    return nullptr;
  }
  if (!a_eq && !b_eq) return Bool(true);
  if (!a_eq) return a;
  if (!b_eq) return b;
  return nullptr;
}

// As TVM with apply_constraints_to_boolean_branches: the two sides take turns being simplified
// under the other (for `||`, under the other's negation), until neither changes twice in a row
// (at most four rounds).
void CanonicalSimplifier::SimplifyUnderEachOther(Expr* a, Expr* b, bool is_or) {
  int since_update = 0;
  for (int round = 0; round < 4 && since_update < 2; ++round) {
    Expr* to_update = round % 2 == 0 ? a : b;
    const Expr& other = round % 2 == 0 ? *b : *a;
    ConstraintContext known(ana_, is_or ? NegateCondition(other) : other);
    Expr updated = VisitExpr(*to_update);
    if (updated != *to_update) {
      *to_update = updated;
      since_update = 0;
    } else {
      ++since_update;
    }
  }
}

Expr CanonicalSimplifier::FoldAnd(const AndNode* op) {
  Expr a = op->a, b = op->b;
  if (ana_.ConstraintsOnBooleanBranches() && a->dtype.is_scalar()) {
    SimplifyUnderEachOther(&a, &b, false);
  } else {
    a = VisitExpr(a);
    b = VisitExpr(b);
  }
  if (a->dtype.is_scalar()) {
    if (IsConstInt(a, 0) || IsConstInt(b, 0)) return Bool(false);
    if (IsConstInt(a, 1)) return b;
    if (IsConstInt(b, 1)) return a;
    if (Complementary(a, b)) return Bool(false);  // x && !x
    if (Expr folded = FoldConstantComparisons(a, b, false)) return folded;
    // As TVM's rewrite rule for `x < c1 && floormod(x, c2) < c3`: the last period below c1
    // only counts up to its residue c3, so c1 narrows to where that residue is reached.
    auto* lt = AsPtr<LTNode>(a);
    auto* mod_lt = AsPtr<LTNode>(b);
    auto* mod = mod_lt ? AsPtr<FloorModNode>(mod_lt->a) : nullptr;
    if (lt && mod && lt->a->dtype.is_integer() && StructuralEqual(lt->a, mod->a)) {
      auto c1 = AsConstInt(lt->b), c2 = AsConstInt(mod->b), c3 = AsConstInt(mod_lt->b);
      if (c1 && c2 && c3 && *c2 > 0 && *c3 >= 0 && *c3 <= *c2) {
        int64_t r = FloorMod(*c1, *c2);
        std::optional<int64_t> bound;
        if (r == 0) {
          bound = *c1 - *c2 + *c3;
        } else if (r > *c3) {
          bound = *c1 - r + *c3;
        }
        if (bound && *bound != *c1) {
          Expr narrowed = VisitExpr(LTNode::Make(lt->a, Const(lt->a->dtype, *bound)));
          if (IsConstInt(narrowed, 0)) return Bool(false);
          if (IsConstInt(narrowed, 1)) return b;
          return AndNode::Make(narrowed, b, op->span);
        }
      }
    }
  }
  if (a == op->a && b == op->b) return GetRef(op);
  return AndNode::Make(a, b, op->span);
}

Expr CanonicalSimplifier::VisitExpr_(const OrNode* op) { return AndOfOrs(Literal(FoldOr(op))); }

Expr CanonicalSimplifier::FoldOr(const OrNode* op) {
  Expr a = op->a, b = op->b;
  if (ana_.ConstraintsOnBooleanBranches() && a->dtype.is_scalar()) {
    SimplifyUnderEachOther(&a, &b, true);
  } else {
    a = VisitExpr(a);
    b = VisitExpr(b);
  }
  if (a->dtype.is_scalar()) {
    if (IsConstInt(a, 1) || IsConstInt(b, 1)) return Bool(true);
    if (IsConstInt(a, 0)) return b;
    if (IsConstInt(b, 0)) return a;
    if (Complementary(a, b)) return Bool(true);  // x || !x
    if (Expr folded = FoldConstantComparisons(a, b, true)) return folded;
  }
  if (a == op->a && b == op->b) return GetRef(op);
  return OrNode::Make(a, b, op->span);
}

Expr CanonicalSimplifier::VisitExpr_(const NotNode* op) { return Literal(FoldNot(op)); }

Expr CanonicalSimplifier::FoldNot(const NotNode* op) {
  Expr a = VisitExpr(op->a);
  if (auto c = AsConstInt(a)) return Bool(*c == 0);
  if (auto* n = AsPtr<NotNode>(a)) return n->a;
  if (a == op->a) return GetRef(op);
  return NotNode::Make(a, op->span);
}

Expr CanonicalSimplifier::VisitExpr_(const SelectNode* op) {
  Expr c = VisitExpr(op->condition);
  if (auto v = AsConstInt(c)) return VisitExpr(*v ? op->true_value : op->false_value);
  // As TVM: the value chosen when the condition holds is simplified knowing it (and the other
  // knowing its negation); a value that is not chosen does not matter.
  Expr t, f;
  if (c->dtype.is_scalar()) {
    {
      ConstraintContext known(ana_, c);
      t = VisitExpr(op->true_value);
    }
    {
      ConstraintContext known(ana_, NegateCondition(c));
      f = VisitExpr(op->false_value);
    }
  } else {
    t = VisitExpr(op->true_value);
    f = VisitExpr(op->false_value);
  }
  if (StructuralEqual(t, f)) return t;  // as TVM: select(c, y, y) is y
  if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
  return SelectNode::Make(c, t, f, op->span);
}

Expr CanonicalSimplifier::VisitExpr_(const CastNode* op) {
  Expr v = VisitExpr(op->value);
  if (v->dtype == op->dtype) return v;
  if (IsCanonicalType(op->dtype) && IsCanonicalType(v->dtype) && IsArithKind(v->kind)) {
    if (Expr pushed = PushCast(op->dtype, v)) return pushed;
  }
  if (op->dtype.is_scalar()) {
    if (auto* i = AsPtr<IntImmNode>(v)) {
      if (op->dtype.is_int_or_bool()) {
        return IntImmNode::Make(op->dtype, WrapToType(op->dtype, i->value), op->span);
      }
      if (op->dtype.is_float()) {
        return FloatImmNode::Make(op->dtype, static_cast<double>(i->value), op->span);
      }
    }
    // A float constant with an integer value that fits (such as a folded ceil) converts exactly.
    auto* f = AsPtr<FloatImmNode>(v);
    if (f && op->dtype.is_integer() && std::trunc(f->value) == f->value) {
      ConstIntBound range = ConstIntBound::OfType(op->dtype);
      if (f->value >= double(range.min_value) && f->value <= double(range.max_value)) {
        return IntImmNode::Make(op->dtype, static_cast<int64_t>(f->value), op->span);
      }
    }
  }
  if (v == op->value) return GetRef(op);
  return CastNode::Make(op->dtype, v, op->span);
}

// As TVM's canonical form: a cast of an index sum is the sum of the cast terms,
// cast(t, a + b) = cast(t, a) + cast(t, b), and a cast of a division or modulo by a constant
// goes to its numerator. A widening cast always (index arithmetic is read as not overflowing,
// as everywhere in the simplifier); a narrowing one only when the bounds put every partial
// sum, term and numerator in the narrower type, so that no value changes.
Expr CanonicalSimplifier::PushCast(DataType t, const Expr& v) {
  DataType from = v->dtype;
  bool widening = t.bits() >= from.bits();
  ConstIntBound range = ConstIntBound::OfType(t);
  auto fits = [&](const ConstIntBound& b) {
    return b.min_value >= range.min_value && b.max_value <= range.max_value;
  };
  Sum sum = ToSum(v);
  if (sum.terms.empty()) return Expr();
  if (!widening) {
    // The partial sums in the order the sum is written: positive terms, a positive base, the
    // negative terms, a negative base.
    Sum partial;
    auto add_checked = [&](const Sum::Term& term) {
      partial.Add(term.factors, term.coeff);
      Sum one;
      one.Add(term.factors, term.coeff);
      return fits(SumBound(one, from)) && fits(SumBound(partial, from));
    };
    for (const auto& term : sum.terms)
      if (term.coeff > 0 && !add_checked(term)) return Expr();
    if (sum.base > 0) {
      partial.base = sum.base;
      if (!fits(SumBound(partial, from))) return Expr();
    }
    for (const auto& term : sum.terms)
      if (term.coeff < 0 && !add_checked(term)) return Expr();
    partial.base = sum.base;
    if (!fits(SumBound(partial, from))) return Expr();
  }
  // A single atom that is not a division or modulo by a constant has nothing to push into.
  auto div_mod_of_const = [&](const Expr& e) -> const BinaryNode* {
    if (e->kind != NodeKind::kFloorDiv && e->kind != NodeKind::kFloorMod &&
        e->kind != NodeKind::kDiv && e->kind != NodeKind::kMod)
      return nullptr;
    auto* bin = static_cast<const BinaryNode*>(e.get());
    auto c = AsConstInt(bin->b);
    if (!c || WrapToType(t, *c) != *c) return nullptr;
    if (!widening && !fits(ana_.GetConstIntBound(bin->a))) return nullptr;
    return bin;
  };
  auto cast_product = [&](const std::vector<int>& factors) -> Expr {
    Expr p = Product(factors, from);
    if (factors.size() == 1) {
      if (auto* bin = div_mod_of_const(p)) {
        Expr a = CastNode::Make(t, bin->a);
        Expr c = Const(t, *AsConstInt(bin->b));
        switch (p->kind) {
          case NodeKind::kFloorDiv:
            return FloorDivNode::Make(a, c);
          case NodeKind::kFloorMod:
            return FloorModNode::Make(a, c);
          case NodeKind::kDiv:
            return DivNode::Make(a, c);
          default:
            return ModNode::Make(a, c);
        }
      }
    }
    return CastNode::Make(t, p);
  };
  if (sum.base == 0 && sum.terms.size() == 1 && sum.terms[0].coeff == 1 &&
      (sum.terms[0].factors.size() != 1 || !div_mod_of_const(atoms_[sum.terms[0].factors[0]]))) {
    return Expr();
  }
  Expr e;
  for (const auto& term : sum.terms) {
    Expr x = cast_product(term.factors);
    if (term.coeff != 1) x = MulNode::Make(x, Const(t, term.coeff));
    e = e ? Expr(AddNode::Make(e, x)) : x;
  }
  if (sum.base != 0) e = AddNode::Make(e, Const(t, sum.base));
  return FromSum(ToSum(e), t);
}

Expr CanonicalSimplifier::VisitExpr_(const LetNode* op) {
  Expr value = VisitExpr(op->value);
  // As TVM: a let of a constant or a variable is inlined into its body.
  if (value->kind == NodeKind::kIntImm || value->kind == NodeKind::kFloatImm ||
      value->kind == NodeKind::kVar) {
    VarMap vmap;
    vmap[op->var.get()] = value;
    return VisitExpr(Substitute(op->body, vmap));
  }
  if (value->dtype.is_integer() && value->dtype.is_scalar()) ana_.Bind(op->var, value);
  Expr body = VisitExpr(op->body);
  ana_.Unbind(op->var);
  if (value == op->value && body == op->body) return GetRef(op);
  return LetNode::Make(op->var, value, body, op->span);
}

Expr CanonicalSimplifier::VisitExpr_(const CallNode* op) {
  // As TVM: the condition of if_then_else is known in its true value, its negation in the
  // false value.
  if (op->is_op("tir.if_then_else") && op->args.size() == 3 && op->args[0]->dtype.is_scalar()) {
    Expr c = VisitExpr(op->args[0]);
    if (auto v = AsConstInt(c)) return VisitExpr(*v ? op->args[1] : op->args[2]);
    Expr t, f;
    {
      ConstraintContext known(ana_, c);
      t = VisitExpr(op->args[1]);
    }
    {
      ConstraintContext known(ana_, NegateCondition(c));
      f = VisitExpr(op->args[2]);
    }
    // As TVM: if_then_else(c1, if_then_else(c2, a, b), b) is if_then_else(c1 && c2, a, b).
    if (auto* inner = AsPtr<CallNode>(t)) {
      if (inner->is_op("tir.if_then_else") && inner->args.size() == 3 &&
          StructuralEqual(inner->args[2], f)) {
        return CallNode::Make(op->dtype, op->op,
                              {AndNode::Make(c, inner->args[0]), inner->args[1], f}, op->span);
      }
    }
    if (c == op->args[0] && t == op->args[1] && f == op->args[2]) return GetRef(op);
    return CallNode::Make(op->dtype, op->op, {c, t, f}, op->span);
  }
  Expr r = ExprMutator::VisitExpr_(op);
  auto* call = AsPtr<CallNode>(r);
  if (call && call->is_op("tir.if_then_else")) {
    if (auto c = AsConstInt(call->args[0])) return *c ? call->args[1] : call->args[2];
  }
  // Shifts and bitwise operations of two integer constants (a shift only by an amount within
  // the type's bits; out-of-range shifts are left for the code generators to report).
  if (call && call->args.size() == 2 && call->dtype.is_scalar() &&
      (call->is_op("tir.shift_left") || call->is_op("tir.shift_right") ||
       call->is_op("tir.bitwise_and") || call->is_op("tir.bitwise_or") ||
       call->is_op("tir.bitwise_xor"))) {
    auto* a = AsPtr<IntImmNode>(call->args[0]);
    auto* b = AsPtr<IntImmNode>(call->args[1]);
    bool shift = call->is_op("tir.shift_left") || call->is_op("tir.shift_right");
    if (a && b && a->dtype == call->dtype && b->dtype == call->dtype &&
        (!shift || (b->value >= 0 && b->value < call->dtype.bits()))) {
      auto* name = AsPtr<OpNode>(call->op);
      if (name) {
        if (Expr folded = TryConstFoldIntrinsic(name->name, call->args[0], call->args[1], op->span))
          return folded;
      }
    }
  }
  // As TVM: ceil of a constant, and ceil(log2(c)) (topi's ceil_log2), fold; the result is
  // the same whatever the target's rounding.
  if (call && call->is_op("tir.ceil") && call->args.size() == 1 && call->dtype.is_scalar()) {
    const Expr& arg = call->args[0];
    if (auto* f = AsPtr<FloatImmNode>(arg)) {
      return FloatImmNode::Make(call->dtype, std::ceil(f->value), op->span);
    }
    auto* log = AsPtr<CallNode>(arg);
    auto* f = log && log->is_op("tir.log2") && log->args.size() == 1
                  ? AsPtr<FloatImmNode>(log->args[0])
                  : nullptr;
    if (f && f->value > 0) {
      return FloatImmNode::Make(call->dtype, std::ceil(std::log2(f->value)), op->span);
    }
  }
  // As TVM: likely(c) is true where c is a known literal (and so is the whole call).
  if (call && call->is_op("tir.likely") && call->args.size() == 1) {
    if (auto c = AsConstInt(call->args[0])) return Bool(*c != 0);
    if (auto known = ana_.MatchLiteral(call->args[0])) return Bool(*known);
    return Literal(r);
  }
  return r;
}

Expr CanonicalSimplifier::VisitExpr_(const VarNode* op) {
  return op->dtype.is_bool() && op->dtype.is_scalar() ? Literal(GetRef(op)) : GetRef(op);
}

Expr CanonicalSimplifier::Literal(const Expr& e) {
  if (!e->dtype.is_scalar() || AsConstInt(e)) return e;
  if (auto known = ana_.MatchLiteral(e)) return Bool(*known);
  return e;
}

// ---- folding for the other types ----

template <class Node>
Expr CanonicalSimplifier::Arith(const Node* op) {
  constexpr NodeKind k = Node::kKind;
  Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
  DataType t = op->dtype;
  if (t.is_vector()) {
    if (Expr v = VectorRule(k, a, b, t)) return v;
  }
  auto ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb && t.is_integer()) {
    int64_t x = *ca, y = *cb;
    bool div = k == NodeKind::kDiv || k == NodeKind::kMod || k == NodeKind::kFloorDiv ||
               k == NodeKind::kFloorMod;
    if (!(div && y == 0)) {
      int64_t r = 0;
      switch (k) {
        case NodeKind::kAdd:
          r = x + y;
          break;
        case NodeKind::kSub:
          r = x - y;
          break;
        case NodeKind::kMul:
          r = x * y;
          break;
        case NodeKind::kDiv:
          r = x / y;
          break;
        case NodeKind::kMod:
          r = x % y;
          break;
        case NodeKind::kFloorDiv:
          r = FloorDiv(x, y);
          break;
        case NodeKind::kFloorMod:
          r = FloorMod(x, y);
          break;
        case NodeKind::kMin:
          r = std::min(x, y);
          break;
        case NodeKind::kMax:
          r = std::max(x, y);
          break;
        default:
          break;
      }
      return IntImmNode::Make(t, WrapToType(t, r), op->span);
    }
  }
  auto* fa = AsPtr<FloatImmNode>(a);
  auto* fb = AsPtr<FloatImmNode>(b);
  if (fa && fb) {
    double x = fa->value, y = fb->value, r;
    switch (k) {
      case NodeKind::kAdd:
        r = x + y;
        break;
      case NodeKind::kSub:
        r = x - y;
        break;
      case NodeKind::kMul:
        r = x * y;
        break;
      case NodeKind::kDiv:
        r = x / y;
        break;
      case NodeKind::kMin:
        r = std::min(x, y);
        break;
      case NodeKind::kMax:
        r = std::max(x, y);
        break;
      default:
        goto identities;
    }
    if (t.bits() == 32) r = static_cast<float>(r);
    return FloatImmNode::Make(t, r, op->span);
  }
identities:
  if (t.is_integer()) {
    if ((k == NodeKind::kAdd || k == NodeKind::kSub) && IsConstInt(b, 0)) return a;
    if (k == NodeKind::kAdd && IsConstInt(a, 0)) return b;
    if (k == NodeKind::kMul && IsConstInt(b, 1)) return a;
    if (k == NodeKind::kMul && IsConstInt(a, 1)) return b;
    if (k == NodeKind::kMul && (IsConstInt(a, 0) || IsConstInt(b, 0))) {
      return MakeConst(t, int64_t(0), op->span);
    }
    if ((k == NodeKind::kDiv || k == NodeKind::kFloorDiv) && IsConstInt(b, 1)) return a;
  }
  if (a == op->a && b == op->b) return GetRef(op);
  return Node::Make(a, b, op->span);
}

// Ramp and Broadcast arithmetic: lane-wise operations on them stay Ramps and Broadcasts.
Expr CanonicalSimplifier::VectorRule(NodeKind k, const Expr& a, const Expr& b, DataType t) {
  auto* ba = AsPtr<BroadcastNode>(a);
  auto* bb = AsPtr<BroadcastNode>(b);
  auto* ra = AsPtr<RampNode>(a);
  auto* rb = AsPtr<RampNode>(b);
  int lanes = t.lanes();
  auto bin = [&](NodeKind kind, const Expr& x, const Expr& y) -> Expr {
    switch (kind) {
      case NodeKind::kAdd:
        return AddNode::Make(x, y);
      case NodeKind::kSub:
        return SubNode::Make(x, y);
      case NodeKind::kMul:
        return MulNode::Make(x, y);
      case NodeKind::kDiv:
        return DivNode::Make(x, y);
      case NodeKind::kMod:
        return ModNode::Make(x, y);
      case NodeKind::kFloorDiv:
        return FloorDivNode::Make(x, y);
      case NodeKind::kFloorMod:
        return FloorModNode::Make(x, y);
      case NodeKind::kMin:
        return MinNode::Make(x, y);
      case NodeKind::kMax:
        return MaxNode::Make(x, y);
      default:
        return nullptr;
    }
  };
  auto ramp = [&](const Expr& base, const Expr& stride) -> Expr {
    Expr s = VisitExpr(stride);
    if (IsConstInt(s, 0)) return BroadcastNode::Make(VisitExpr(base), lanes);
    return RampNode::Make(VisitExpr(base), s, lanes);
  };
  if (ba && bb) {
    Expr v = bin(k, ba->value, bb->value);
    return v ? Expr(BroadcastNode::Make(VisitExpr(v), lanes)) : nullptr;
  }
  if (!t.is_integer()) return nullptr;
  if (k == NodeKind::kAdd || k == NodeKind::kSub) {
    if (ra && rb) return ramp(bin(k, ra->base, rb->base), bin(k, ra->stride, rb->stride));
    if (ra && bb) return ramp(bin(k, ra->base, bb->value), ra->stride);
    if (ba && rb) {
      Expr stride =
          k == NodeKind::kAdd ? rb->stride : SubNode::Make(Const(rb->stride->dtype, 0), rb->stride);
      return ramp(bin(k, ba->value, rb->base), stride);
    }
  }
  if (k == NodeKind::kMul) {
    if (ra && bb)
      return ramp(MulNode::Make(ra->base, bb->value), MulNode::Make(ra->stride, bb->value));
    if (ba && rb)
      return ramp(MulNode::Make(ba->value, rb->base), MulNode::Make(ba->value, rb->stride));
  }
  // floordiv/floormod of a ramp that stays inside one period of the divisor.
  if ((k == NodeKind::kFloorDiv || k == NodeKind::kFloorMod) && ra && bb) {
    auto c = AsConstInt(bb->value);
    auto s = AsConstInt(ra->stride);
    if (c && s && *c > 0 && *s >= 0) {
      // base = coeff * k + b: base mod c is b mod g plus a multiple of g = gcd(coeff, c), so
      // the lanes stay in one period when (b mod g) + s * (lanes - 1) < g.
      ModularSet m = ana_.GetModularSet(ra->base);
      int64_t g = std::gcd(m.coeff, *c);
      if (FloorMod(m.base, g) + *s * (lanes - 1) < g) {
        if (k == NodeKind::kFloorDiv) {
          return BroadcastNode::Make(VisitExpr(FloorDivNode::Make(ra->base, bb->value)), lanes);
        }
        return ramp(FloorModNode::Make(ra->base, bb->value), ra->stride);
      }
    }
  }
  return nullptr;
}

Expr CanonicalSimplifier::Compare(NodeKind k, Expr a, Expr b, const BinaryNode* orig) {
  DataType t = a->dtype;
  // A value compared with itself, of a scalar integer or bool type (the index types decide it
  // below): the same expression without calls (whose results may differ between evaluations)
  // is equal to itself. Never for floats: x != x is how a NaN is detected (topi's argmax reads
  // NaN through it), and x == x is false for a NaN.
  if (t.is_scalar() && !t.is_float() && !IsCanonicalType(t) && StructuralEqual(a, b)) {
    bool has_call = false;
    PostOrderVisit(a, [&](const ObjectRef& n) { has_call |= AsPtr<CallNode>(n) != nullptr; });
    if (!has_call) return Bool(Decide(k, 0));
  }
  if (t.is_scalar() && t.is_integer()) {
    auto x = AsConstInt(a), y = AsConstInt(b);
    if (x && y) return Bool(Decide(k, *x < *y ? -1 : (*x == *y ? 0 : 1)));
    if (IsCanonicalType(t)) {
      Sum diff = ToSum(a);
      diff.AddSum(ToSum(b), -1);
      Expr d = FromSum(diff, t);
      ConstIntBound bound = ana_.GetConstIntBound(d);
      // A difference whose terms reach beyond the type: its bound as a whole number.
      ConstIntBound whole = SumBound(diff, t);
      if (WrapToType(t, whole.min_value) != whole.min_value ||
          WrapToType(t, whole.max_value) != whole.max_value) {
        bound = whole;
      }
      switch (k) {
        case NodeKind::kLT:
          if (bound.max_value < 0) return Bool(true);
          if (bound.min_value >= 0) return Bool(false);
          break;
        case NodeKind::kLE:
          if (bound.max_value <= 0) return Bool(true);
          if (bound.min_value > 0) return Bool(false);
          break;
        case NodeKind::kEQ:
        case NodeKind::kNE: {
          bool ne = k == NodeKind::kNE;
          if (bound.is_const()) return Bool((bound.min_value == 0) != ne);
          ModularSet m = ana_.GetModularSet(d);
          if (bound.min_value > 0 || bound.max_value < 0 || (m.coeff > 0 && m.base != 0)) {
            return Bool(ne);
          }
          break;
        }
        default:
          break;
      }
      // As TVM's rewrite rules floordiv(x, c1) < c2 -> x < c1 * c2 and
      // c1 < floordiv(x, c2) -> (c1 + 1) * c2 - 1 < x (positive divisors).
      if (k == NodeKind::kLT) {
        auto* div_a = AsPtr<FloorDivNode>(a);
        auto* div_b = AsPtr<FloorDivNode>(b);
        auto ca = AsConstInt(a), cb = AsConstInt(b);
        if (div_a && cb) {
          auto c1 = AsConstInt(div_a->b);
          int64_t v = 0;
          if (c1 && *c1 > 0 && !__builtin_mul_overflow(*c1, *cb, &v) && WrapToType(t, v) == v) {
            Expr lhs = div_a->a, rhs = Const(t, v);
            return Compare(k, lhs, rhs,
                           static_cast<const BinaryNode*>(LTNode::Make(lhs, rhs).get()));
          }
        }
        if (div_b && ca) {
          auto c2 = AsConstInt(div_b->b);
          int64_t v = 0;
          if (c2 && *c2 > 0 && !__builtin_mul_overflow(*ca + 1, *c2, &v) &&
              WrapToType(t, v - 1) == v - 1) {
            v -= 1;
            Expr lhs = Const(t, v), rhs = div_b->a;
            return Compare(k, lhs, rhs,
                           static_cast<const BinaryNode*>(LTNode::Make(lhs, rhs).get()));
          }
        }
      }
      if (ana_.HasKnownComparisons()) {
        if (Expr known = KnownCompare(k, a, b)) return known;
      }
      if (k == NodeKind::kLT) {
        if (Expr scaled = ScaledCompare(diff, t)) return scaled;
      }
      // As TVM's rewrite rules x < c1 - y -> x + y < c1 and c1 - y < x -> c1 < x + y (and the
      // same for <=): a side that is a positive constant less one term gives the term to the
      // other side.
      if ((k == NodeKind::kLT || k == NodeKind::kLE) && !x && !y) {
        for (int side = 0; side < 2; ++side) {
          Sum s = ToSum(side == 0 ? a : b);
          if (s.base <= 0 || s.terms.size() != 1 || s.terms[0].coeff >= 0) continue;
          Sum other = ToSum(side == 0 ? b : a);
          other.Add(s.terms[0].factors, -s.terms[0].coeff, s.terms[0].inner);
          Expr moved = FromSum(other, t), constant = Const(t, s.base);
          Expr na = side == 0 ? constant : moved, nb = side == 0 ? moved : constant;
          return Compare(k, na, nb, orig);
        }
      }
      // As TVM's rewrite rules x + c1 < c2 -> x < c2 - c1 and c1 < x + c2 -> c1 - c2 < x:
      // the constant offset of a sum compared with a constant moves to the constant.
      if (x || y) {
        Sum sum = ToSum(x ? b : a);
        if (sum.base != 0 && !sum.is_const()) {
          int64_t c = (x ? *x : *y) - sum.base;
          sum.base = 0;
          // As TVM: -y == c is y == -c.
          bool eq = k == NodeKind::kEQ || k == NodeKind::kNE;
          if (eq && sum.terms.size() == 1 && sum.terms[0].coeff == -1) {
            sum.terms[0].coeff = 1;
            c = -c;
          }
          // -y < c is -c < y (and c < -y is y < -c), as TVM's rewrite rules.
          if (!eq && sum.terms.size() == 1 && sum.terms[0].coeff == -1 && WrapToType(t, -c) == -c) {
            sum.terms[0].coeff = 1;
            Expr moved = FromSum(sum, t);
            Expr constant = Const(t, -c);
            a = x ? moved : constant;
            b = x ? constant : moved;
            return Compare(k, a, b, orig);
          }
          // A constant outside the type: the moved sum (a value of the type) is on one side of
          // it (TVM reads index arithmetic as not overflowing: x + INT_MIN == 0 is false).
          if (WrapToType(t, c) != c) {
            bool one_value = sum.terms.size() == 1 && sum.terms[0].coeff == 1 &&
                             sum.terms[0].factors.size() == 1;
            if (eq && one_value) {
              bool const_above = c > 0;
              bool const_left = x.has_value();
              return Bool(Decide(k, const_above == const_left ? 1 : -1));
            }
          } else {
            Expr moved = FromSum(sum, t);
            Expr constant = Const(t, c);
            a = x ? constant : moved;
            b = x ? moved : constant;
          }
        }
      }
    }
  } else if (t.is_scalar()) {
    auto x = AsConstInt(a), y = AsConstInt(b);
    if (x && y) return Bool(Decide(k, *x < *y ? -1 : (*x == *y ? 0 : 1)));
  }
  bool same = (orig->kind == k) && a == orig->a && b == orig->b;
  if (same) return GetRef(orig);
  switch (k) {
    case NodeKind::kLT:
      return LTNode::Make(a, b, orig->span);
    case NodeKind::kLE:
      return LENode::Make(a, b, orig->span);
    case NodeKind::kEQ:
      return EQNode::Make(a, b, orig->span);
    default:
      return NENode::Make(a, b, orig->span);
  }
}

// As TVM's canonical form of `a < b`: with a - b = d*Q + e (d > 1 the common factor of the
// base and of the coefficients other than +-1) and 0 <= e < d, `a < b` is `Q < 0`
// (d*Q < -e holds exactly when Q < 0). With e = floormod(z, m) and d dividing m,
// e = d * floormod(floordiv(z, d), m/d) + (something in [0, d)), so `a < b` is
// `Q + floormod(floordiv(z, d), m/d) < 0`.
Expr CanonicalSimplifier::ScaledCompare(const Sum& diff, DataType t) {
  int64_t g = diff.base;
  bool scaled = false;
  for (const auto& term : diff.terms) {
    if (term.coeff > 1 || term.coeff < -1) {
      scaled = true;
      g = Gcd(g, term.coeff);
    }
  }
  if (!scaled || g <= 1) return Expr();
  Sum divisible, extra;
  divisible.base = diff.base / g;  // g divides the base
  for (const auto& term : diff.terms) {
    if (term.coeff % g == 0) {
      divisible.Add(term.factors, term.coeff / g, term.inner);
    } else {
      extra.Add(term.factors, term.coeff, term.inner);
    }
  }
  Expr zero = Const(t, 0);
  ConstIntBound b = ana_.GetConstIntBound(FromSum(extra, t));
  if (b.min_value >= 0 && b.max_value < g) {
    Expr lhs = FromSum(divisible, t);
    return Compare(NodeKind::kLT, lhs, zero,
                   static_cast<const BinaryNode*>(LTNode::Make(lhs, zero).get()));
  }
  if (extra.base == 0 && extra.terms.size() == 1 && extra.terms[0].coeff == 1 &&
      extra.terms[0].factors.size() == 1) {
    if (auto* mod = AsPtr<FloorModNode>(atoms_[extra.terms[0].factors[0]])) {
      auto m = AsConstInt(mod->b);
      if (m && *m > 0 && *m % g == 0) {
        Expr part = FloorModNode::Make(FloorDivNode::Make(mod->a, Const(t, g)), Const(t, *m / g));
        divisible.AddSum(ToSum(part), 1);
        Expr lhs = FromSum(divisible, t);
        return Compare(NodeKind::kLT, lhs, zero,
                       static_cast<const BinaryNode*>(LTNode::Make(lhs, zero).get()));
      }
    }
  }
  return Expr();
}

Expr CanonicalSimplifier::KnownCompare(NodeKind k, const Expr& a, const Expr& b) {
  ConstIntBound d = ana_.KnownDifference(a, b);  // the known range of a - b
  // `x - y < c` (the form a scaled comparison leaves): the known range of x - y, less c.
  if (d.min_value == ConstIntBound::kNegInf && d.max_value == ConstIntBound::kPosInf) {
    auto* sub = AsPtr<SubNode>(a);
    auto c = AsConstInt(b);
    if (sub && c) {
      ConstIntBound xy = ana_.KnownDifference(sub->a, sub->b);
      if (xy.min_value != ConstIntBound::kNegInf) d.min_value = xy.min_value - *c;
      if (xy.max_value != ConstIntBound::kPosInf) d.max_value = xy.max_value - *c;
    }
  }
  auto not_equal = [&] { return ana_.KnownNotEqual(a, b); };
  // As TVM: a comparison that the known ones do not decide may still narrow to a stronger
  // one (a <= b with a >= b known is a == b; with a != b known it is a < b).
  auto eq = [&] { return AsConstInt(a) ? EQNode::Make(b, a) : EQNode::Make(a, b); };
  switch (k) {
    case NodeKind::kLT:
      if (d.max_value < 0) return Bool(true);
      if (d.min_value >= 0) return Bool(false);
      break;
    case NodeKind::kLE:
      if (d.max_value <= 0) return Bool(true);
      if (d.min_value > 0) return Bool(false);
      if (d.min_value == 0) return eq();
      if (not_equal()) return LTNode::Make(a, b);
      break;
    case NodeKind::kEQ:
    case NodeKind::kNE: {
      bool ne = k == NodeKind::kNE;
      if (d.max_value < 0 || d.min_value > 0) return Bool(ne);
      if (d.is_const()) return Bool(!ne);
      if (not_equal()) return Bool(ne);
      if (ne && d.max_value == 0) return LTNode::Make(a, b);
      if (ne && d.min_value == 0) return LTNode::Make(b, a);
      break;
    }
    default:
      break;
  }
  return nullptr;
}

bool CanonicalSimplifier::Decide(NodeKind k, int sign) {
  switch (k) {
    case NodeKind::kLT:
      return sign < 0;
    case NodeKind::kLE:
      return sign <= 0;
    case NodeKind::kEQ:
      return sign == 0;
    default:
      return sign != 0;
  }
}

}  // namespace canonical

Expr Analyzer::Simplify(const Expr& e) {
  return canonical::CanonicalSimplifier(*this).VisitExpr(e);
}

Expr Analyzer::CanonicalSimplify(const Expr& e) {
  return canonical::CanonicalSimplifier(*this, /*tvm_canonical=*/true).VisitExpr(e);
}

}  // namespace arith
}  // namespace tessera
