// Linear forms of expressions in chosen variables, the bounds a conjunction of comparisons
// puts on variables, and repeated sub-computations.
#include <algorithm>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_solver.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace arith {
namespace {

// `coeff * var + base`; a null part is zero.
struct LinearForm {
  Expr base, coeff;
};

Expr Neg(const Expr& e) { return MulE(e, IntConst(e->dtype, -1)); }

// e as a linear form in one variable; false when it is not linear in it.
bool Linear(const Expr& e, const VarNode* var, LinearForm* out) {
  auto add = [](const Expr& a, const Expr& b) -> Expr {
    if (!a) return b;
    if (!b) return a;
    return AddE(a, b);
  };
  if (auto* v = AsPtr<VarNode>(e)) {
    if (v == var) {
      *out = {nullptr, IntConst(DataType::Int(v->dtype.bits(), v->dtype.lanes()), 1)};
    } else {
      *out = {e, nullptr};
    }
    return true;
  }
  LinearForm a, b;
  if (auto* op = AsPtr<AddNode>(e)) {
    if (!Linear(op->a, var, &a) || !Linear(op->b, var, &b)) return false;
    *out = {add(a.base, b.base), add(a.coeff, b.coeff)};
    return true;
  }
  if (auto* op = AsPtr<SubNode>(e)) {
    if (!Linear(op->a, var, &a) || !Linear(op->b, var, &b)) return false;
    auto sub = [](const Expr& x, const Expr& y) -> Expr {
      if (!y) return x;
      if (!x) return Neg(y);
      return SubE(x, y);
    };
    *out = {sub(a.base, b.base), sub(a.coeff, b.coeff)};
    return true;
  }
  if (auto* op = AsPtr<MulNode>(e)) {
    if (!Linear(op->a, var, &a) || !Linear(op->b, var, &b)) return false;
    if (a.coeff) std::swap(a, b);
    if (a.coeff) return false;  // var * var
    auto mul = [](const Expr& x, const Expr& y) -> Expr {
      if (!x || !y) return nullptr;
      return MulE(x, y);
    };
    *out = {mul(a.base, b.base), mul(a.base, b.coeff)};
    return true;
  }
  if (UsesVar(e, var)) return false;
  *out = {e, nullptr};
  return true;
}

bool LinearOrZero(const Expr& e, const VarNode* var, DataType t, LinearForm* out) {
  if (!Linear(e, var, out)) return false;
  if (!out->base) out->base = IntConst(t, 0);
  if (!out->coeff) out->coeff = IntConst(t, 0);
  return true;
}

}  // namespace

std::vector<Expr> DetectLinearEquation(const Expr& e, const std::vector<Var>& vars) {
  Analyzer ana;
  Expr base = e;
  std::vector<Expr> coeffs;
  for (const Var& v : vars) {
    LinearForm form;
    if (!LinearOrZero(base, v.get(), v->dtype, &form)) return {};
    coeffs.push_back(ana.Simplify(form.coeff));
    base = form.base;
  }
  // A coefficient may use only the variables before its own.
  std::unordered_set<const VarNode*> later;
  for (size_t i = vars.size(); i > 1; --i) {
    later.insert(vars[i - 1].get());
    if (UsesVar(coeffs[i - 2], [&](const VarNode* v) { return later.count(v) != 0; })) return {};
  }
  coeffs.push_back(ana.Simplify(base));
  return coeffs;
}

