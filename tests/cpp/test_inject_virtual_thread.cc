// tir.InjectVirtualThread from C++: which allocations depend on the virtual thread (directly,
// through another buffer, or not at all), and where the body is repeated (unrolled, or a serial
// loop when a loop lies below the repetition point).
#include <gtest/gtest.h>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

IRModule Wrap(const Var& v, int64_t n, const std::string& tag, const Stmt& body,
              std::vector<Var> params) {
  IterVar iv =
      IterVarNode::Make(RangeNode::Make(Int32(0), Int32(n)), v, IterVarType::kThreadIndex, tag);
  Stmt s = AttrStmtNode::Make(iv, "virtual_thread", Int32(n), body);
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("main");
  return IRModuleNode::FromFunc(
      PrimFuncNode::Make(std::move(params), {}, s, DataType::Void(), attrs), "main");
}

Stmt Alloc(const Buffer& b, int64_t extent, const Stmt& body) {
  return AllocateNode::Make(b->data, b->dtype, {Int32(extent)}, Bool(true), body);
}

int64_t Extent(const Stmt& s) {
  auto* a = AsPtr<AllocateNode>(s);
  EXPECT_NE(a, nullptr);
  if (a == nullptr) return -1;
  auto c = AsConstInt(a->extents[0]);
  return c ? *c : -1;
}

// A[v] -> B (4 slots) -> C (4 slots); R (4 slots) is only read: B and C depend on v, R does not.
TEST(InjectVirtualThread, DependenceReachesBuffersWrittenFromDependentOnes) {
  Var v = VarNode::Make("v", kI32);
  Buffer a = BufferNode::Decl("A", kF32, {Int32(8)});
  Buffer b = BufferNode::Decl("B", kF32, {Int32(4)}, "shared");
  Buffer c = BufferNode::Decl("C", kF32, {Int32(4)}, "shared");
  Buffer r = BufferNode::Decl("R", kF32, {Int32(4)}, "shared");
  Stmt body = SeqStmtNode::Make({
      BufferStoreNode::Make(b, BufferLoadNode::Make(a, {v}), {Int32(0)}),
      BufferStoreNode::Make(
          c,
          AddNode::Make(BufferLoadNode::Make(b, {Int32(0)}), BufferLoadNode::Make(r, {Int32(0)})),
          {Int32(1)}),
  });
  Stmt allocs = Alloc(b, 4, Alloc(c, 4, Alloc(r, 4, body)));
  IRModule out = transform::InjectVirtualThread()->fn(Wrap(v, 2, "vthread", allocs, {a->data}), {});
  Stmt s = out->Lookup("main")->body;
  EXPECT_EQ(Extent(s), 8);  // B, one copy per thread
  s = AsPtr<AllocateNode>(s)->body;
  EXPECT_EQ(Extent(s), 8);  // C, through B
  s = AsPtr<AllocateNode>(s)->body;
  EXPECT_EQ(Extent(s), 4);  // R, shared by the threads
  auto* seq = AsPtr<SeqStmtNode>(AsPtr<AllocateNode>(s)->body);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->seq.size(), 4u);  // each store repeated for v = 0, 1
}

TEST(InjectVirtualThread, CthreadCopiesEvenAnIndependentAllocation) {
  Var v = VarNode::Make("v", kI32);
  Buffer r = BufferNode::Decl("R", kF32, {Int32(4)}, "local");
  Stmt body = BufferStoreNode::Make(r, FloatImmNode::Make(kF32, 1.0), {Int32(0)});
  IRModule out =
      transform::InjectVirtualThread()->fn(Wrap(v, 3, "cthread", Alloc(r, 4, body), {}), {});
  Stmt s = out->Lookup("main")->body;
  EXPECT_EQ(Extent(s), 12);
  auto* seq = AsPtr<SeqStmtNode>(AsPtr<AllocateNode>(s)->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 3u);
  // Thread 2 writes its own copy, at 2 * 4.
  auto* last = AsPtr<BufferStoreNode>(seq->seq[2]);
  ASSERT_NE(last, nullptr);
  auto* mul = AsPtr<MulNode>(last->indices[0]);
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(AsConstInt(mul->a).value_or(-1), 2);
  EXPECT_EQ(AsConstInt(mul->b).value_or(-1), 4);
}

TEST(InjectVirtualThread, ALoopBelowTheRepetitionPointMakesASerialLoop) {
  // x = v * 4; for j in range(4): A[x + j] = 0. The let depends on v and holds a loop: the body
  // is repeated by a serial loop over the two threads, not unrolled.
  Var v = VarNode::Make("v", kI32);
  Var x = VarNode::Make("x", kI32);
  Var j = VarNode::Make("j", kI32);
  Buffer a = BufferNode::Decl("A", kF32, {Int32(8)});
  Stmt loop =
      ForNode::Make(j, Int32(0), Int32(4), ForKind::kSerial,
                    BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 0.0), {AddNode::Make(x, j)}));
  Stmt body = LetStmtNode::Make(x, MulNode::Make(v, Int32(4)), loop);
  IRModule out = transform::InjectVirtualThread()->fn(Wrap(v, 2, "vthread", body, {a->data}), {});
  auto* outer = AsPtr<ForNode>(out->Lookup("main")->body);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->loop_var->name, "v.s");
  EXPECT_EQ(AsConstInt(outer->extent).value_or(-1), 2);
  EXPECT_NE(AsPtr<LetStmtNode>(outer->body), nullptr);
}

TEST(InjectVirtualThread, NoVirtualThreadReturnsTheSameModule) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(8)});
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("main");
  IRModule mod = IRModuleNode::FromFunc(
      PrimFuncNode::Make({a->data}, {},
                         BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 0.0), {Int32(0)}),
                         DataType::Void(), attrs),
      "main");
  EXPECT_EQ(transform::InjectVirtualThread()->fn(mod, {}), mod);
}

}  // namespace
}  // namespace tessera
