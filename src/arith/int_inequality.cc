// Systems of linear inequalities over the integers: Fourier-Motzkin elimination of the
// variables one by one, then the ranges that the bounds give (optionally shifted to start at 0).
#include <algorithm>
#include <numeric>
#include <string>
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

using Bound = std::pair<int64_t, Expr>;  // coef * var + expr

int64_t Gcd(int64_t a, int64_t b) { return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b); }
int64_t Lcm(int64_t a, int64_t b) { return a / Gcd(a, b) * b; }

// `e <= 0` with the coefficients of e's variables divided by their gcd (rounding the constant),
// as a rewrite simplifier would: 2 * y - 10 <= 0 is y - 5 <= 0.
Expr DivideByGcd(const Expr& e, Analyzer* ana) {
  std::vector<Var> vars;
  std::unordered_set<const VarNode*> seen;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (auto* v = dynamic_cast<const VarNode*>(n.get())) {
      if (seen.insert(v).second)
        vars.push_back(std::static_pointer_cast<VarNode>(std::const_pointer_cast<Object>(n)));
    }
  });
  if (vars.empty()) return e;
  std::vector<Expr> coeffs = DetectLinearEquation(e, vars);
  if (coeffs.empty()) return e;
  int64_t g = 0;
  for (size_t i = 0; i < vars.size(); ++i) {
    auto c = AsConstInt(coeffs[i]);
    if (!c) return e;
    g = Gcd(g, *c);
  }
  auto base = AsConstInt(coeffs.back());
  if (g <= 1 || !base) return e;
  Expr out = IntConst(e->dtype, -FloorDiv(-*base, g));
  for (size_t i = 0; i < vars.size(); ++i) {
    int64_t c = *AsConstInt(coeffs[i]) / g;
    if (c != 0) out = AddE(out, MulE(IntConst(e->dtype, c), vars[i]));
  }
  return ana->Simplify(out);
}

// Comparisons as `e <= 0`, `e == 0` or `e != 0` (a < b is a - b + 1 <= 0 for integers).
Expr Normalize(const Expr& e, Analyzer* ana) {
  if (auto* op = AsPtr<AndNode>(e)) {
    return AndNode::Make(Normalize(op->a, ana), Normalize(op->b, ana));
  }
  if (auto* op = AsPtr<OrNode>(e)) {
    return OrNode::Make(Normalize(op->a, ana), Normalize(op->b, ana));
  }
  if (auto* op = AsPtr<NotNode>(e)) return NotNode::Make(Normalize(op->a, ana));
  auto* cmp = AsPtr<BinaryNode>(e);
  if (!cmp || !cmp->is_comparison()) return e;
  Expr a = cmp->a, b = cmp->b;
  DataType t = a->dtype;
  bool integer = t.is_int() || t.is_uint();
  auto zero = IntConst(t, 0);
  auto le = [&](const Expr& x, const Expr& y, int64_t plus) -> Expr {
    Expr d = SubE(x, y);
    if (plus) d = AddE(d, IntConst(t, plus));
    d = ana->Simplify(d);
    if (integer) d = DivideByGcd(d, ana);
    return LENode::Make(d, zero);
  };
  switch (e->kind) {
    case NodeKind::kLT:
      return integer ? le(a, b, 1) : LTNode::Make(ana->Simplify(SubE(a, b)), zero);
    case NodeKind::kLE:
      return le(a, b, 0);
    case NodeKind::kGT:
      return integer ? le(b, a, 1) : LTNode::Make(ana->Simplify(SubE(b, a)), zero);
    case NodeKind::kGE:
      return le(b, a, 0);
    case NodeKind::kEQ:
      return EQNode::Make(ana->Simplify(SubE(a, b)), zero);
    default:
      return NENode::Make(ana->Simplify(SubE(a, b)), zero);
  }
}

void AddInequality(std::vector<Expr>* set, const Expr& ineq, Analyzer* ana) {
  if (ana->CanProve(ineq)) return;
  for (const Expr& e : *set) {
    if (StructuralEqual(e, ineq)) return;
  }
  if (auto* nle = AsPtr<LENode>(ineq)) {
    for (auto it = set->begin(); it != set->end();) {
      auto* le = AsPtr<LENode>(*it);
      if (le && ana->CanProve(LENode::Make(SubE(nle->a, le->a), IntConst(nle->a->dtype, 0)))) {
        return;  // implied by one already there
      }
      if (le && ana->CanProve(LENode::Make(SubE(le->a, nle->a), IntConst(le->a->dtype, 0)))) {
        it = set->erase(it);
      } else {
        ++it;
      }
    }
  }
  set->push_back(ineq);
}