namespace {

struct Bounds {
  Expr min, max;
};

// Narrows the bounds of the one variable of `cond` (a comparison, coefficient +-1).
bool ClipBound(const Expr& cond, std::unordered_map<const VarNode*, Bounds>* bounds) {
  const VarNode* var = nullptr;
  bool several = false;
  PostOrderVisit(cond, [&](const ObjectRef& n) {
    auto* v = dynamic_cast<const VarNode*>(n.get());
    if (!v || !bounds->count(v)) return;
    if (!var) {
      var = v;
    } else if (var != v) {
      several = true;
    }
  });
  if (!var || several) return false;
  auto* cmp = AsPtr<BinaryNode>(cond);
  if (!cmp || !cmp->is_comparison() || !cmp->a->dtype.is_int()) return false;
  // The canonical form `canonical >= 0` (or `== 0`).
  Expr one = IntConst(cmp->a->dtype, 1);
  Expr canonical;
  bool is_eq = false;
  switch (cond->kind) {
    case NodeKind::kLT:
      canonical = SubE(SubE(cmp->b, cmp->a), one);
      break;
    case NodeKind::kLE:
      canonical = SubE(cmp->b, cmp->a);
      break;
    case NodeKind::kGT:
      canonical = SubE(SubE(cmp->a, cmp->b), one);
      break;
    case NodeKind::kGE:
      canonical = SubE(cmp->a, cmp->b);
      break;
    case NodeKind::kEQ:
      canonical = SubE(cmp->a, cmp->b);
      is_eq = true;
      break;
    default:
      return false;
  }
  LinearForm form;
  if (!LinearOrZero(canonical, var, var->dtype, &form)) return false;
  Analyzer ana;
  Expr coeff = ana.Simplify(form.coeff);
  Expr lo, hi;
  if (IsConstInt(coeff, 1)) {
    lo = Neg(form.base);
    if (is_eq) hi = lo;
  } else if (IsConstInt(coeff, -1)) {
    hi = form.base;
    if (is_eq) lo = hi;
  } else {
    return false;
  }
  Bounds& b = (*bounds)[var];
  if (lo) b.min = b.min ? Expr(MaxNode::Make(b.min, CastTo(b.min->dtype, lo))) : lo;
  if (hi) b.max = b.max ? Expr(MinNode::Make(b.max, CastTo(b.max->dtype, hi))) : hi;
  return true;
}

}  // namespace

namespace {

// The comparison that holds exactly when `cmp` does not (null when `cmp` is none).
Expr Negated(const Expr& e) {
  auto* cmp = AsPtr<BinaryNode>(e);
  if (!cmp || !cmp->is_comparison()) return nullptr;
  switch (e->kind) {
    case NodeKind::kLT:
      return GENode::Make(cmp->a, cmp->b);
    case NodeKind::kLE:
      return GTNode::Make(cmp->a, cmp->b);
    case NodeKind::kGT:
      return LENode::Make(cmp->a, cmp->b);
    case NodeKind::kGE:
      return LTNode::Make(cmp->a, cmp->b);
    case NodeKind::kEQ:
      return NENode::Make(cmp->a, cmp->b);
    default:
      return EQNode::Make(cmp->a, cmp->b);
  }
}

// The conjuncts of `e` as comparisons where possible: `!(a < b)` is `a >= b`, and a bound
// on a min or max that holds for both operands (`min(a, b) > c`: a > c and b > c) splits.
void Conjuncts(const Expr& e, std::vector<Expr>* out) {
  if (auto* op = AsPtr<AndNode>(e)) {
    Conjuncts(op->a, out);
    Conjuncts(op->b, out);
    return;
  }
  if (auto* op = AsPtr<NotNode>(e)) {
    if (Expr neg = Negated(op->a)) return Conjuncts(neg, out);
  }
  if (auto* cmp = AsPtr<BinaryNode>(e)) {
    NodeKind k = e->kind;
    // Normalised to `x > c` / `x >= c` / `x < c` / `x <= c` with the min/max on the left.
    Expr x = cmp->a, c = cmp->b;
    bool lower = k == NodeKind::kGT || k == NodeKind::kGE;
    bool upper = k == NodeKind::kLT || k == NodeKind::kLE;
    if ((lower || upper) && !AsPtr<MinNode>(x) && !AsPtr<MaxNode>(x)) {
      std::swap(x, c);
      std::swap(lower, upper);
    }
    auto split = [&](const BinaryNode* mm) {
      bool left = x.get() == cmp->a.get();
      auto rebuild = [&](const Expr& side) -> Expr {
        Expr a = left ? side : c, b = left ? c : side;
        switch (k) {
          case NodeKind::kLT:
            return LTNode::Make(a, b);
          case NodeKind::kLE:
            return LENode::Make(a, b);
          case NodeKind::kGT:
            return GTNode::Make(a, b);
          default:
            return GENode::Make(a, b);
        }
      };
      Conjuncts(rebuild(mm->a), out);
      Conjuncts(rebuild(mm->b), out);
    };
    if (lower) {
      if (auto* mn = AsPtr<MinNode>(x)) return split(mn);
    }
    if (upper) {
      if (auto* mx = AsPtr<MaxNode>(x)) return split(mx);
    }
  }
  out->push_back(e);
}

}  // namespace

