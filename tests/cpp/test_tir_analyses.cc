// VerifySSA, CalculateAllocatedBytes and DetectBufferAccessLCA on hand-built functions.
#include <gtest/gtest.h>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/buffer.h"
#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);

Expr C(int64_t v) { return Int32(v); }
For Loop(Var v, int64_t extent, Stmt body) {
  return ForNode::Make(v, C(0), C(extent), ForKind::kSerial, body);
}

TEST(VerifySSA, ParametersLetsAndLoopsBindOnce) {
  Var x = VarNode::Make("x", kI32), y = VarNode::Make("y", kI32);
  Stmt use = EvaluateNode::Make(AddNode::Make(x, y));
  EXPECT_TRUE(transform::VerifySSA(PrimFuncNode::Make({x, y}, {}, use)));
  EXPECT_FALSE(
      transform::VerifySSA(PrimFuncNode::Make({x, y}, {}, LetStmtNode::Make(x, C(1), use))));
  EXPECT_FALSE(transform::VerifySSA(PrimFuncNode::Make({x}, {}, Loop(y, 4, Loop(y, 4, use)))));
  Expr let = LetNode::Make(y, C(1), y);
  EXPECT_TRUE(transform::VerifySSA(
      PrimFuncNode::Make({x}, {}, EvaluateNode::Make(AddNode::Make(let, let)))));
  Expr other = LetNode::Make(y, C(2), y);
  EXPECT_FALSE(transform::VerifySSA(
      PrimFuncNode::Make({x}, {}, EvaluateNode::Make(AddNode::Make(let, other)))));
}

TEST(CalculateAllocatedBytes, PeakOfNestedAllocationsPerScope) {
  Var a = VarNode::MakePointer("a", DataType::Float(32), "shared");
  Var b = VarNode::MakePointer("b", DataType::Float(16, 4), "shared");
  Var c = VarNode::MakePointer("c", DataType::Int(8), "local");
  Var n = VarNode::Make("n", kI32);
  Stmt inner =
      AllocateNode::Make(b, DataType::Float(16, 4), {C(3)}, Bool(true), EvaluateNode::Make(C(0)));
  Stmt outer = AllocateNode::Make(a, DataType::Float(32), {C(2), C(5)}, Bool(true), inner);
  // A sibling allocation after `outer` is not live together with it.
  Stmt later = AllocateNode::Make(c, DataType::Int(8), {n}, Bool(true), EvaluateNode::Make(C(0)));
  Stmt sibling =
      AllocateNode::Make(VarNode::MakePointer("d", DataType::Float(32), "shared"),
                         DataType::Float(32), {C(4)}, Bool(true), EvaluateNode::Make(C(0)));
  auto sizes = transform::CalculateAllocatedBytes(
      PrimFuncNode::Make({}, {}, SeqStmtNode::Make({outer, sibling, later})));
  std::map<std::string, int64_t> got(sizes.begin(), sizes.end());
  EXPECT_EQ(got, (std::map<std::string, int64_t>{{"shared", 2 * 5 * 4 + 3 * 8}, {"local", 0}}));
}

TEST(DetectBufferAccessLCA, CommonLoopOfTwoAccesses) {
  Buffer a = BufferNode::Decl("A", kI32, {C(8)});
  Var pa = VarNode::Make("A", DataType::Handle());
  Var i = VarNode::Make("i", kI32), j = VarNode::Make("j", kI32), k = VarNode::Make("k", kI32);
  Stmt store = BufferStoreNode::Make(a, C(0), {j});
  Stmt load = EvaluateNode::Make(BufferLoadNode::Make(a, {k}));
  Stmt loop_i = Loop(i, 8, SeqStmtNode::Make({Loop(j, 8, store), Loop(k, 8, load)}));
  auto lca = transform::DetectBufferAccessLCA(PrimFuncNode::Make({pa}, {{pa, a}}, loop_i));
  ASSERT_EQ(lca.size(), 1u);
  EXPECT_EQ(lca[0].first.get(), a.get());
  EXPECT_EQ(lca[0].second.get(), loop_i.get());
}

TEST(EstimateTIRFlops, LoopsMultiplyComparisonsAreFree) {
  Buffer a = BufferNode::Decl("A", DataType::Float(32), {C(8)});
  Var i = VarNode::Make("i", kI32);
  Expr value = AddNode::Make(
      MulNode::Make(BufferLoadNode::Make(a, {i}), FloatImmNode::Make(DataType::Float(32), 2.0)),
      FloatImmNode::Make(DataType::Float(32), 1.0));
  Stmt guarded = IfThenElseNode::Make(LTNode::Make(i, C(4)), BufferStoreNode::Make(a, value, {i}));
  EXPECT_EQ(transform::EstimateTIRFlops(Loop(i, 8, guarded)), 16.0);
}

TEST(IdentifyMemCpy, RowCopyRegionsAndAReorderingRefused) {
  Buffer a = BufferNode::Decl("A", DataType::Float(32), {C(4), C(8)});
  Buffer b = BufferNode::Decl("B", DataType::Float(32), {C(32)});
  Var i = VarNode::Make("i", kI32), j = VarNode::Make("j", kI32);
  // B[i * 8 + j] = A[i, j]: a copy of all of A into all of B.
  Stmt copy = BufferStoreNode::Make(b, BufferLoadNode::Make(a, {i, j}),
                                    {AddNode::Make(MulNode::Make(i, C(8)), j)});
  arith::Analyzer ana;
  auto whole = transform::IdentifyMemCpy(Loop(i, 4, Loop(j, 8, copy)), ana);
  ASSERT_TRUE(whole.source) << whole.reason;
  ASSERT_EQ(whole.source->region.size(), 2u);
  EXPECT_TRUE(IsConstInt(whole.source->region[0]->extent, 4));
  EXPECT_TRUE(IsConstInt(whole.source->region[1]->extent, 8));
  ASSERT_EQ(whole.dest->region.size(), 1u);
  EXPECT_TRUE(IsConstInt(whole.dest->region[0]->min, 0));
  EXPECT_TRUE(IsConstInt(whole.dest->region[0]->extent, 32));
  // B[j * 4 + i] = A[i, j] visits every element once but transposes them.
  Stmt transposed = BufferStoreNode::Make(b, BufferLoadNode::Make(a, {i, j}),
                                          {AddNode::Make(MulNode::Make(j, C(4)), i)});
  auto refused = transform::IdentifyMemCpy(Loop(i, 4, Loop(j, 8, transposed)), ana);
  EXPECT_FALSE(refused.source);
  EXPECT_NE(refused.reason.find("reordered"), std::string::npos) << refused.reason;
  // Every loop of a statement is tried: the inner loop alone copies one row.
  auto all = transform::IdentifyMemCpyLoops(Loop(i, 4, Loop(j, 8, copy)));
  ASSERT_EQ(all.size(), 2u);
  ASSERT_TRUE(all[1].source) << all[1].reason;
  EXPECT_EQ(all[1].source->region[0]->min.get(), i.get());
  EXPECT_TRUE(IsConstInt(all[1].source->region[1]->extent, 8));
}

}  // namespace
}  // namespace tessera
