// The reducer matcher shared by rfactor and tir.LowerCrossThreadReduction.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/ir/buffer.h"
#include "tessera/ir/reducer.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace {

const DataType kF32 = DataType::Float(32);
const DataType kI32 = DataType::Int(32);

struct Fixture {
  Buffer B = BufferNode::Decl("B", kF32, {Int32(8)});
  Buffer A = BufferNode::Decl("A", kF32, {Int32(8)});
  Var i = VarNode::Make("i", kI32);
  Expr acc() const { return BufferLoadNode::Make(B, {i}); }
  Expr x() const { return BufferLoadNode::Make(A, {i}); }
  Ref<BufferStoreNode> store(Expr v) const { return BufferStoreNode::Make(B, v, {i}); }
};

TEST(Reducer, MatchesTheFourReducersInEitherOperandOrder) {
  Fixture f;
  auto sum = MatchReducer(f.store(AddNode::Make(f.acc(), f.x())).get());
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->Name(), "sum");
  EXPECT_TRUE(sum->load_first);
  EXPECT_TRUE(StructuralEqual(sum->rhs, f.x()));
  EXPECT_TRUE(StructuralEqual(sum->identity, FloatImmNode::Make(kF32, 0.0)));
  auto mx = MatchReducer(f.store(MaxNode::Make(f.x(), f.acc())).get());
  ASSERT_TRUE(mx);
  EXPECT_EQ(mx->Name(), "max");
  EXPECT_FALSE(mx->load_first);
  EXPECT_TRUE(StructuralEqual(mx->identity, FloatImmNode::Make(kF32, -3.4028234663852886e38)));
  // Combine keeps the matched operand order.
  Expr y = FloatImmNode::Make(kF32, 2.0);
  EXPECT_TRUE(StructuralEqual(mx->Combine(f.acc(), y), MaxNode::Make(y, f.acc())));
  auto mn = MatchReducer(f.store(MinNode::Make(f.acc(), f.x())).get());
  ASSERT_TRUE(mn);
  EXPECT_EQ(mn->Name(), "min");
  auto prod = MatchReducer(f.store(MulNode::Make(f.acc(), f.x())).get());
  ASSERT_TRUE(prod);
  EXPECT_EQ(prod->Name(), "prod");
  EXPECT_TRUE(StructuralEqual(prod->identity, FloatImmNode::Make(kF32, 1.0)));
}

TEST(Reducer, AnInfiniteInitIsTheIdentityOfAFloatMaxOrMin) {
  Fixture f;
  Expr neg_inf = FloatImmNode::Make(kF32, -INFINITY), pos_inf = FloatImmNode::Make(kF32, INFINITY);
  auto mx = MatchReducer(f.store(MaxNode::Make(f.acc(), f.x())).get(), neg_inf);
  ASSERT_TRUE(mx);
  EXPECT_TRUE(StructuralEqual(mx->identity, neg_inf));
  auto mn = MatchReducer(f.store(MinNode::Make(f.x(), f.acc())).get(), pos_inf);
  ASSERT_TRUE(mn);
  EXPECT_TRUE(StructuralEqual(mn->identity, pos_inf));
  // The infinity on the wrong side, another reducer, or a finite init: the usual identity.
  auto wrong = MatchReducer(f.store(MinNode::Make(f.acc(), f.x())).get(), neg_inf);
  EXPECT_TRUE(StructuralEqual(wrong->identity, ReducerIdentity(NodeKind::kMin, kF32)));
  auto sum = MatchReducer(f.store(AddNode::Make(f.acc(), f.x())).get(), neg_inf);
  EXPECT_TRUE(StructuralEqual(sum->identity, ReducerIdentity(NodeKind::kAdd, kF32)));
  auto finite = MatchReducer(f.store(MaxNode::Make(f.acc(), f.x())).get(),
                             FloatImmNode::Make(kF32, -1.0));
  EXPECT_TRUE(StructuralEqual(finite->identity, ReducerIdentity(NodeKind::kMax, kF32)));
}

TEST(Reducer, RejectsOtherUpdates) {
  Fixture f;
  EXPECT_FALSE(MatchReducer(f.store(SubNode::Make(f.acc(), f.x())).get()));
  EXPECT_FALSE(MatchReducer(f.store(AddNode::Make(f.x(), f.x())).get()));
  // The accumulator must be the very element stored.
  Expr other = BufferLoadNode::Make(f.B, {Int32(0)});
  EXPECT_FALSE(MatchReducer(f.store(AddNode::Make(other, f.x())).get()));
}

TEST(Reducer, IdentitiesAndNames) {
  EXPECT_TRUE(
      StructuralEqual(ReducerIdentity(NodeKind::kMax, kI32), IntImmNode::Make(kI32, INT32_MIN)));
  EXPECT_TRUE(
      StructuralEqual(ReducerIdentity(NodeKind::kMin, kI32), IntImmNode::Make(kI32, INT32_MAX)));
  EXPECT_TRUE(StructuralEqual(ReducerIdentity(NodeKind::kAdd, kI32), IntImmNode::Make(kI32, 0)));
  EXPECT_TRUE(StructuralEqual(ReducerIdentity(NodeKind::kMax, DataType::Float(16)),
                              FloatImmNode::Make(DataType::Float(16), -65504.0)));
  EXPECT_EQ(ReducerKindFromName("sum"), NodeKind::kAdd);
  EXPECT_EQ(ReducerKindFromName("prod"), NodeKind::kMul);
  EXPECT_FALSE(ReducerKindFromName("xor"));
}

TEST(Reducer, LogicalReducersOfBoolsOnlyWhenAsked) {
  const DataType kBool = DataType::Bool();
  Buffer B = BufferNode::Decl("B", kBool, {Int32(8)});
  Buffer A = BufferNode::Decl("A", kBool, {Int32(8)});
  Var i = VarNode::Make("i", kI32);
  Expr acc = BufferLoadNode::Make(B, {i}), x = BufferLoadNode::Make(A, {i});
  auto any_store = BufferStoreNode::Make(B, OrNode::Make(acc, x), {i});
  auto all_store = BufferStoreNode::Make(B, AndNode::Make(x, acc), {i});
  // The GPU lowerings ask for the arithmetic reducers only.
  EXPECT_FALSE(MatchReducer(any_store.get()));
  EXPECT_FALSE(MatchReducer(all_store.get()));
  auto any = MatchReducer(any_store.get(), Expr(), true);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->Name(), "any");
  EXPECT_TRUE(any->load_first);
  EXPECT_TRUE(StructuralEqual(any->identity, IntImmNode::Make(kBool, 0)));
  EXPECT_TRUE(StructuralEqual(any->Combine(acc, x), OrNode::Make(acc, x)));
  auto all = MatchReducer(all_store.get(), Expr(), true);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->Name(), "all");
  EXPECT_FALSE(all->load_first);
  EXPECT_TRUE(StructuralEqual(all->identity, IntImmNode::Make(kBool, 1)));
  EXPECT_TRUE(StructuralEqual(all->Combine(acc, x), AndNode::Make(x, acc)));
}

}  // namespace
}  // namespace tessera
