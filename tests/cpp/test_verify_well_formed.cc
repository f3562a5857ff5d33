// VerifyWellFormed: definitions, scopes, and blocks using their own iterators.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);

Expr C(int64_t v) { return Int32(v); }
Stmt Loop(Var v, Stmt body) { return ForNode::Make(v, C(0), C(8), ForKind::kSerial, body); }

PrimFunc Func(Stmt body, Buffer a) {
  Var pa = VarNode::Make("A", DataType::Handle());
  return PrimFuncNode::Make({pa}, {{pa, a}}, body);
}

// for i: with T.block("B"): vi = T.axis.spatial(8, i); A[<index(i, vi)>] = 0
Stmt BlockInLoop(Var i, Var vi, Buffer a, Expr index) {
  Block block =
      BlockNode::Make({IterVarNode::Make(RangeNode::Make(C(0), C(8)), vi, IterVarType::kDataPar)},
                      {}, {}, "B", BufferStoreNode::Make(a, C(0), {index}));
  return Loop(i, BlockRealizeNode::Make({i}, Bool(true), block));
}

TEST(VerifyWellFormed, AGoodBlockPasses) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var i = VarNode::Make("i", kI32), vi = VarNode::Make("vi", kI32);
  EXPECT_TRUE(transform::VerifyWellFormed(Func(BlockInLoop(i, vi, a, vi), a)).empty());
}

TEST(VerifyWellFormed, LoopVariableInsideABlock) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var i = VarNode::Make("i", kI32), vi = VarNode::Make("vi", kI32);
  auto errors = transform::VerifyWellFormed(Func(BlockInLoop(i, vi, a, i), a));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].message.find("Variable i is a loop variable"), std::string::npos);
}

TEST(VerifyWellFormed, OpaqueBlocksMayUseLoopVariables) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var i = VarNode::Make("i", kI32);
  Block block = BlockNode::Make({}, {}, {}, "opaque", BufferStoreNode::Make(a, C(0), {i}));
  Stmt body = Loop(i, BlockRealizeNode::Make({}, Bool(true), block));
  EXPECT_TRUE(transform::VerifyWellFormed(Func(body, a)).empty());
}

TEST(VerifyWellFormed, IteratorOutsideItsBlockAndDoubleDefinitions) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var i = VarNode::Make("i", kI32), vi = VarNode::Make("vi", kI32);
  Stmt leak = SeqStmtNode::Make({BlockInLoop(i, vi, a, vi), BufferStoreNode::Make(a, vi, {C(0)})});
  auto errors = transform::VerifyWellFormed(Func(leak, a));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("Block iterator vi of block \"B\" is used outside its block"),
            std::string::npos);

  Var j = VarNode::Make("j", kI32);
  Stmt twice = SeqStmtNode::Make({Loop(j, EvaluateNode::Make(j)), Loop(j, EvaluateNode::Make(j))});
  errors = transform::VerifyWellFormed(Func(twice, a));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("Variable j is defined more than once"), std::string::npos);
  // Two loops one after the other: a later re-definition, not a nested one.
  EXPECT_NE(errors[0].detail.find("variable j is bound in two places"), std::string::npos);
  EXPECT_NE(errors[0].detail.find("bound again after at"), std::string::npos);

  Stmt nested = Loop(j, Loop(j, EvaluateNode::Make(j)));
  errors = transform::VerifyWellFormed(Func(nested, a));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].detail.find("variable j is bound again inside its own scope"), std::string::npos);
}

TEST(VerifyWellFormed, UseAfterTheScopeEnds) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var j = VarNode::Make("j", kI32);
  Stmt after = SeqStmtNode::Make({Loop(j, EvaluateNode::Make(j)), EvaluateNode::Make(j)});
  auto errors = transform::VerifyWellFormed(Func(after, a));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].detail.find("variable j is used at"), std::string::npos);
}

TEST(VerifyWellFormed, EachFunctionBindsItsOwnVariables) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var j = VarNode::Make("j", kI32), k = VarNode::Make("k", kI32);
  auto module = [&](Var second) {
    return IRModuleNode::Make({{GlobalVarNode::Make("f"), Func(Loop(j, EvaluateNode::Make(j)), a)},
                               {GlobalVarNode::Make("g"),
                                Func(Loop(second, EvaluateNode::Make(second)), a)}});
  };
  EXPECT_TRUE(transform::VerifyDefinitionsPerFunction(module(k)).empty());
  auto errors = transform::VerifyDefinitionsPerFunction(module(j));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("Variable j is defined by both function f and function g"),
            std::string::npos);
}

TEST(VerifyWellFormed, FreeVariablesAreSymbolic) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var n = VarNode::Make("n", kI32);
  EXPECT_TRUE(transform::VerifyWellFormed(Func(BufferStoreNode::Make(a, n, {C(0)}), a)).empty());
}

// As TVM's parser, well-formedness does not check bounds (the build does); a constant divisor
// of zero is still refused.
TEST(VerifyWellFormed, BoundsAreTheBuildsCheckButZeroDivisorsAreNot) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  PrimFunc oob = Func(BufferStoreNode::Make(a, C(1), {C(100)}), a);
  EXPECT_TRUE(transform::VerifyWellFormed(oob).empty());
  auto bounds = transform::VerifyConstantBufferBounds(oob);
  ASSERT_EQ(bounds.size(), 1u);
  EXPECT_NE(bounds[0].message.find("Index 100 is out of bounds"), std::string::npos);
  Var n = VarNode::Make("n", kI32);
  PrimFunc div = Func(BufferStoreNode::Make(a, FloorDivNode::Make(n, C(0)), {C(0)}), a);
  auto errors = transform::VerifyWellFormed(div);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("by zero"), std::string::npos);
}

}  // namespace
}  // namespace tessera
