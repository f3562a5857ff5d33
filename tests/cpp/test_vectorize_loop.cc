// tir.VectorizeLoop and tir.SplitVectorizedLoops from C++: a vectorized loop becomes one vector
// of its extent, a statement with a lane-dependent condition keeps a loop over the lanes, the
// split step chunks a long loop at the configured width, and disabled vectorization is serial.
#include <gtest/gtest.h>

#include <memory>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/stmt.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

// for i in T.vectorized(32): A[i] = 1.0; (with `guarded`) if i < n: A[i] = 2.0
struct Program {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(32)});
  Var n = VarNode::Make("n", kI32);
  Var i = VarNode::Make("i", kI32);
  IRModule Module(bool guarded) const {
    Stmt body = BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 1.0), {i});
    if (guarded) {
      Stmt store = BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 2.0), {i});
      body = SeqStmtNode::Make({body, IfThenElseNode::Make(LTNode::Make(i, n), store)});
    }
    Stmt loop = ForNode::Make(i, Int32(0), Int32(32), ForKind::kVectorized, body);
    AttrMap attrs;
    attrs["global_symbol"] = StringImmNode::Make("main");
    return IRModuleNode::FromFunc(
        PrimFuncNode::Make({a->data, n}, {}, DeclBufferNode::Make(a, loop), DataType::Void(),
                           attrs),
        "main");
  }
};

Stmt BodyAfterDecl(const IRModule& mod) {
  Stmt body = mod->Lookup("main")->body;
  auto* decl = AsPtr<DeclBufferNode>(body);
  return decl ? decl->body : body;
}

// The store's Ramp index lanes, 0 when `s` is not a vector store.
int StoreLanes(const Stmt& s) {
  auto* store = AsPtr<BufferStoreNode>(s);
  if (!store) return 0;
  auto* ramp = AsPtr<RampNode>(store->indices[0]);
  return ramp ? ramp->lanes : 0;
}

TEST(VectorizeLoop, LoopBecomesOneVectorOfItsExtent) {
  Program p;
  Stmt body = BodyAfterDecl(transform::VectorizeLoop()->fn(p.Module(false), {}));
  EXPECT_EQ(StoreLanes(body), 32);
  auto* store = AsPtr<BufferStoreNode>(body);
  ASSERT_NE(store, nullptr);
  auto* value = AsPtr<BroadcastNode>(store->value);
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->lanes, 32);
}

TEST(VectorizeLoop, LaneDependentConditionKeepsALoopOverTheLanes) {
  Program p;
  Stmt body = BodyAfterDecl(transform::VectorizeLoop()->fn(p.Module(true), {}));
  auto* seq = AsPtr<SeqStmtNode>(body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  EXPECT_EQ(StoreLanes(seq->seq[0]), 32);
  auto* lanes = AsPtr<ForNode>(seq->seq[1]);
  ASSERT_NE(lanes, nullptr);
  EXPECT_EQ(lanes->for_kind, ForKind::kSerial);
  EXPECT_EQ(lanes->loop_var->name, "i_s");
  EXPECT_NE(AsPtr<IfThenElseNode>(lanes->body), nullptr);
}

TEST(VectorizeLoop, SplitStepChunksAtTheConfiguredWidth) {
  Program p;
  transform::PassContext ctx;
  auto record = std::make_shared<transform::ConfigDict>();
  (*record)["max_vector_bits"] = transform::ConfigValue{int64_t{256}};
  ctx.config["tir.VectorizeLoop"] = transform::ConfigValue{record};
  IRModule split = transform::SplitVectorizedLoops()->fn(p.Module(false), ctx);
  Stmt split_body = BodyAfterDecl(split);
  auto* outer = AsPtr<ForNode>(split_body);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->for_kind, ForKind::kSerial);
  EXPECT_EQ(outer->loop_var->name, "i_outer");
  auto* inner = AsPtr<ForNode>(outer->body);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->for_kind, ForKind::kVectorized);
  EXPECT_EQ(AsConstInt(inner->extent), 8);  // 256 bits of float32

  Stmt vector_body = BodyAfterDecl(transform::VectorizeLoop()->fn(split, {}));
  auto* chunk = AsPtr<ForNode>(vector_body);
  ASSERT_NE(chunk, nullptr);
  EXPECT_EQ(StoreLanes(chunk->body), 8);

  // A loop the host cannot run as vector code (a lane-dependent branch) becomes serial there.
  Stmt serial_body = BodyAfterDecl(transform::SplitVectorizedLoops()->fn(p.Module(true), ctx));
  auto* serial = AsPtr<ForNode>(serial_body);
  ASSERT_NE(serial, nullptr);
  EXPECT_EQ(serial->for_kind, ForKind::kSerial);
  EXPECT_EQ(AsConstInt(serial->extent), 32);
}

