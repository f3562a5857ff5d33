// Tests of the affine iterator maps: detection of fused/split indices, bijectivity, and the
// inverse map at given index values, compared with closed-form expressions.
#include <gtest/gtest.h>

#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace {

Expr Add(const Expr& a, const Expr& b) { return AddNode::Make(a, b); }
Expr Mul(const Expr& a, int64_t b) { return MulNode::Make(a, Int32(b)); }
Expr Div(const Expr& a, int64_t b) { return FloorDivNode::Make(a, Int32(b)); }
Expr Mod(const Expr& a, int64_t b) { return FloorModNode::Make(a, Int32(b)); }

Expr Find(const std::vector<std::pair<Var, Expr>>& m, const Var& v) {
  for (const auto& [var, e] : m)
    if (var.get() == v.get()) return e;
  return nullptr;
}

TEST(IterAffineMap, FusedThenSplitInvertsToDivMod) {
  Var i = VarNode::Make("i", DataType::Int(32)), j = VarNode::Make("j", DataType::Int(32));
  Var a = VarNode::Make("a", DataType::Int(32)), b = VarNode::Make("b", DataType::Int(32));
  std::vector<arith::IterDomain> iters = {{i, 0, 4}, {j, 0, 32}};
  Expr fused = Add(Mul(i, 32), j);
  auto map = arith::DetectIterMap({Div(fused, 8), Mod(fused, 8)}, iters);
  ASSERT_TRUE(map);
  EXPECT_TRUE(arith::IsBijective(*map, iters));
  auto inv = arith::InverseAffineIterMap(*map, {a, b});
  ASSERT_TRUE(inv);
  Expr value = Add(b, Mul(a, 8));  // built from the innermost split outwards, as TVM
  EXPECT_TRUE(StructuralEqual(Find(*inv, i), Div(value, 32)));
  EXPECT_TRUE(StructuralEqual(Find(*inv, j), Mod(value, 32)));
}

TEST(IterAffineMap, OffsetAndUnitIterators) {
  Var i = VarNode::Make("i", DataType::Int(32)), u = VarNode::Make("u", DataType::Int(32));
  Var a = VarNode::Make("a", DataType::Int(32));
  std::vector<arith::IterDomain> iters = {{u, 0, 1}, {i, 0, 16}};
  auto map = arith::DetectIterMap({Add(i, Int32(1))}, iters);
  ASSERT_TRUE(map);
  EXPECT_TRUE(arith::IsBijective(*map, iters));  // a unit iterator need not be used
  auto inv = arith::InverseAffineIterMap(*map, {a});
  ASSERT_TRUE(inv);
  EXPECT_TRUE(StructuralEqual(Find(*inv, i), SubNode::Make(a, Int32(1))));
  EXPECT_FALSE(Find(*inv, u));
}

TEST(IterAffineMap, NotAffineOrNotBijective) {
  Var i = VarNode::Make("i", DataType::Int(32)), j = VarNode::Make("j", DataType::Int(32));
  std::vector<arith::IterDomain> iters = {{i, 0, 16}, {j, 0, 16}};
  std::string why;
  EXPECT_FALSE(arith::DetectIterMap({MulNode::Make(i, j)}, iters, &why));
  EXPECT_NE(why.find("product of two iterators"), std::string::npos);
  // i // 4 and j: i's low bits are not covered.
  auto map = arith::DetectIterMap({Div(i, 4), j}, iters);
  ASSERT_TRUE(map);
  EXPECT_FALSE(arith::IsBijective(*map, iters));
  // A division that does not divide the extent pads the iterator: not a bijection.
  std::vector<arith::IterDomain> odd = {{i, 0, 15}};
  auto padded = arith::DetectIterMap({Div(i, 4), Mod(i, 4)}, odd);
  ASSERT_TRUE(padded);
  EXPECT_FALSE(arith::IsBijective(*padded, odd));
}