Expr RangeMax(const Range& r) {
  return SubE(AddE(r->min, r->extent), IntConst(r->extent->dtype, 1));
}

const Range* FindRange(const std::vector<std::pair<Var, Range>>& ranges, const VarNode* v) {
  for (const auto& [var, r] : ranges) {
    if (var.get() == v) return &r;
  }
  return nullptr;
}

void SetRange(std::vector<std::pair<Var, Range>>* ranges, const Var& v, const Range& r) {
  for (auto& [var, old] : *ranges) {
    if (var.get() == v.get()) {
      old = r;
      return;
    }
  }
  ranges->emplace_back(v, r);
}

Analyzer AnalyzerOf(const std::vector<std::pair<Var, Range>>& ranges) {
  Analyzer ana;
  for (const auto& [v, r] : ranges) ana.Bind(v, r);
  return ana;
}

// The bounds with the range `r` of the variable added.
IntGroupBoundsData WithRange(const IntGroupBoundsData& b, const Range& r) {
  Analyzer ana;
  IntGroupBoundsData out{b.coef, {}, {}, {}};
  if (IsConstInt(r->extent, 1)) {
    out.equal.push_back(ana.Simplify(MulE(r->min, b.coef)));
  } else {
    out.lower.push_back(ana.Simplify(MulE(r->min, b.coef)));
    out.upper.push_back(ana.Simplify(MulE(RangeMax(r), b.coef)));
  }
  out.equal.insert(out.equal.end(), b.equal.begin(), b.equal.end());
  out.lower.insert(out.lower.end(), b.lower.begin(), b.lower.end());
  out.upper.insert(out.upper.end(), b.upper.begin(), b.upper.end());
  return out;
}

// Whether `e` is integer arithmetic of variables and constants.
bool Analyzable(const Expr& e) {
  bool ok = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    NodeKind k = n->kind;
    if (k != NodeKind::kVar && k != NodeKind::kSizeVar && k != NodeKind::kIntImm &&
        k != NodeKind::kCast && !(k >= NodeKind::kAdd && k <= NodeKind::kMax)) {
      ok = false;
    }
  });
  return ok;
}

// `a op b` of integers as `e op c` with the constant moved right (`x + 2 * y <= 10`).
Expr CanonicalComparison(const Expr& cond, Analyzer* ana) {
  auto* cmp = AsPtr<BinaryNode>(cond);
  if (!cmp || !cmp->is_comparison() || !cmp->a->dtype.is_int()) return cond;
  Expr d = ana->Simplify(SubE(cmp->a, cmp->b));
  if (AsConstInt(d)) return ana->Simplify(cond);
  Expr lhs = d, rhs = IntConst(d->dtype, 0);
  if (auto* sub = AsPtr<SubNode>(d)) {
    if (AsConstInt(sub->b)) lhs = sub->a, rhs = sub->b;
  } else if (auto* add = AsPtr<AddNode>(d)) {
    if (auto c = AsConstInt(add->b)) lhs = add->a, rhs = IntConst(d->dtype, -*c);
  }
  switch (cond->kind) {
    case NodeKind::kLT:
      return LTNode::Make(lhs, rhs);
    case NodeKind::kLE:
      return LENode::Make(lhs, rhs);
    case NodeKind::kGT:
      return GTNode::Make(lhs, rhs);
    case NodeKind::kGE:
      return GENode::Make(lhs, rhs);
    case NodeKind::kEQ:
      return EQNode::Make(lhs, rhs);
    default:
      return NENode::Make(lhs, rhs);
  }
}

