// CopyStmt (new statements, fresh bound variables), WithChildReplaced and SwapStmtFields.
#include <gtest/gtest.h>

#include "tessera/ir/buffer.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

struct LoopNest {
  Buffer buf = BufferNode::Decl("A", kF32, {IntImmNode::Make(kI32, 8)});
  Var n = VarNode::Make("n", kI32);  // free
  Var i = VarNode::Make("i", kI32);
  Stmt store = BufferStoreNode::Make(buf, FloatImmNode::Make(kF32, 1.0), {i});
  Stmt tail = EvaluateNode::Make(n);
  Stmt seq = SeqStmtNode::Make({store, tail});
  Stmt loop = ForNode::Make(i, IntImmNode::Make(kI32, 0), n, ForKind::kSerial, seq);
};

TEST(StmtCopy, CopyHasNewStatementsAndFreshLoopVariables) {
  LoopNest nest;
  Stmt copy = CopyStmt(nest.loop);
  ASSERT_NE(copy.get(), nest.loop.get());
  EXPECT_TRUE(StructuralEqual(copy, nest.loop, /*map_free_vars=*/true));
  auto* loop = AsPtr<ForNode>(copy);
  ASSERT_NE(loop, nullptr);
  EXPECT_NE(loop->loop_var.get(), nest.i.get());
  EXPECT_EQ(loop->extent.get(), nest.n.get());  // the free variable is shared
  auto* seq = AsPtr<SeqStmtNode>(loop->body);
  ASSERT_NE(seq, nullptr);
  EXPECT_NE(loop->body.get(), nest.seq.get());
  EXPECT_NE(seq->seq[1].get(), nest.tail.get());  // unchanged statements are copied too
  auto* store = AsPtr<BufferStoreNode>(seq->seq[0]);
  EXPECT_EQ(store->indices[0].get(), loop->loop_var.get());
  EXPECT_EQ(store->buffer.get(), nest.buf.get());
}

TEST(StmtCopy, WithChildReplacedRebuildsOneNode) {
  LoopNest nest;
  Stmt other = EvaluateNode::Make(IntImmNode::Make(kI32, 0));
  Stmt seq = WithChildReplaced(nest.seq.get(), nest.tail.get(), other);
  ASSERT_NE(seq.get(), nest.seq.get());
  auto* s = AsPtr<SeqStmtNode>(seq);
  EXPECT_EQ(s->seq[0].get(), nest.store.get());
  EXPECT_EQ(s->seq[1].get(), other.get());
  EXPECT_THROW(WithChildReplaced(nest.loop.get(), nest.tail.get(), other), InternalError);
}

TEST(StmtCopy, SwapKeepsIdentityWithTheOtherContent) {
  LoopNest nest;
  Stmt fresh = WithChildReplaced(nest.loop.get(), nest.seq.get(), nest.tail);
  const StmtNode* before = nest.loop.get();
  SwapStmtFields(nest.loop.get(), fresh.get());
  EXPECT_EQ(nest.loop.get(), before);
  EXPECT_EQ(AsPtr<ForNode>(nest.loop)->body.get(), nest.tail.get());
  EXPECT_EQ(AsPtr<ForNode>(fresh)->body.get(), nest.seq.get());
  EXPECT_THROW(SwapStmtFields(nest.loop.get(), nest.tail.get()), InternalError);
}

}  // namespace
}  // namespace tessera