// TVM's checks: overlapping splits fail at every level but no_check; bijective maps use every
// iterator and take no padding, surjective maps may leave out the top of a mark.
TEST(IterAffineMap, CheckedLevels) {
  Var x = VarNode::Make("x", DataType::Int(32)), y = VarNode::Make("y", DataType::Int(32));
  std::vector<arith::IterDomain> iters = {{x, 0, 8}, {y, 0, 6}};
  using arith::IterMapLevel;
  std::string error;
  EXPECT_FALSE(arith::DetectIterMapChecked({x, Add(x, Int32(1))}, iters, IterMapLevel::kSurjective,
                                           true, &error));
  EXPECT_NE(error.find("overlap"), std::string::npos);
  EXPECT_TRUE(arith::DetectIterMapChecked({x, x}, iters, IterMapLevel::kNoCheck, true));
  EXPECT_TRUE(arith::DetectIterMapChecked({Div(x, 4)}, iters, IterMapLevel::kSurjective, true));
  EXPECT_FALSE(arith::DetectIterMapChecked({Div(x, 4), Mod(x, 4)}, iters, IterMapLevel::kBijective,
                                           true, &error));
  EXPECT_NE(error.find("y"), std::string::npos);
  // x + 2 over a padded x: (x + 2) // 4 takes 3 values from 0 (the mark pads 2 below x)
  auto padded = arith::DetectIterMapChecked({Div(Add(x, Int32(2)), 4)}, {{x, 0, 8}},
                                            IterMapLevel::kSurjective, true);
  ASSERT_TRUE(padded);
  EXPECT_EQ((*padded)[0]->args[0]->extent, 3);
  EXPECT_EQ((*padded)[0]->base, 0);
}

// A predicate bounds the fused mark: 6 <= x * 10 + y < 128 leaves 122 values from 6.
TEST(IterAffineMap, PredicateBoundsTheFusedMark) {
  Var x = VarNode::Make("x", DataType::Int(32)), y = VarNode::Make("y", DataType::Int(32));
  Expr fused = Add(Mul(x, 10), y);
  Expr predicate = AndNode::Make(LENode::Make(Int32(6), fused), LTNode::Make(fused, Int32(128)));
  auto map =
      arith::DetectIterMapChecked({fused}, {{x, 0, 13}, {y, 0, 10}},
                                  arith::IterMapLevel::kSurjective, true, nullptr, predicate);
  ASSERT_TRUE(map);
  EXPECT_EQ((*map)[0]->args[0]->extent, 122);
  EXPECT_EQ((*map)[0]->base, 6);
}

// x * 4 + y divided by the sub-iterator y: outer x, inner y, every value in range.
TEST(IterAffineMap, SubspaceDivide) {
  Var x = VarNode::Make("x", DataType::Int(32)), y = VarNode::Make("y", DataType::Int(32));
  auto map = arith::DetectIterMapChecked({Add(Mul(x, 4), y)}, {{x, 0, 8}, {y, 0, 4}},
                                         arith::IterMapLevel::kSurjective, true);
  ASSERT_TRUE(map);
  auto division = arith::SubspaceDivide(*map, {y}, DataType::Int(32));
  ASSERT_TRUE(division);
  ASSERT_EQ(division->parts.size(), 1u);
  const auto& [outer, inner] = division->parts[0];
  EXPECT_EQ(outer->extent, 8);
  EXPECT_EQ(inner->extent, 4);
  EXPECT_TRUE(StructuralEqual(arith::IterMarkToExpr(outer, DataType::Int(32)), x));
  EXPECT_TRUE(StructuralEqual(arith::IterMarkToExpr(inner, DataType::Int(32)), y));
  EXPECT_TRUE(IsConstInt(division->outer_predicate, 1));
  EXPECT_FALSE(arith::SubspaceDivide(*map, {x}, DataType::Int(32)));
}

// TVM mode: a lone iterator of negative scale is one split; y + x * 12 over 8 pads y on the left
// by (x * 12) % 8, which is 0 or 4, both padding [0, 20) to 24.
TEST(IterAffineMap, NegativeScaleAndFreeOffsetPad) {
  Var x = VarNode::Make("x", DataType::Int(32)), y = VarNode::Make("y", DataType::Int(32));
  auto down = arith::DetectIterMapChecked({SubNode::Make(Int32(7), Mul(y, 3))}, {{y, 0, 5}},
                                          arith::IterMapLevel::kSurjective, true);
  ASSERT_TRUE(down);
  ASSERT_EQ((*down)[0]->args.size(), 1u);
  EXPECT_EQ((*down)[0]->args[0]->scale, -3);
  EXPECT_EQ((*down)[0]->base, 7);
  Expr offset = Add(Mul(x, 12), y);
  auto padded = arith::DetectIterMapChecked({Div(offset, 8)}, {{y, 0, 20}},
                                            arith::IterMapLevel::kSurjective, true);
  ASSERT_TRUE(padded);
  EXPECT_EQ((*padded)[0]->args[0]->extent, 3);
  EXPECT_TRUE((*padded)[0]->free_base.get());
  std::string error;
  EXPECT_FALSE(arith::DetectIterMapChecked({Div(offset, 8)}, {{y, 0, 21}},
                                           arith::IterMapLevel::kSurjective, true, &error));
  EXPECT_NE(error.find("not constant"), std::string::npos) << error;
}

}  // namespace
}  // namespace tessera
