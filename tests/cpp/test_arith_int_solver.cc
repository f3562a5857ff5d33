// Tests of the linear analyses and integer solvers: each result is checked by substituting it
// back (the solution satisfies the equations; the bound is tight by enumeration).
#include <gtest/gtest.h>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_solver.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/ir_utils.h"

namespace tessera {
namespace {

int64_t Eval(const Expr& e, const VarMap& values) {
  arith::Analyzer ana;
  auto c = AsConstInt(ana.Simplify(Substitute(e, values)));
  EXPECT_TRUE(c.has_value());
  return c.value_or(0);
}

TEST(ArithIntSolver, DetectLinearEquation) {
  Var a = VarNode::Make("a", DataType::Int(32)), b = VarNode::Make("b", DataType::Int(32));
  // 3a - 2b + 7
  Expr e = AddE(SubE(MulE(a, Int32(3)), MulE(Int32(2), b)), Int32(7));
  std::vector<Expr> coeffs = arith::DetectLinearEquation(e, {a, b});
  ASSERT_EQ(coeffs.size(), 3u);
  EXPECT_EQ(AsConstInt(coeffs[0]), 3);
  EXPECT_EQ(AsConstInt(coeffs[1]), -2);
  EXPECT_EQ(AsConstInt(coeffs[2]), 7);
  EXPECT_TRUE(arith::DetectLinearEquation(MulE(a, b), {a, b}).empty());
}

TEST(ArithIntSolver, DeduceBoundIsTight) {
  Var a = VarNode::Make("a", DataType::Int(32));
  // 4a + 3 < 17: a <= 3
  Expr cond = LTNode::Make(AddE(MulE(a, Int32(4)), Int32(3)), Int32(17));
  arith::Interval s = arith::DeduceBound(a, cond, {}, {});
  ASSERT_FALSE(s.nothing);
  ASSERT_TRUE(s.max);
  EXPECT_FALSE(s.min);
  int64_t hi = *AsConstInt(s.max);
  EXPECT_EQ(Eval(cond, {{a.get(), Int32(hi)}}), 1);
  EXPECT_EQ(Eval(cond, {{a.get(), Int32(hi + 1)}}), 0);
  // a * a < 4 has no bound
  EXPECT_TRUE(arith::DeduceBound(a, LTNode::Make(MulE(a, a), Int32(4)), {}, {}).nothing);
}

TEST(ArithIntSolver, SmithNormalFormSolvesEquations) {
  Var x = VarNode::Make("x", DataType::Int(32)), y = VarNode::Make("y", DataType::Int(32));
  Var z = VarNode::Make("z", DataType::Int(32));
  // 2x + 4y + 6z == 8, x - y == 1: one free variable
  std::vector<Expr> eqs = {
      EQNode::Make(AddE(AddE(MulE(x, Int32(2)), MulE(y, Int32(4))), MulE(z, Int32(6))), Int32(8)),
      EQNode::Make(SubE(x, y), Int32(1))};
  arith::IntConstraintsTransformData t = arith::SolveLinearEquations({{x, y, z}, {}, eqs});
  ASSERT_EQ(t.dst.variables.size(), 1u);
  ASSERT_EQ(t.src_to_dst.size(), 3u);
  for (int64_t n = -3; n <= 3; ++n) {
    VarMap values;
    for (const auto& [v, e] : t.src_to_dst) {
      values[v.get()] = Int32(Eval(e, {{t.dst.variables[0].get(), Int32(n)}}));
    }
    for (const Expr& eq : eqs) EXPECT_EQ(Eval(eq, values), 1);
  }
  // 2x == 2y + 1 has no integer solution
  arith::IntConstraintsTransformData none = arith::SolveLinearEquations(
      {{x, y}, {}, {EQNode::Make(MulE(x, Int32(2)), AddE(MulE(y, Int32(2)), Int32(1)))}});
  ASSERT_EQ(none.dst.relations.size(), 1u);
  EXPECT_TRUE(IsConstInt(none.dst.relations[0], 0));
  EXPECT_TRUE(none.src_to_dst.empty());
}

}  // namespace
}  // namespace tessera
