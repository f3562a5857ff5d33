// Linear analyses of integer expressions (TVM's tvm.arith detect_linear_equation,
// detect_clip_bound, detect_common_subexpr, deduce_bound, DomainTouched) and the integer
// solvers of linear equation systems (Smith normal form).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/expr.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace arith {

/*!
 * \brief A closed interval of integers [min, max] with symbolic ends; a null end is infinite
 *  (min: -inf, max: +inf). `nothing` marks the empty set.
 */
struct Interval {
  Expr min, max;
  bool nothing = false;
  static Interval Point(const Expr& e) { return {e, e, false}; }
  static Interval Everything() { return {nullptr, nullptr, false}; }
  static Interval Nothing() { return {nullptr, nullptr, true}; }
  bool is_everything() const { return !nothing && !min && !max; }
};
using IntervalMap = std::unordered_map<const VarNode*, Interval>;

/*!
 * \brief The interval of the values of `e` when each variable of `dom` takes the values of its
 *  interval (the others are fixed). Add, Sub, Mul by a factor of known sign, FloorDiv by a
 *  positive constant, Min, Max and Cast are followed; other expressions using a relaxed
 *  variable give everything. Sub-expressions that use no relaxed variable are kept as they are.
 */
Interval EvalInterval(const Expr& e, const IntervalMap& dom);

/*!
 * \brief Write `e` as `coeff[0] * vars[0] + ... + coeff[n-1] * vars[n-1] + base`; returns
 *  [coeff..., base], or nothing when `e` is not linear in `vars` (a product of two of them, a
 *  coefficient that uses a later variable, or a variable under another operation).
 */
std::vector<Expr> DetectLinearEquation(const Expr& e, const std::vector<Var>& vars);

/*!
 * \brief The bounds that a conjunction of comparisons puts on each of `vars`:
 *  [min_0, max_0, min_1, max_1, ...] (null where unbounded), or nothing when a conjunct is not
 *  a comparison of a single one of the variables with coefficient +-1.
 */
std::vector<Expr> DetectClipBound(const Expr& cond, const std::vector<Var>& vars);

/*!
 * \brief The sub-computations of `e` (pure, not a leaf, Ramp or Broadcast) that occur at least
 *  `threshold` times, with their counts; equal computations (structurally) count together.
 */
std::vector<std::pair<Expr, int64_t>> DetectCommonSubexpr(const Expr& e, int64_t threshold);

/*!
 * \brief The range of `var` for which the comparison `cond` holds, `var` occurring once in it:
 *  the variables of `relax` are relaxed to their intervals (a bound that holds for all of
 *  them), those of `hint` give the signs of factors. Nothing where no bound can be deduced.
 */
Interval DeduceBound(const Var& var, const Expr& cond, const IntervalMap& hint,
                     const IntervalMap& relax);

/*!
 * \brief The region of `buffer` accessed in `stmt` (its loads, stores or both), each loop
 *  variable relaxed over its loop; a vector index (Ramp) covers its lanes. Empty when the
 *  buffer is not accessed.
 */
std::vector<Range> DomainTouched(const Stmt& stmt, const Buffer& buffer, bool loads, bool stores);

/*! \brief A system of integer constraints: variables, their ranges and relations over them. */
struct IntConstraintsData {
  std::vector<Var> variables;
  std::vector<std::pair<Var, Range>> ranges;
  std::vector<Expr> relations;
};

/*! \brief A change of variables between two systems: dst solves src. */
struct IntConstraintsTransformData {
  IntConstraintsData src, dst;
  std::vector<std::pair<Var, Expr>> src_to_dst, dst_to_src;
};

/*!
 * \brief Solve the linear equations among `system.relations` over `system.variables` in
 *  integers (Smith normal form): each variable becomes a constant or a combination of new free
 *  variables, whose ranges are inferred; the other relations and the old ranges become
 *  relations over the new variables. An unsolvable system gives dst relations [false].
 */
IntConstraintsTransformData SolveLinearEquations(const IntConstraintsData& system);

/*! \brief The bounds of `coef * var`: each of `lower` <= it, each of `equal` == it, it <= each of
 *  `upper`. */
struct IntGroupBoundsData {
  Expr coef;
  std::vector<Expr> lower, equal, upper;
};

/*!
 * \brief Fourier-Motzkin elimination of `system.variables` in order from the linear inequalities
 *  (and equations) of `system.relations`: the bounds of each variable over the later ones, and
 *  the relations left (those that are not linear in the variables; [false] when none holds).
 */
std::pair<std::vector<std::pair<Var, IntGroupBoundsData>>, std::vector<Expr>>
SolveLinearInequalities(const IntConstraintsData& system);

/*! \brief The bounds and relations of SolveLinearInequalities as a list of conditions. */
std::vector<Expr> InequalitiesAsConditions(const IntConstraintsData& system);

/*!
 * \brief The ranges of the variables that the inequalities imply (each over the later
 *  variables), and the conditions those ranges do not already guarantee.
 */
IntConstraintsData SolveInequalitiesToRange(const IntConstraintsData& system);

/*!
 * \brief As SolveInequalitiesToRange, with each variable shifted to start at 0
 *  (`x = x.shifted + lower bound`); a variable with a single value is replaced by it.
 */
IntConstraintsTransformData SolveInequalitiesDeskewRange(const IntConstraintsData& system);

}  // namespace arith
}  // namespace tessera