// The narrowest range of the variable that the bounds give (null when none is bounded on both
// sides), its ends over the variables of `ranges`.
Range BestRange(const IntGroupBoundsData& b, const std::vector<std::pair<Var, Range>>& ranges) {
  Analyzer ana = AnalyzerOf(ranges);
  IntervalMap dom;
  VarMap points;  // variables whose range is a single value
  for (const auto& [v, r] : ranges) {
    dom[v.get()] = {r->min, RangeMax(r)};
    if (IsConstInt(r->extent, 1)) points[v.get()] = r->min;
  }
  std::vector<Expr> lowers = b.equal, uppers = b.equal;
  lowers.insert(lowers.end(), b.lower.begin(), b.lower.end());
  uppers.insert(uppers.end(), b.upper.begin(), b.upper.end());
  for (auto* list : {&lowers, &uppers}) {
    for (Expr& e : *list) e = Substitute(e, points);
  }
  if (lowers.size() == 1 && uppers.size() == 1 && IsConstInt(b.coef, 1)) {
    Expr lo = ana.Simplify(lowers[0]);
    return RangeNode::Make(lo,
                           ana.Simplify(AddE(SubE(uppers[0], lowers[0]), IntConst(lo->dtype, 1))));
  }
  Expr best_lower, best_over;
  Expr one = IntConst(b.coef->dtype, 1);
  for (const Expr& lo : lowers) {
    for (const Expr& hi : uppers) {
      // Bounds through calls and loads (`log(n)`) have no known range.
      if (!Analyzable(lo) || !Analyzable(hi)) continue;
      Expr over;
      Interval s1 = EvalInterval(ana.Simplify(FloorDivE(SubE(hi, lo), b.coef)), dom);
      if (!s1.nothing && s1.max) over = ana.Simplify(s1.max);
      Expr lo_div = ana.Simplify(FloorDivE(SubE(AddE(lo, b.coef), one), b.coef));
      Interval s2 = EvalInterval(ana.Simplify(SubE(FloorDivE(hi, b.coef), lo_div)), dom);
      if (!s2.nothing && s2.max) {
        Expr over2 = ana.Simplify(s2.max);
        if (!over || ana.CanProve(LTNode::Make(SubE(over2, over), IntConst(over2->dtype, 0)))) {
          over = over2;
        }
      }
      if (over && (!best_over ||
                   ana.CanProve(LTNode::Make(SubE(over, best_over), IntConst(over->dtype, 0))))) {
        best_lower = lo_div;
        best_over = over;
      }
    }
  }
  if (!best_lower) return nullptr;
  return RangeNode::Make(best_lower, ana.Simplify(AddE(best_over, IntConst(best_over->dtype, 1))));
}

Expr Scaled(const Expr& coef, const Var& v) {
  return IsConstInt(coef, 1) ? Expr(v) : MulE(coef, v);
}

}  // namespace

