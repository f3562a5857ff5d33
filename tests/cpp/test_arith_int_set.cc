// Tests of symbolic interval sets (EvalIntervalSet, UnionLowerBound) and
// NarrowPredicateExpression, each with a closed-form expectation.
#include <gtest/gtest.h>

#include "tessera/arith/const_fold.h"
#include "tessera/arith/estimate_region.h"
#include "tessera/arith/int_set.h"
#include "tessera/arith/int_solver.h"
#include "tessera/arith/narrow_predicate.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

using arith::IntervalSet;

class IntSetTest : public ::testing::Test {
 protected:
  Var x = VarNode::Make("x", DataType::Int(32));
  Var y = VarNode::Make("y", DataType::Int(32));
  arith::Analyzer ana;

  void ExpectEnds(const IntervalSet& s, int64_t lo, int64_t hi) {
    EXPECT_TRUE(ana.CanProveEqual(s.min_value, Int32(lo))) << AsScript(s.min_value);
    EXPECT_TRUE(ana.CanProveEqual(s.max_value, Int32(hi))) << AsScript(s.max_value);
  }
};

TEST_F(IntSetTest, IntervalArithmetic) {
  std::vector<std::pair<Var, IntervalSet>> dom{{x, {Int32(0), Int32(10)}},
                                               {y, {Int32(1), Int32(11)}}};
  ExpectEnds(arith::EvalIntervalSet(SubNode::Make(x, y), dom, ana), -11, 9);
  ExpectEnds(arith::EvalIntervalSet(MulNode::Make(x, Int32(-2)), dom, ana), -20, 0);
  ExpectEnds(arith::EvalIntervalSet(FloorModNode::Make(AddNode::Make(x, Int32(13)), Int32(10)),
                                    {{x, {Int32(0), Int32(2)}}}, ana),
             3, 5);
  // A var outside the domain is a single point.
  IntervalSet p = arith::EvalIntervalSet(y, {}, ana);
  EXPECT_TRUE(p.IsSinglePoint());
  EXPECT_EQ(p.min_value.get(), y.get());
  EXPECT_THROW(arith::EvalIntervalSet(DivNode::Make(x, Int32(0)), dom, ana), Error);
}

TEST_F(IntSetTest, UnboundedEndsAndUnions) {
  IntervalSet open =
      arith::EvalIntervalSet(AddNode::Make(x, Int32(1)), {{x, {Int32(0), arith::PosInf()}}}, ana);
  EXPECT_TRUE(ana.CanProveEqual(open.min_value, Int32(1)));
  EXPECT_TRUE(arith::IsPosInf(open.max_value));
  IntervalSet u = arith::UnionLowerBound({{Int32(0), Int32(3)}, {Int32(4), Int32(9)}});
  ExpectEnds(u, 0, 9);
  IntervalSet gap = arith::UnionLowerBound({{Int32(0), Int32(3)}, {Int32(5), Int32(9)}});
  ExpectEnds(gap, 0, 3);
  EXPECT_TRUE(arith::UnionLowerBound({}).IsNothing());
}

// The interval arithmetic that EvalIntervalSet and EvalInterval share: the ends are built by
// the caller's EndOp, and an open end stays open.
Expr FoldedEnd(NodeKind kind, const Expr& a, const Expr& b) {
  return arith::FoldBinary(kind, a, b);
}

