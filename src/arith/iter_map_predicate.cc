// Predicates of iterator maps as bounds on iterators and on sums of them (TVM's
// MatchBoundConstraints), for DetectIterMapChecked.
#include <algorithm>
#include <functional>

#include "iter_map_detail.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"

namespace tessera {
namespace arith {
namespace iter_map_detail {

// TVM's MatchBoundConstraints: the predicate as a conjunction of constant bounds. A bound on one
// iterator narrows its domain; a bound on a sum becomes a constraint.
bool ParsePredicate(const Expr& predicate, std::vector<IterDomain>* iters,
                    std::vector<IterConstraint>* constraints, std::string* error) {
  std::vector<Expr> conjuncts, pending{predicate};
  while (!pending.empty()) {
    Expr e = pending.back();
    pending.pop_back();
    if (auto* both = AsPtr<AndNode>(e)) {
      pending.push_back(both->b);
      pending.push_back(both->a);
    } else {
      conjuncts.push_back(e);
    }
  }
  auto is_iter = [&](const VarNode* v) {
    return std::any_of(iters->begin(), iters->end(),
                       [&](const IterDomain& d) { return d.var.get() == v; });
  };
  auto uses = [&](const Expr& e) { return UsesVar(e, is_iter); };
  auto fail = [&](const std::string& why) {
    if (error) *error = "the predicate is not a conjunction of bounds on the iterators: " + why;
    return false;
  };
  for (const Expr& c : conjuncts) {
    if (IsConstInt(c, 1)) continue;
    Expr a, b;
    bool greater = false, equal = false;
    if (auto* op = AsPtr<LTNode>(c)) {
      a = op->a, b = op->b;
    } else if (auto* op = AsPtr<LENode>(c)) {
      a = op->a, b = op->b, equal = true;
    } else if (auto* op = AsPtr<GTNode>(c)) {
      a = op->a, b = op->b, greater = true;
    } else if (auto* op = AsPtr<GENode>(c)) {
      a = op->a, b = op->b, greater = equal = true;
    } else {
      return fail("a term is not a comparison");
    }
    if (!uses(a) && !uses(b)) continue;  // says nothing of the iterators
    // A comparison of floats (of values cast from the iterators) is no integer bound on them.
    if (!(a->dtype.is_int() || a->dtype.is_uint()) || !(b->dtype.is_int() || b->dtype.is_uint())) {
      return fail("a term compares values that are not integers");
    }
    bool bound_at_left;
    if (AsConstInt(a) || !uses(a)) {
      bound_at_left = true;
    } else if (AsConstInt(b) || !uses(b)) {
      bound_at_left = false;
    } else {
      // iterators on both sides: move them to the left, the rest to the right
      bound_at_left = false;
      Expr left = IntConst(a->dtype, 0), right = IntConst(a->dtype, 0);
      std::function<void(const Expr&, bool)> extract = [&](const Expr& part, bool sign) {
        if (auto* add = AsPtr<AddNode>(part)) {
          extract(add->a, sign);
          extract(add->b, sign);
        } else if (auto* sub = AsPtr<SubNode>(part)) {
          extract(sub->a, sign);
          extract(sub->b, !sign);
        } else if (uses(part)) {
          left = sign ? AddE(left, part) : SubE(left, part);
        } else {
          right = sign ? SubE(right, part) : AddE(right, part);
        }
      };
      extract(SubE(a, b), true);
      Analyzer analyzer;
      a = analyzer.Simplify(left);
      b = analyzer.Simplify(right);
    }
    Expr bound_expr = bound_at_left ? a : b;
    Expr iter = bound_at_left ? b : a;
    auto bound = AsConstInt(Analyzer().Simplify(bound_expr));
    if (!bound) return fail("a bound is not a constant");
    std::optional<int64_t> lower, upper;
    if (greater == bound_at_left) {  // bound > iter, bound >= iter, iter < bound, iter <= bound
      upper = equal ? *bound + 1 : *bound;
    } else {
      lower = equal ? *bound : *bound + 1;
    }
    if (auto* var = AsPtr<VarNode>(iter)) {
      auto it = std::find_if(iters->begin(), iters->end(),
                             [&](const IterDomain& d) { return d.var.get() == var; });
      if (it != iters->end()) {
        int64_t low = it->min, high = it->min + it->extent;
        if (lower) low = std::max(low, *lower);
        if (upper) high = std::min(high, *upper);
        it->min = low;
        it->extent = high - low;
        continue;
      }
    }
    IterConstraint constraint{iter, lower, upper, 0};
    PostOrderVisit(iter, [&](const ObjectRef&) { ++constraint.size; });
    constraints->push_back(constraint);
  }
  std::stable_sort(
      constraints->begin(), constraints->end(),
      [](const IterConstraint& x, const IterConstraint& y) { return x.size < y.size; });
  return true;
}

}  // namespace iter_map_detail
}  // namespace arith
}  // namespace tessera