std::vector<Expr> DetectClipBound(const Expr& cond, const std::vector<Var>& vars) {
  Analyzer ana;
  std::vector<Expr> conjuncts;
  // The conjuncts as written (as TVM): simplifying first could change their coefficients
  // (`a * 2 < 10` is `a < 5` simplified, where TVM finds no bound of coefficient 2).
  Conjuncts(cond, &conjuncts);
  std::unordered_map<const VarNode*, Bounds> bounds;
  for (const Var& v : vars) bounds[v.get()] = Bounds();
  for (const Expr& c : conjuncts) {
    // A split min/max may leave a constant comparison (`max(a, 3) < 15`: 3 < 15).
    if (IsConstInt(ana.Simplify(c), 1)) continue;
    if (!ClipBound(c, &bounds)) return {};
  }
  std::vector<Expr> out;
  for (const Var& v : vars) {
    const Bounds& b = bounds[v.get()];
    out.push_back(b.min ? ana.Simplify(b.min) : nullptr);
    out.push_back(b.max ? ana.Simplify(b.max) : nullptr);
  }
  return out;
}

namespace {

// The number of nodes of an expression.
int64_t Complexity(const Expr& e) {
  int64_t n = 0;
  PostOrderVisit(e, [&](const ObjectRef&) { ++n; });
  return n;
}

bool Eligible(const Expr& e) {
  if (AsPtr<RampNode>(e) || AsPtr<BroadcastNode>(e) || AsPtr<BufferLoadNode>(e)) return false;
  // Reading memory is not a pure computation.
  bool reads = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (dynamic_cast<const BufferLoadNode*>(n.get())) reads = true;
  });
  return !reads && Complexity(e) > 1;
}

std::vector<Expr> Children(const Expr& e) {
  if (auto* bin = AsPtr<BinaryNode>(e)) return {bin->a, bin->b};
  if (auto* cast = AsPtr<CastNode>(e)) return {cast->value};
  if (auto* n = AsPtr<NotNode>(e)) return {n->a};
  if (auto* sel = AsPtr<SelectNode>(e)) return {sel->condition, sel->true_value, sel->false_value};
  if (auto* call = AsPtr<CallNode>(e)) return call->args;
  if (auto* let = AsPtr<LetNode>(e)) return {let->value, let->body};
  return {};
}

// The outermost eligible computations within `e` (e itself when it is one).
void Outermost(const Expr& e, std::vector<Expr>* out) {
  if (Eligible(e)) {
    out->push_back(e);
    return;
  }
  for (const Expr& c : Children(e)) Outermost(c, out);
}

}  // namespace

std::vector<std::pair<Expr, int64_t>> DetectCommonSubexpr(const Expr& e, int64_t threshold) {
  struct Entry {
    Expr expr;
    int64_t count;
    int64_t complexity;
    bool expanded;
  };
  std::vector<Entry> table;
  auto add = [&](const Expr& x, int64_t count) {
    for (Entry& entry : table) {
      if (StructuralEqual(entry.expr, x)) {
        entry.count += count;
        return;
      }
    }
    table.push_back({x, count, Complexity(x), false});
  };
  std::vector<Expr> top;
  Outermost(e, &top);
  for (const Expr& x : top) add(x, 1);
  // A computation seen too rarely counts through its own sub-computations: expand the largest
  // first so that each count is complete before it is looked at.
  while (true) {
    Entry* next = nullptr;
    for (Entry& entry : table) {
      if (!entry.expanded && (!next || entry.complexity > next->complexity)) next = &entry;
    }
    if (!next) break;
    next->expanded = true;
    if (next->count >= threshold) continue;
    Expr x = next->expr;
    int64_t count = next->count;
    std::vector<Expr> subs;
    for (const Expr& c : Children(x)) Outermost(c, &subs);
    for (const Expr& s : subs) add(s, count);
  }
  std::vector<std::pair<Expr, int64_t>> out;
  for (const Entry& entry : table) {
    if (entry.count >= threshold) out.emplace_back(entry.expr, entry.count);
  }
  return out;
}

}  // namespace arith
}  // namespace tessera
