// IRTransform (the C++ side of stmt_functor.ir_transform): callback order, pruning by preorder,
// kind filters, sharing of unchanged nodes, and type errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/stmt.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

using transform::IRTransform;
using transform::NodeRewrite;

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

struct Program {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16)});
  Var i = VarNode::Make("i", kI32);
  // for i in range(16): A[i] = A[i] + 1.0
  Stmt store = BufferStoreNode::Make(
      a, AddNode::Make(BufferLoadNode::Make(a, {i}), FloatImmNode::Make(kF32, 1.0)), {i});
  Stmt loop = ForNode::Make(i, Int32(0), Int32(16), ForKind::kSerial, store);
};

TEST(IRTransform, PostorderSeesChildrenFirstAndNullKeepsNodes) {
  Program p;
  std::vector<std::string> order;
  NodeRewrite post = [&](const ObjectRef& n) -> ObjectRef {
    order.push_back(NodeKindName(n->kind));
    return nullptr;
  };
  Stmt out = IRTransform(p.loop, nullptr, post, {"tir.For", "BufferStore", "Add"});
  EXPECT_EQ(out, p.loop);  // nothing replaced: the same node
  EXPECT_EQ(order, (std::vector<std::string>{"Add", "BufferStore", "For"}));
}

TEST(IRTransform, PreorderReplacementSkipsChildren) {
  Program p;
  int visited_stores = 0;
  NodeRewrite pre = [&](const ObjectRef& n) -> ObjectRef {
    if (n->kind == NodeKind::kFor) return EvaluateNode::Make(Int32(0));
    return nullptr;
  };
  NodeRewrite post = [&](const ObjectRef& n) -> ObjectRef {
    if (n->kind == NodeKind::kBufferStore) ++visited_stores;
    return nullptr;
  };
  Stmt out = IRTransform(p.loop, pre, post, {});
  EXPECT_EQ(out->kind, NodeKind::kEvaluate);
  EXPECT_EQ(visited_stores, 0);
}

TEST(IRTransform, ReplacedExpressionRebuildsOnlyItsPath) {
  Program p;
  NodeRewrite post = [&](const ObjectRef& n) -> ObjectRef {
    auto* f = AsPtr<FloatImmNode>(n);
    if (f && f->value == 1.0) return FloatImmNode::Make(kF32, 2.0);
    return nullptr;
  };
  Stmt out = IRTransform(p.loop, nullptr, post, {"FloatImm"});
  ASSERT_NE(out, p.loop);
  auto* loop = AsPtr<ForNode>(out);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->loop_var, p.i);
  auto* store = AsPtr<BufferStoreNode>(loop->body);
  ASSERT_NE(store, nullptr);
  auto* add = AsPtr<AddNode>(store->value);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(AsPtr<FloatImmNode>(add->b)->value, 2.0);
  EXPECT_EQ(add->a, AsPtr<AddNode>(AsPtr<BufferStoreNode>(p.store)->value)->a);  // shared
}

TEST(IRTransform, Errors) {
  Program p;
  EXPECT_THROW(IRTransform(p.loop, nullptr, nullptr, {"tir.NoSuchNode"}), Error);
  NodeRewrite stmt_to_expr = [](const ObjectRef&) -> ObjectRef { return Int32(0); };
  EXPECT_THROW(IRTransform(p.loop, nullptr, stmt_to_expr, {"BufferStore"}), Error);
  NodeRewrite wrong_dtype = [](const ObjectRef&) -> ObjectRef { return Int32(0); };
  EXPECT_THROW(IRTransform(p.loop, nullptr, wrong_dtype, {"FloatImm"}), Error);
}

}  // namespace
}  // namespace tessera