TEST_F(IntSetTest, SharedEndArithmetic) {
  IntervalSet a{Int32(0), Int32(10)}, b{Int32(1), Int32(11)};
  IntervalSet up{Int32(2), arith::PosInf()}, down{arith::NegInf(), Int32(3)};
  ExpectEnds(arith::IntervalAdd(a, b, FoldedEnd), 1, 21);
  ExpectEnds(arith::IntervalSub(a, b, FoldedEnd), -11, 9);
  IntervalSet s = arith::IntervalAdd(a, up, FoldedEnd);
  EXPECT_TRUE(ana.CanProveEqual(s.min_value, Int32(2)));
  EXPECT_TRUE(arith::IsPosInf(s.max_value));
  s = arith::IntervalSub(a, up, FoldedEnd);  // 10 - 2 above, nothing below
  EXPECT_TRUE(arith::IsNegInf(s.min_value));
  EXPECT_TRUE(ana.CanProveEqual(s.max_value, Int32(8)));
  // min: an end open above gives way to the other set's; an end open below stays open.
  ExpectEnds(arith::IntervalMin(up, b, FoldedEnd), 1, 11);
  s = arith::IntervalMin(down, b, FoldedEnd);
  EXPECT_TRUE(arith::IsNegInf(s.min_value));
  EXPECT_TRUE(ana.CanProveEqual(s.max_value, Int32(3)));
  ExpectEnds(arith::IntervalMax(down, b, FoldedEnd), 1, 11);
  s = arith::IntervalMax(up, b, FoldedEnd);
  EXPECT_TRUE(ana.CanProveEqual(s.min_value, Int32(2)));
  EXPECT_TRUE(arith::IsPosInf(s.max_value));
  // A decreasing map swaps the ends, an open one included.
  auto times_minus_two = [](const Expr& e) { return FoldedEnd(NodeKind::kMul, e, Int32(-2)); };
  ExpectEnds(arith::IntervalMapEnds(a, times_minus_two, /*decreasing=*/true), -20, 0);
  ExpectEnds(arith::IntervalMapEnds(a, times_minus_two), 0, -20);
  s = arith::IntervalMapEnds(up, times_minus_two, /*decreasing=*/true);
  EXPECT_TRUE(arith::IsNegInf(s.min_value));
  EXPECT_TRUE(ana.CanProveEqual(s.max_value, Int32(-4)));
  // The ends are what the EndOp builds: nothing is folded behind its back.
  arith::EndOp unfolded = [](NodeKind kind, const Expr& x, const Expr& y) -> Expr {
    return kind == NodeKind::kAdd ? Expr(AddNode::Make(x, y)) : Expr(SubNode::Make(x, y));
  };
  s = arith::IntervalAdd(a, b, unfolded);
  EXPECT_TRUE(StructuralEqual(s.min_value, AddNode::Make(Int32(0), Int32(1))))
      << AsScript(s.min_value);
  EXPECT_TRUE(StructuralEqual(s.max_value, AddNode::Make(Int32(10), Int32(11))))
      << AsScript(s.max_value);
}

// On the operations both follow, EvalIntervalSet and EvalInterval find the same bounds.
TEST_F(IntSetTest, BothIntervalEvaluatorsAgree) {
  Expr e =
      AddNode::Make(SubNode::Make(MulNode::Make(x, Int32(-3)), FloorDivNode::Make(y, Int32(2))),
                    MaxNode::Make(MinNode::Make(x, Int32(4)), SubNode::Make(y, x)));
  for (bool open : {false, true}) {
    Expr x_hi = open ? Expr(arith::PosInf()) : Int32(10);
    std::vector<std::pair<Var, IntervalSet>> dom{{x, {Int32(0), x_hi}}, {y, {Int32(1), Int32(11)}}};
    arith::IntervalMap map{{x.get(), {Int32(0), open ? nullptr : Int32(10)}},
                           {y.get(), {Int32(1), Int32(11)}}};
    IntervalSet set = arith::EvalIntervalSet(e, dom, ana);
    arith::Interval interval = arith::EvalInterval(e, map);
    // min: -3 * 10 - 5 + max(min(0, 4), 1 - 10) = -35 (none with x open above); max: 0 - 0 +
    // max(min(10, 4), 11 - 0) = 11.
    if (open) {
      EXPECT_TRUE(arith::IsNegInf(set.min_value));
      EXPECT_EQ(interval.min, nullptr);
    } else {
      EXPECT_TRUE(ana.CanProveEqual(set.min_value, interval.min)) << AsScript(interval.min);
      EXPECT_TRUE(ana.CanProveEqual(set.min_value, Int32(-35))) << AsScript(set.min_value);
    }
    EXPECT_TRUE(ana.CanProveEqual(set.max_value, interval.max)) << AsScript(interval.max);
    EXPECT_TRUE(ana.CanProveEqual(set.max_value, Int32(11))) << AsScript(set.max_value);
  }
}