std::pair<std::vector<std::pair<Var, IntGroupBoundsData>>, std::vector<Expr>>
SolveLinearInequalities(const IntConstraintsData& system) {
  Analyzer ana = AnalyzerOf(system.ranges);
  std::vector<Expr> current, next, rest;
  for (const Expr& rel : system.relations) {
    AddInequality(&current, Normalize(ana.Simplify(rel), &ana), &ana);
  }
  std::vector<std::pair<Var, IntGroupBoundsData>> bounds;
  for (const Var& v : system.variables) {
    next.clear();
    std::vector<Bound> pos, neg;
    if (const Range* r = FindRange(system.ranges, v.get())) {
      neg.emplace_back(-1, ana.Simplify((*r)->min));
      pos.emplace_back(1, ana.Simplify(MulE(RangeMax(*r), IntConst(v->dtype, -1))));
    }
    // Sort the relations by the sign of v's coefficient: `c * v + e <= 0` bounds v from above
    // when c > 0, from below when c < 0.
    for (const Expr& ineq : current) {
      auto* le = AsPtr<LENode>(ineq);
      auto* eq = AsPtr<EQNode>(ineq);
      if (le || eq) {
        std::vector<Expr> coef = DetectLinearEquation(le ? le->a : eq->a, {v});
        auto c = coef.empty() ? std::nullopt : AsConstInt(coef[0]);
        if (c) {
          Expr base = coef[1];
          if (*c == 0) {
            AddInequality(&next, ineq, &ana);
          } else if (le) {
            (*c > 0 ? pos : neg).emplace_back(*c, base);
          } else {
            Expr nbase = ana.Simplify(MulE(base, IntConst(base->dtype, -1)));
            pos.emplace_back(*c > 0 ? *c : -*c, *c > 0 ? base : nbase);
            neg.emplace_back(*c > 0 ? -*c : *c, *c > 0 ? nbase : base);
          }
          continue;
        }
      }
      rest.push_back(ineq);
    }
    // Eliminate v: each pair of an upper and a lower bound gives a relation without it.
    for (const Bound& p : pos) {
      for (const Bound& n : neg) {
        int64_t g = Gcd(p.first, -n.first);
        Expr lhs = SubE(MulE(IntConst(v->dtype, p.first / g), n.second),
                        MulE(IntConst(v->dtype, n.first / g), p.second));
        Expr ineq = Normalize(ana.Simplify(LENode::Make(lhs, IntConst(lhs->dtype, 0))), &ana);
        AddInequality(&next, ineq, &ana);
      }
    }
    int64_t lcm = 1;
    for (const Bound& p : pos) lcm = Lcm(lcm, p.first);
    for (const Bound& n : neg) lcm = Lcm(lcm, -n.first);
    std::vector<Expr> upper, lower, equal;
    auto keep = [&](std::vector<Expr>* list, const Expr& bound, bool is_upper) {
      Expr zero = IntConst(bound->dtype, 0);
      auto tighter = [&](const Expr& a, const Expr& b) {  // a at least as tight as b
        Expr d = SubE(a, b);
        return ana.CanProve(is_upper ? Expr(LENode::Make(d, zero)) : Expr(GENode::Make(d, zero)));
      };
      for (const Expr& o : *list) {
        if (tighter(o, bound)) return;
      }
      list->erase(std::remove_if(list->begin(), list->end(),
                                 [&](const Expr& o) { return tighter(bound, o); }),
                  list->end());
      list->push_back(bound);
    };
    for (const Bound& p : pos) {
      keep(&upper, ana.Simplify(MulE(IntConst(v->dtype, -lcm / p.first), p.second)), true);
    }
    for (const Bound& n : neg) {
      keep(&lower, ana.Simplify(MulE(IntConst(v->dtype, -lcm / n.first), n.second)), false);
    }
    // An upper bound that is also a lower bound is a value.
    for (auto ub = upper.begin(); ub != upper.end();) {
      auto lb = std::find_if(lower.begin(), lower.end(),
                             [&](const Expr& e) { return StructuralEqual(e, *ub); });
      if (lb != lower.end()) {
        equal.push_back(*lb);
        lower.erase(lb);
        ub = upper.erase(ub);
      } else {
        ++ub;
      }
    }
    auto size = [](const Expr& e) {
      int64_t n = 0;
      PostOrderVisit(e, [&](const ObjectRef&) { ++n; });
      return n;
    };
    std::stable_sort(equal.begin(), equal.end(),
                     [&](const Expr& a, const Expr& b) { return size(a) < size(b); });
    bounds.emplace_back(v, IntGroupBoundsData{IntConst(v->dtype, lcm), lower, equal, upper});
    std::swap(current, next);
  }
  std::vector<Expr> other;
  for (const Expr& e : current) {
    Expr s = ana.Simplify(e);
    if (IsConstInt(s, 0)) {
      other = {Bool(false)};
      break;
    }
    if (!IsConstInt(s, 1)) other.push_back(s);
  }
  other.insert(other.end(), rest.begin(), rest.end());
  return {bounds, other};
}

namespace {

std::vector<Expr> AsConditions(const std::vector<std::pair<Var, IntGroupBoundsData>>& bounds,
                               const std::vector<Expr>& other) {
  std::vector<Expr> out;
  for (const auto& [v, b] : bounds) {
    Expr lhs = Scaled(b.coef, v);
    for (const Expr& e : b.equal) out.push_back(EQNode::Make(lhs, CastTo(lhs->dtype, e)));
    for (const Expr& e : b.lower) out.push_back(GENode::Make(lhs, CastTo(lhs->dtype, e)));
    for (const Expr& e : b.upper) out.push_back(LENode::Make(lhs, CastTo(lhs->dtype, e)));
  }
  out.insert(out.end(), other.begin(), other.end());
  return out;
}

const IntGroupBoundsData& BoundsOf(const std::vector<std::pair<Var, IntGroupBoundsData>>& all,
                                   const VarNode* v) {
  for (const auto& [var, b] : all) {
    if (var.get() == v) return b;
  }
  return all.front().second;  // not reached: every variable has bounds
}

}  // namespace

std::vector<Expr> InequalitiesAsConditions(const IntConstraintsData& system) {
  auto [bounds, other] = SolveLinearInequalities(system);
  return AsConditions(bounds, other);
}

