// Tests of symbolic interval sets (EvalIntervalSet, UnionLowerBound) and
// NarrowPredicateExpression, each with a closed-form expectation.
#include <gtest/gtest.h>

#include "tessera/arith/int_set.h"
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

}  // namespace
}  // namespace tessera