TEST_F(IntSetTest, NarrowPredicate) {
  std::vector<std::pair<Var, Range>> params{{y, RangeNode::Make(Int32(0), Int32(8))}};
  Expr got = arith::NarrowPredicateExpression(GTNode::Make(x, y), params);
  EXPECT_TRUE(StructuralEqual(got, GTNode::Make(x, Int32(7)))) << AsScript(got);
  got = arith::NarrowPredicateExpression(LTNode::Make(FloorModNode::Make(x, Int32(8)), y), params);
  EXPECT_TRUE(StructuralEqual(got, Bool(false))) << AsScript(got);
  EXPECT_THROW(arith::NarrowPredicateExpression(AddNode::Make(x, y), params), Error);
}

TEST_F(IntSetTest, BindAndSubstituteReplacesTheVar) {
  ana.BindAndSubstitute(x, AddNode::Make(y, Int32(1)));
  Expr got = ana.Simplify(ana.SubstituteBound(SubNode::Make(x, y)));
  EXPECT_TRUE(StructuralEqual(got, Int32(1))) << AsScript(got);
  // Bind alone keeps the var (as passes that bind let values need).
  Var z = VarNode::Make("z", DataType::Int(32));
  ana.Bind(z, Expr(AddNode::Make(y, Int32(1))));
  EXPECT_EQ(ana.SubstituteBound(z).get(), z.get());
}

TEST_F(IntSetTest, EstimateRegionBounds) {
  std::vector<arith::IterDomain> iters{{x, 0, 3}, {y, 0, 4}};
  // x*16 + y*4, 4 wide: stride 4 over a mark of extent 12 covers [0, 48) without gaps.
  Expr start = AddNode::Make(MulNode::Make(x, Int32(16)), MulNode::Make(y, Int32(4)));
  auto tiles = arith::EstimateRegionStrictBound({{start, Int32(4)}}, iters, Expr(), ana);
  ASSERT_TRUE(tiles.has_value());
  ExpectEnds((*tiles)[0], 0, 47);
  // 2 wide leaves gaps: no strict bound, and the upper bound is the interval hull.
  auto gaps = arith::EstimateRegionStrictBound({{start, Int32(2)}}, iters, Expr(), ana);
  EXPECT_FALSE(gaps.has_value());
  std::vector<std::pair<Var, IntervalSet>> dom{{x, {Int32(0), Int32(2)}},
                                               {y, {Int32(0), Int32(3)}}};
  auto hull = arith::EstimateRegionUpperBound({{start, Int32(2)}}, &iters, dom, Expr(), ana);
  ASSERT_EQ(hull.size(), 1u);
  ExpectEnds(hull[0], 0, 45);
  // A negative stride: 10 - y*2, 2 wide, covers [4, 11].
  Expr down = SubNode::Make(Int32(10), MulNode::Make(y, Int32(2)));
  auto back = arith::EstimateRegionStrictBound({{down, Int32(2)}}, iters, Expr(), ana);
  ASSERT_TRUE(back.has_value());
  ExpectEnds((*back)[0], 4, 11);
  // A predicate narrows the fused iterator: x*4 + y < 10.
  Expr fused = AddNode::Make(MulNode::Make(x, Int32(4)), y);
  auto narrowed = arith::EstimateRegionStrictBound({{fused, Int32(1)}}, iters,
                                                   LTNode::Make(fused, Int32(10)), ana);
  ASSERT_TRUE(narrowed.has_value());
  ExpectEnds((*narrowed)[0], 0, 9);
}

}  // namespace
}  // namespace tessera