TEST(VectorizeLoop, DisabledVectorizationLeavesSerialLoops) {
  Program p;
  Stmt off = BodyAfterDecl(transform::VectorizeLoop(false)->fn(p.Module(false), {}));
  auto* loop = AsPtr<ForNode>(off);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->for_kind, ForKind::kSerial);

  transform::PassContext ctx;
  ctx.config["tir.disable_vectorize"] = transform::ConfigValue{true};
  Stmt disabled = BodyAfterDecl(transform::VectorizeLoop()->fn(p.Module(false), ctx));
  loop = AsPtr<ForNode>(disabled);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->for_kind, ForKind::kSerial);
}

// for i in T.vectorized(8): if i < n: B[i + 32] = A[i + 32] (the tail of a loop split by 8),
// with `call` a call in the body too.
IRModule TailModule(bool call) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(40)});
  Buffer b = BufferNode::Decl("B", kF32, {Int32(40)});
  Var n = VarNode::Make("n", kI32);
  Var i = VarNode::Make("i", kI32);
  Expr at = AddNode::Make(i, Int32(32));
  Stmt body = BufferStoreNode::Make(b, BufferLoadNode::Make(a, {at}), {at});
  if (call) {
    body = SeqStmtNode::Make(
        {body, EvaluateNode::Make(CallNode::Make(DataType::Void(), OpNode::Get("tir.call_extern"),
                                                 {StringImmNode::Make("note")}))});
  }
  Stmt loop = ForNode::Make(i, Int32(0), Int32(8), ForKind::kVectorized,
                            IfThenElseNode::Make(LTNode::Make(i, n), body));
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("main");
  Stmt decls = DeclBufferNode::Make(a, DeclBufferNode::Make(b, loop));
  return IRModuleNode::FromFunc(
      PrimFuncNode::Make({a->data, b->data, n}, {}, decls, DataType::Void(), attrs), "main");
}

Stmt BodyAfterDecls(const IRModule& mod) {
  Stmt body = mod->Lookup("main")->body;
  while (auto* decl = AsPtr<DeclBufferNode>(body)) body = decl->body;
  return body;
}

TEST(VectorizeLoop, MaskedTailsLoadAndStoreTheLanesWhereTheConditionHolds) {
  // TVM's rule predicates only accesses from the condition's own base (i, not i + 32): the loop
  // over the lanes stays.
  Stmt plain = BodyAfterDecls(transform::VectorizeLoop()->fn(TailModule(false), {}));
  ASSERT_NE(AsPtr<ForNode>(plain), nullptr);

  // The DSL's: one store of 8 lanes from 32, the load and the store masked by the lanes below n.
  Stmt masked = BodyAfterDecls(transform::VectorizeLoop(true, true)->fn(TailModule(false), {}));
  auto* store = AsPtr<BufferStoreNode>(masked);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(StoreLanes(masked), 8);
  auto* mask = AsPtr<CallNode>(store->predicate);
  ASSERT_NE(mask, nullptr);
  EXPECT_TRUE(mask->is_op("tir.get_active_lane_mask"));
  EXPECT_EQ(AsConstInt(mask->args[0]), 0);
  auto* limit = AsPtr<VarNode>(mask->args[1]);
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(limit->name, "n");
  auto* load = AsPtr<BufferLoadNode>(store->value);
  ASSERT_NE(load, nullptr);
  EXPECT_NE(load->predicate, nullptr);

  // A call under the condition would run on every lane: the loop over the lanes stays.
  Stmt with_call = BodyAfterDecls(transform::VectorizeLoop(true, true)->fn(TailModule(true), {}));
  auto* lanes = AsPtr<ForNode>(with_call);
  ASSERT_NE(lanes, nullptr);
  EXPECT_EQ(lanes->for_kind, ForKind::kSerial);
}

}  // namespace
}  // namespace tessera
