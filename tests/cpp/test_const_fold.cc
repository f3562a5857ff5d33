// Constant folding of the expression operators (arith/const_fold.h), with TVM's rules, and the
// float buffer index that the IR keeps but lowering refuses.
#include <gtest/gtest.h>

#include <string>

#include "tessera/arith/const_fold.h"
#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

Expr I(int64_t v, DataType t = kI32) { return IntImmNode::Make(t, v); }
Expr F(double v, DataType t = kF32) { return FloatImmNode::Make(t, v); }

void ExpectInt(const Expr& e, int64_t v, DataType t) {
  auto* c = AsPtr<IntImmNode>(e);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->value, v);
  EXPECT_EQ(c->dtype, t);
}

TEST(ConstFold, IntegerConstantsFoldWithTvmsWrapAround) {
  using arith::FoldBinary;
  ExpectInt(FoldBinary(NodeKind::kAdd, I(2), I(3)), 5, kI32);
  ExpectInt(FoldBinary(NodeKind::kFloorDiv, I(-7), I(2)), -4, kI32);
  ExpectInt(FoldBinary(NodeKind::kDiv, I(-7), I(2)), -3, kI32);
  ExpectInt(FoldBinary(NodeKind::kFloorMod, I(-7), I(2)), 1, kI32);
  ExpectInt(FoldBinary(NodeKind::kMod, I(-7), I(2)), -1, kI32);
  ExpectInt(FoldBinary(NodeKind::kAdd, I(127, DataType::Int(8)), I(1, DataType::Int(8))), -128,
            DataType::Int(8));
  ExpectInt(FoldBinary(NodeKind::kMul, I(200, DataType::UInt(8)), I(2, DataType::UInt(8))), 144,
            DataType::UInt(8));
  ExpectInt(FoldBinary(NodeKind::kLE, I(3), I(3)), 1, DataType::Bool());
  ExpectInt(FoldBinary(NodeKind::kMax, I(3), I(9)), 9, kI32);
  // Mod/FloorMod fold only on int32/int64 (TVM's index types).
  EXPECT_NE(
      AsPtr<ModNode>(FoldBinary(NodeKind::kMod, I(7, DataType::Int(8)), I(2, DataType::Int(8)))),
      nullptr);
}

TEST(ConstFold, IdentitiesAndNoFoldWhereTvmDoesNot) {
  using arith::FoldBinary;
  Expr x = VarNode::Make("x", kI32);
  EXPECT_EQ(FoldBinary(NodeKind::kAdd, x, I(0)), x);
  EXPECT_EQ(FoldBinary(NodeKind::kMul, I(1), x), x);
  ExpectInt(FoldBinary(NodeKind::kMul, x, I(0)), 0, kI32);
  EXPECT_EQ(FoldBinary(NodeKind::kMin, x, x), x);
  EXPECT_NE(AsPtr<SubNode>(FoldBinary(NodeKind::kSub, I(0), x)), nullptr);
  EXPECT_NE(AsPtr<LTNode>(FoldBinary(NodeKind::kLT, x, I(3))), nullptr);
  // float32 folds in float32; float16 arithmetic is left alone.
  auto* s = AsPtr<FloatImmNode>(FoldBinary(NodeKind::kAdd, F(0.1), F(0.2)));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->value, static_cast<double>(0.1f + 0.2f));
  DataType f16 = DataType::Float(16);
  EXPECT_NE(AsPtr<AddNode>(FoldBinary(NodeKind::kAdd, F(1, f16), F(2, f16))), nullptr);
  // And/Or with a constant operand.
  Expr p = VarNode::Make("p", DataType::Bool());
  EXPECT_EQ(FoldBinary(NodeKind::kAnd, I(1, DataType::Bool()), p), p);
  ExpectInt(FoldBinary(NodeKind::kOr, p, I(1, DataType::Bool())), 1, DataType::Bool());
  ExpectInt(arith::FoldNot(I(0, DataType::Bool())), 1, DataType::Bool());
}

TEST(ConstFold, TwoVscaleCallsAreEqual) {
  auto vscale = [] { return CallNode::Make(kI32, OpNode::Get("tir.vscale"), {}); };
  // Two separate calls: one runtime value, so == folds to true (TVM's `equal`).
  ExpectInt(arith::FoldBinary(NodeKind::kEQ, vscale(), vscale()), 1, DataType::Bool());
  // Only ==, and only of two vscale calls: != and vscale == 4 stay nodes.
  EXPECT_NE(AsPtr<NENode>(arith::FoldBinary(NodeKind::kNE, vscale(), vscale())), nullptr);
  EXPECT_NE(AsPtr<EQNode>(arith::FoldBinary(NodeKind::kEQ, vscale(), I(4))), nullptr);
}

TEST(ConstFold, AConstantZeroDivisorIsAValueError) {
  Expr x = VarNode::Make("x", kI32);
  for (NodeKind k : {NodeKind::kDiv, NodeKind::kFloorDiv, NodeKind::kFloorMod, NodeKind::kMod}) {
    try {
      arith::FoldBinary(k, x, I(0));
      ADD_FAILURE() << NodeKindName(k) << " by 0 did not fail";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      EXPECT_NE(e.message().find("division by the constant zero"), std::string::npos);
    }
  }
}

TEST(ConstFold, AFloatBufferIndexIsKeptInTheIr) {
  Buffer a = BufferNode::Decl("a", kF32, {I(5)});
  Expr load = BufferLoadNode::Make(a, {F(1.0)}, nullptr);
  EXPECT_EQ(load->dtype, kF32);
  EXPECT_THROW(BufferLoadNode::Make(a, {VarNode::Make("h", DataType::Handle())}, nullptr), Error);
}

}  // namespace
}  // namespace tessera
