// tir.ReduceBranchingThroughOvercompute (a guarded write that a later loop overwrites loses its
// guard, only with the dataflow option and only when every element is overwritten) and
// tir.StorageRewrite in a special memory (one allocation at aligned offsets, capacity checked).
#include <gtest/gtest.h>

#include <memory>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/stmt.h"
#include "tessera/support/error.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);
const DataType kI16 = DataType::Int(16);

IRModule Wrap(std::vector<Var> params, const Stmt& body) {
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("main");
  return IRModuleNode::FromFunc(
      PrimFuncNode::Make(std::move(params), {}, body, DataType::Void(), attrs), "main");
}

// for i in range(8): if i < 5: A[i] = 1
// for k in range(8): if k >= `from`: A[k] = 2
IRModule Overwrite(int64_t from) {
  Buffer a = BufferNode::Decl("A", kI32, {Int32(8)});
  Var i = VarNode::Make("i", kI32), k = VarNode::Make("k", kI32);
  Stmt first = ForNode::Make(
      i, Int32(0), Int32(8), ForKind::kSerial,
      IfThenElseNode::Make(LTNode::Make(i, Int32(5)), BufferStoreNode::Make(a, Int32(1), {i})));
  Stmt second = ForNode::Make(
      k, Int32(0), Int32(8), ForKind::kSerial,
      IfThenElseNode::Make(GENode::Make(k, Int32(from)), BufferStoreNode::Make(a, Int32(2), {k})));
  return Wrap({a->data}, DeclBufferNode::Make(a, SeqStmtNode::Make({first, second})));
}

transform::PassContext Dataflow() {
  transform::PassContext ctx;
  auto record = std::make_shared<transform::ConfigDict>();
  (*record)["use_dataflow_analysis"] = transform::ConfigValue{true};
  ctx.config["tir.ReduceBranchingThroughOvercompute"] = transform::ConfigValue{record};
  return ctx;
}

const SeqStmtNode* Loops(const IRModule& mod) {
  auto* decl = AsPtr<DeclBufferNode>(mod->Lookup("main")->body);
  return decl ? AsPtr<SeqStmtNode>(decl->body) : nullptr;
}

TEST(ReduceBranchingThroughOvercompute, OverwrittenWriteLosesItsGuard) {
  IRModule out = transform::ReduceBranchingThroughOvercompute()->fn(Overwrite(5), Dataflow());
  const SeqStmtNode* seq = Loops(out);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  auto* first = AsPtr<ForNode>(seq->seq[0]);
  ASSERT_NE(first, nullptr);
  EXPECT_NE(AsPtr<BufferStoreNode>(first->body), nullptr);
  auto* second = AsPtr<ForNode>(seq->seq[1]);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(AsPtr<IfThenElseNode>(second->body), nullptr);  // its guard stays
}

TEST(ReduceBranchingThroughOvercompute, NeedsTheOptionAndFullCover) {
  IRModule plain = Overwrite(5);
  EXPECT_EQ(transform::ReduceBranchingThroughOvercompute()->fn(plain, {}), plain);
  IRModule gap = Overwrite(6);  // A[5] would be written and never overwritten
  EXPECT_EQ(transform::ReduceBranchingThroughOvercompute()->fn(gap, Dataflow()), gap);
}

// X: float32[3] and Y: int16[5], alive together, in "local.tsr_sram".
IRModule TwoSpecialBuffers(const Buffer& out) {
  Var xv = VarNode::MakePointer("X", kF32, "local.tsr_sram");
  Var yv = VarNode::MakePointer("Y", kI16, "local.tsr_sram");
  Buffer x = BufferNode::Make(xv, kF32, {Int32(3)}, {}, nullptr, "X");
  Buffer y = BufferNode::Make(yv, kI16, {Int32(5)}, {}, nullptr, "Y");
  Var i = VarNode::Make("i", kI32);
  Stmt body = SeqStmtNode::Make({
      BufferStoreNode::Make(x, FloatImmNode::Make(kF32, 1.0), {Int32(2)}),
      BufferStoreNode::Make(y, IntImmNode::Make(kI16, 3), {Int32(4)}),
      BufferStoreNode::Make(
          out,
          AddNode::Make(BufferLoadNode::Make(x, {Int32(2)}),
                        CastNode::Make(kF32, BufferLoadNode::Make(y, {Int32(4)}))),
          {Int32(0)}),
  });
  Stmt s = AllocateNode::Make(yv, kI16, {Int32(5)}, nullptr, DeclBufferNode::Make(y, body));
  s = AllocateNode::Make(xv, kF32, {Int32(3)}, nullptr, DeclBufferNode::Make(x, s));
  return Wrap({out->data}, DeclBufferNode::Make(out, s));
}

transform::MemoryInfoLookup Sram(int64_t capacity) {
  return [capacity](const std::string& scope) -> std::optional<transform::MemoryInfo> {
    if (scope != "local.tsr_sram") return std::nullopt;
    transform::MemoryInfo info;
    info.max_simd_bits = 64;
    info.max_num_bits = capacity;
    return info;
  };
}

TEST(StorageRewriteSpecialMemory, BuffersAreLaidOutInOneAllocation) {
  Buffer out = BufferNode::Decl("O", kF32, {Int32(1)});
  IRModule mod = TwoSpecialBuffers(out);
  IRModule res = transform::StorageRewrite(Sram(4096))->fn(mod, {});
  // X: 96 bits, rounded to 128; Y from bit 128 (its element 8); 208 bits in all, rounded to
  // 256: eight float32.
  int allocations = 0;
  int64_t extent = 0;
  std::vector<int64_t> y_indices;
  PostOrderVisit(res->Lookup("main")->body, [&](const ObjectRef& n) {
    if (auto* a = AsPtr<AllocateNode>(n)) {
      ++allocations;
      extent = *AsConstInt(a->extents[0]);
    }
    if (auto* st = AsPtr<BufferStoreNode>(n); st && st->buffer->dtype == kI16) {
      y_indices.push_back(*AsConstInt(st->indices[0]));
    }
  });
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(extent, 8);
  ASSERT_EQ(y_indices.size(), 1u);
  EXPECT_EQ(y_indices[0], 12);  // 4 + 8
}

TEST(StorageRewriteSpecialMemory, OverCapacityIsAnError) {
  Buffer out = BufferNode::Decl("O", kF32, {Int32(1)});
  EXPECT_THROW(transform::StorageRewrite(Sram(128))->fn(TwoSpecialBuffers(out), {}), Error);
}

}  // namespace
}  // namespace tessera
