// Symbolic interval sets: the range of an integer expression when some of its vars range over
// intervals whose ends are expressions (TVM's arith::IntervalSet and EvalSet).
#pragma once

#include <utility>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

/*! \brief The ends of unbounded intervals: two handle vars, the same objects every time (as
 *  TVM's `pos_inf()` / `neg_inf()`). */
const Var& PosInf();
const Var& NegInf();
inline bool IsPosInf(const Expr& e) { return e.get() == PosInf().get(); }
inline bool IsNegInf(const Expr& e) { return e.get() == NegInf().get(); }

/*! \brief [min_value, max_value], both inclusive; NegInf()/PosInf() for an open end. A single
 *  point has the same object at both ends. */
struct IntervalSet {
  Expr min_value;
  Expr max_value;
  static IntervalSet Everything() { return {NegInf(), PosInf()}; }
  static IntervalSet SinglePoint(const Expr& e) { return {e, e}; }
  bool IsSinglePoint() const { return min_value.get() == max_value.get(); }
  bool HasLowerBound() const { return !IsNegInf(min_value) && !IsPosInf(min_value); }
  bool HasUpperBound() const { return !IsPosInf(max_value) && !IsNegInf(max_value); }
  bool IsEverything() const { return IsNegInf(min_value) && IsPosInf(max_value); }
  bool IsNothing() const { return IsPosInf(min_value) && IsNegInf(max_value); }
};

/*!
 * \brief Interval arithmetic on the ends, shared by EvalIntervalSet and EvalInterval
 *  (int_solver.h): they follow different expressions and build ends their own way, `end`
 *  (`end(kind, x, y)` is the end `x kind y` of two bounded ends: FoldBinary for the first, the
 *  unfolded operation for the second). An open end (NegInf / PosInf) makes an open end;
 *  nothing here proves anything or folds by itself.
 */
using EndOp = Expr (*)(NodeKind kind, const Expr& a, const Expr& b);

/*! \brief a + b: [a.min + b.min, a.max + b.max]. */
IntervalSet IntervalAdd(const IntervalSet& a, const IntervalSet& b, EndOp end);
/*! \brief a - b: [a.min - b.max, a.max - b.min]. */
IntervalSet IntervalSub(const IntervalSet& a, const IntervalSet& b, EndOp end);
/*! \brief min(a, b): an end open above gives way to the other set's end; an end open below
 *  stays open. */
IntervalSet IntervalMin(const IntervalSet& a, const IntervalSet& b, EndOp end);
/*! \brief max(a, b): as IntervalMin, the other way round. */
IntervalSet IntervalMax(const IntervalSet& a, const IntervalSet& b, EndOp end);

/*! \brief The image of `a` under a monotonic `f` (a cast, a product or quotient by a number of
 *  known sign): f of each bounded end, open ends staying open; a `decreasing` f (a negative
 *  factor) swaps the ends, f(a.max) becoming the minimum. */
template <typename F>
IntervalSet IntervalMapEnds(const IntervalSet& a, F f, bool decreasing = false) {
  if (decreasing) {
    return {a.HasUpperBound() ? f(a.max_value) : Expr(NegInf()),
            a.HasLowerBound() ? f(a.min_value) : Expr(PosInf())};
  }
  return {a.HasLowerBound() ? f(a.min_value) : Expr(NegInf()),
          a.HasUpperBound() ? f(a.max_value) : Expr(PosInf())};
}

/*!
 * \brief The interval of the values of `e` when each var of `dom` ranges over its interval
 *  (other vars are single points), as TVM's Analyzer.int_set computes it: interval arithmetic
 *  on the ends, with proofs by `ana` (signs of divisors and factors, equal quotients of a
 *  modulo) and its modular sets (multiples of 16 modulo 7168 stop at 7152). The result may be
 *  wider than the exact set; it is never narrower.
 */
IntervalSet EvalIntervalSet(const Expr& e, const std::vector<std::pair<Var, IntervalSet>>& dom,
                            Analyzer& ana);

/*! \brief The interval of the lanes of a vector index (a Ramp: base to its last lane; a
 *  scalable Ramp is unbounded above). */
IntervalSet VectorIntervalSet(const Expr& vec, Analyzer& ana);

/*! \brief TVM's union_lower_bound: the hull of the sets that touch or overlap the first
 *  (sets that leave a gap are left out); an empty list is nothing. */
IntervalSet UnionLowerBound(const std::vector<IntervalSet>& sets);

}  // namespace arith
}  // namespace tessera