IntConstraintsData SolveInequalitiesToRange(const IntConstraintsData& system) {
  auto [bounds, other] = SolveLinearInequalities(system);
  std::vector<std::pair<Var, Range>> ranges = system.ranges, result;
  for (auto it = system.variables.rbegin(); it != system.variables.rend(); ++it) {
    const Var& v = *it;
    Analyzer ana = AnalyzerOf(ranges);
    IntGroupBoundsData b = BoundsOf(bounds, v.get());
    if (IsConstInt(b.coef, 1) && !b.equal.empty()) {
      Range r = RangeNode::Make(b.equal[0], IntConst(b.equal[0]->dtype, 1));
      SetRange(&result, v, r);
      SetRange(&ranges, v, r);
      continue;
    }
    if (const Range* r = FindRange(ranges, v.get())) b = WithRange(b, *r);
    Range best = BestRange(b, ranges);
    if (!best) continue;
    if (ana.CanProveGreaterEqual(MulE(best->extent, IntConst(best->extent->dtype, -1)), 0)) {
      return {{}, {}, {Bool(false)}};
    }
    SetRange(&result, v, best);
    SetRange(&ranges, v, best);
  }
  Analyzer ana = AnalyzerOf(ranges);
  std::vector<Expr> relations;
  for (const Expr& cond : AsConditions(bounds, other)) {
    if (!ana.CanProve(cond)) relations.push_back(cond);
  }
  return {system.variables, result, relations};
}

IntConstraintsTransformData SolveInequalitiesDeskewRange(const IntConstraintsData& system) {
  auto [bounds, other] = SolveLinearInequalities(system);
  IntConstraintsTransformData out;
  out.src = system;
  std::vector<std::pair<Var, Range>> ranges = system.ranges;
  Analyzer ana = AnalyzerOf(ranges);
  VarMap src_to_dst, dst_to_src;
  std::vector<Var> new_vars;
  for (auto it = system.variables.rbegin(); it != system.variables.rend(); ++it) {
    const Var& v = *it;
    IntGroupBoundsData b = BoundsOf(bounds, v.get());
    auto subst = [&](std::vector<Expr>* list) {
      for (Expr& e : *list) e = Substitute(e, src_to_dst);
    };
    subst(&b.lower), subst(&b.equal), subst(&b.upper);
    if (IsConstInt(b.coef, 1) && !b.equal.empty()) {
      src_to_dst[v.get()] = b.equal[0];
      out.src_to_dst.emplace_back(v, b.equal[0]);
      continue;
    }
    if (const Range* r = FindRange(ranges, v.get())) b = WithRange(b, *r);
    Range best = BestRange(b, ranges);
    if (!best) {
      src_to_dst[v.get()] = v;
      out.src_to_dst.emplace_back(v, v);
      out.dst_to_src.emplace_back(v, v);
      new_vars.push_back(v);
    } else if (IsConstInt(best->extent, 1)) {
      src_to_dst[v.get()] = best->min;
      out.src_to_dst.emplace_back(v, best->min);
    } else if (ana.CanProveGreaterEqual(MulE(best->extent, IntConst(best->extent->dtype, -1)), 0)) {
      IntConstraintsTransformData none;
      none.src = system;
      none.dst.relations = {Bool(false)};
      return none;
    } else {
      Var nv = VarNode::Make(v->name + ".shifted", v->dtype);
      Expr to_dst = IsConstInt(best->min, 0) ? Expr(nv) : Expr(AddNode::Make(nv, best->min));
      src_to_dst[v.get()] = to_dst;
      out.src_to_dst.emplace_back(v, to_dst);
      Expr to_src = ana.Simplify(SubE(v, Substitute(best->min, dst_to_src)));
      dst_to_src[nv.get()] = to_src;
      out.dst_to_src.emplace_back(nv, to_src);
      Range r = RangeNode::Make(IntConst(nv->dtype, 0), best->extent);
      new_vars.push_back(nv);
      out.dst.ranges.emplace_back(nv, r);
      SetRange(&ranges, nv, r);
      ana.Bind(nv, r);
    }
  }
  for (const Expr& cond : AsConditions(bounds, other)) {
    Expr c = CanonicalComparison(ana.Simplify(Substitute(cond, src_to_dst)), &ana);
    if (!IsConstInt(c, 1)) out.dst.relations.push_back(c);
  }
  out.dst.variables.assign(new_vars.rbegin(), new_vars.rend());
  // The src_to_dst map in the order of the variables.
  std::reverse(out.src_to_dst.begin(), out.src_to_dst.end());
  return out;
}

}  // namespace arith
}  // namespace tessera
