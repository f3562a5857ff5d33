// TensorIR blocks: construction checks, visitors and mutators, structural equality, printing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/ir/block_access.h"
#include "tessera/ir/buffer.h"
#include "tessera/ir/function.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_builder.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

Expr C(int64_t v) { return Int32(v); }
Range R(int64_t extent) { return RangeNode::Make(C(0), C(extent)); }
BufferRegion Point(Buffer b, std::vector<Expr> idx) {
  std::vector<Range> region;
  for (const Expr& e : idx) region.push_back(RangeNode::Make(e, C(1)));
  return BufferRegionNode::Make(b, region);
}
Expr Load(Buffer b, std::vector<Expr> idx) { return BufferLoadNode::Make(b, std::move(idx)); }
Stmt Store(Buffer b, Expr v, std::vector<Expr> idx) {
  return BufferStoreNode::Make(b, v, std::move(idx));
}
Stmt Loop(Var v, int64_t extent, Stmt body) {
  return ForNode::Make(v, C(0), C(extent), ForKind::kSerial, body);
}

// for i, j, k: with T.block("C"): C[vi, vj] += A[vi, vk] * B[vk, vj], with an init.
struct Matmul {
  Buffer a = BufferNode::Decl("A", kF32, {C(16), C(16)});
  Buffer b = BufferNode::Decl("B", kF32, {C(16), C(16)});
  Buffer c = BufferNode::Decl("C", kF32, {C(16), C(16)});
  PrimFunc func;

  Matmul() {
    Var i = VarNode::Make("i", kI32), j = VarNode::Make("j", kI32), k = VarNode::Make("k", kI32);
    Var vi = VarNode::Make("vi", kI32), vj = VarNode::Make("vj", kI32);
    Var vk = VarNode::Make("vk", kI32);
    std::vector<IterVar> iters = {IterVarNode::Make(R(16), vi, IterVarType::kDataPar),
                                  IterVarNode::Make(R(16), vj, IterVarType::kDataPar),
                                  IterVarNode::Make(R(16), vk, IterVarType::kCommReduce)};
    Stmt update = Store(
        c, AddNode::Make(Load(c, {vi, vj}), MulNode::Make(Load(a, {vi, vk}), Load(b, {vk, vj}))),
        {vi, vj});
    Stmt init = Store(c, FloatImmNode::Make(kF32, 0), {vi, vj});
    Block block =
        BlockNode::Make(iters, {Point(c, {vi, vj}), Point(a, {vi, vk}), Point(b, {vk, vj})},
                        {Point(c, {vi, vj})}, "C", update, init);
    Stmt realize = BlockRealizeNode::Make({i, j, k}, Bool(true), block);
    Stmt loops = Loop(i, 16, Loop(j, 16, Loop(k, 16, realize)));
    Block root = BlockNode::Make({}, {}, {}, "root", loops);
    Stmt body = BlockRealizeNode::Make({}, Bool(true), root);
    std::vector<Var> params;
    std::vector<std::pair<Var, Buffer>> bmap;
    for (const Buffer& buf : {a, b, c}) {
      params.push_back(VarNode::Make(buf->name, DataType::Handle()));
      bmap.emplace_back(params.back(), buf);
    }
    func = PrimFuncNode::Make(params, bmap, body, DataType::Void(),
                              {{"global_symbol", StringImmNode::Make("main")}});
  }
};

TEST(Block, ConstructionChecks) {
  Buffer a = BufferNode::Decl("A", kF32, {C(4), C(4)});
  Var v = VarNode::Make("v", kI32);
  EXPECT_THROW(BufferRegionNode::Make(a, {R(4)}), Error);  // one range for two dimensions
  EXPECT_EQ(BufferRegionNode::FullRegion(a)->region.size(), 2u);
  Buffer view = BufferNode::Decl("V", DataType::Int(32), {C(4)});
  EXPECT_THROW(MatchBufferRegionNode::Make(view, BufferRegionNode::FullRegion(a)), Error);
  Block block = BlockNode::Make({IterVarNode::Make(R(4), v, IterVarType::kDataPar)}, {}, {}, "b",
                                EvaluateNode::Make(C(0)));
  EXPECT_THROW(BlockRealizeNode::Make({}, Bool(true), block), Error);  // missing binding
  EXPECT_THROW(BlockRealizeNode::Make({IntImmNode::Make(DataType::Int(64), 0)}, Bool(true), block),
               Error);                                               // binding of the wrong type
  EXPECT_THROW(BlockRealizeNode::Make({C(0)}, C(1), block), Error);  // predicate not bool
  EXPECT_THROW(BlockNode::Make({IterVarNode::Make(nullptr, v, IterVarType::kDataPar)}, {}, {}, "b",
                               EvaluateNode::Make(C(0))),
               Error);  // iterator without a domain
  EXPECT_THROW(BlockNode::Make({IterVarNode::Make(R(4), v, IterVarType::kThreadIndex)}, {}, {}, "b",
                               EvaluateNode::Make(C(0))),
               Error);
  auto realize = BlockRealizeNode::Make({C(1)}, nullptr, block);
  EXPECT_TRUE(IsConstInt(realize->predicate, 1));
}

TEST(Block, VisitorReachesRegionsInitAndBody) {
  Matmul m;
  int loads = 0, stores = 0;
  PostOrderVisit(m.func->body, [&](const ObjectRef& n) {
    loads += n->kind == NodeKind::kBufferLoad;
    stores += n->kind == NodeKind::kBufferStore;
  });
  EXPECT_EQ(loads, 3);
  EXPECT_EQ(stores, 2);  // init and update
}

class RenameBuffer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Expr VisitExpr_(const IntImmNode* op) override {
    if (op->value == 16) return Int32(32);
    return GetRef(op);
  }
};

TEST(Block, IdentityMutatorKeepsTheSameObjectAndChangesRebuild) {
  Matmul m;
  StmtExprMutator identity;
  EXPECT_EQ(identity.VisitStmt(m.func->body), m.func->body);
  Stmt changed = RenameBuffer().VisitStmt(m.func->body);
  EXPECT_NE(changed, m.func->body);
  // The iterator domains (16 -> 32) were rebuilt; the block keeps its name.
  auto* root = AsPtr<BlockRealizeNode>(changed);
  ASSERT_NE(root, nullptr);
  auto* loop = AsPtr<ForNode>(root->block->body);
  ASSERT_NE(loop, nullptr);
  EXPECT_TRUE(IsConstInt(loop->extent, 32));
}

TEST(Block, StructuralEqualityBindsIteratorsAndIgnoresNames) {
  Matmul a, b;
  EXPECT_TRUE(StructuralEqual(a.func, b.func)) << StructuralEqualFailure(a.func, b.func);
  EXPECT_EQ(StructuralHash(a.func), StructuralHash(b.func));

  // Same block under another name: still equal.
  Var v = VarNode::Make("v", kI32), w = VarNode::Make("w", kI32);
  Buffer buf = BufferNode::Decl("X", kF32, {C(4)});
  auto make = [&](Var it, const std::string& name, IterVarType type) {
    Block block = BlockNode::Make({IterVarNode::Make(R(4), it, type)}, {}, {Point(buf, {it})}, name,
                                  Store(buf, FloatImmNode::Make(kF32, 1), {it}));
    return BlockRealizeNode::Make({C(2)}, Bool(true), block);
  };
  Stmt x = make(v, "x", IterVarType::kDataPar), y = make(w, "y", IterVarType::kDataPar);
  EXPECT_TRUE(StructuralEqual(x, y)) << StructuralEqualFailure(x, y);
  EXPECT_EQ(StructuralHash(x), StructuralHash(y));
  Stmt z = make(w, "x", IterVarType::kCommReduce);
  EXPECT_FALSE(StructuralEqual(x, z));
  EXPECT_NE(StructuralEqualFailure(x, z).find("iter_type"), std::string::npos);
}

TEST(Block, AllocatedBuffersAreDefinitions) {
  auto make = [](const std::string& name) {
    Buffer local = BufferNode::Decl(name, kF32, {C(4)}, "local");
    Var v = VarNode::Make("v", kI32);
    Stmt body = Loop(v, 4, Store(local, FloatImmNode::Make(kF32, 0), {v}));
    Block block = BlockNode::Make({}, {}, {}, "root", body, nullptr, {local});
    return BlockRealizeNode::Make({}, Bool(true), block);
  };
  Stmt a = make("L"), b = make("M");
  EXPECT_TRUE(StructuralEqual(a, b)) << StructuralEqualFailure(a, b);
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

TEST(Block, PrinterUsesRemapInitAndImplicitRoot) {
  Matmul m;
  std::string text = AsScript(m.func);
  EXPECT_EQ(text,
            "# from tessera.script import tir as T\n"
            "\n"
            "@T.prim_func\n"
            "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), "
            "C: T.Buffer((16, 16), \"float32\")):\n"
            "    # with T.block(\"root\"):\n"
            "    for i, j, k in T.grid(16, 16, 16):\n"
            "        with T.block(\"C\"):\n"
            "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
            "            T.reads(C[vi, vj], A[vi, vk], B[vk, vj])\n"
            "            T.writes(C[vi, vj])\n"
            "            with T.init():\n"
            "                C[vi, vj] = T.float32(0.0)\n"
            "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]");
}

TEST(Block, PrinterExplicitAxesWhereAttrsAllocAndMatch) {
  Buffer a = BufferNode::Decl("A", kF32, {C(64)});
  Var i = VarNode::Make("i", kI32), v = VarNode::Make("v", kI32);
  Buffer scratch = BufferNode::Decl("S", kF32, {C(16)}, "shared");
  Buffer view = BufferNode::Decl("V", kF32, {C(16)});
  BufferRegion source =
      BufferRegionNode::Make(a, {RangeNode::Make(MulNode::Make(v, C(16)), C(16))});
  Block block =
      BlockNode::Make({IterVarNode::Make(RangeNode::Make(C(1), C(4)), v, IterVarType::kDataPar)},
                      {source}, {}, "b", EvaluateNode::Make(C(0)), nullptr, {scratch},
                      {MatchBufferRegionNode::Make(view, source)}, {{"k", Int32(1)}});
  Stmt realize = BlockRealizeNode::Make({AddNode::Make(i, C(1))}, LTNode::Make(i, C(3)), block);
  std::string text = AsScript(Loop(i, 4, realize));
  EXPECT_EQ(text,
            "A = T.Buffer((64,))\n"
            "for i in range(4):\n"
            "    with T.block(\"b\"):\n"
            "        v = T.axis.spatial((1, 5), i + 1)\n"
            "        T.where(i < 3)\n"
            "        T.reads(A[v * 16:v * 16 + 16])\n"
            "        T.writes()\n"
            "        T.block_attr({\"k\": 1})\n"
            "        S = T.alloc_buffer((16,), scope=\"shared\")\n"
            "        V = T.match_buffer(A[v * 16:v * 16 + 16], (16,))\n"
            "        T.evaluate(0)");
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(BlockBuilder, InfersRegionsAndWrapsTheRootBlock) {
  Buffer a = BufferNode::Decl("A", kF32, {C(16), C(16)});
  Buffer b = BufferNode::Decl("B", kF32, {C(16)});
  Var pa = VarNode::Make("A", DataType::Handle()), pb = VarNode::Make("B", DataType::Handle());
  Var i = VarNode::Make("i", kI32), k = VarNode::Make("k", kI32), vi = VarNode::Make("vi", kI32);
  Buffer tmp = BufferNode::Decl("T", kF32, {C(16)});
  IRBuilder builder;
  builder.BeginFunction("rowsum");
  builder.AddParam(pa);
  builder.AddParam(pb);
  builder.BindParamBuffer(pa, a);
  builder.BindParamBuffer(pb, b);
  builder.AllocBuffer(tmp);
  builder.BeginFor(i, C(0), C(16), ForKind::kSerial);
  builder.BeginBlock("sum");
  builder.AddBlockIter(IterVarNode::Make(R(16), vi, IterVarType::kDataPar), i);
  builder.BeginInit();
  builder.Emit(Store(b, FloatImmNode::Make(kF32, 0), {vi}));
  builder.EndInit();
  builder.BeginFor(k, C(0), C(16), ForKind::kSerial);
  builder.Emit(Store(b, AddNode::Make(Load(b, {vi}), Load(a, {vi, k})), {vi}));
  builder.EndFor();
  Stmt realize = builder.EndBlock();
  builder.EndFor();
  PrimFunc func = builder.EndFunction();

  auto* root = AsPtr<BlockRealizeNode>(func->body);
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->block->name_hint, "root");
  ASSERT_EQ(root->block->alloc_buffers.size(), 1u);
  const BlockNode* block = AsPtr<BlockRealizeNode>(realize)->block.get();
  // A block with an init (a reduction) does not list B, which it writes, among its reads.
  ASSERT_EQ(block->reads.size(), 1u);
  EXPECT_EQ(block->reads[0]->buffer, a);
  EXPECT_TRUE(IsConstInt(block->reads[0]->region[1]->min, 0));
  EXPECT_TRUE(IsConstInt(block->reads[0]->region[1]->extent, 16));
  EXPECT_EQ(block->reads[0]->region[0]->min, vi);
  ASSERT_EQ(block->writes.size(), 1u);
  EXPECT_TRUE(IsConstInt(block->writes[0]->region[0]->extent, 1));
}

TEST(BlockBuilder, BlockStatementsOutsideABlockAreErrors) {
  IRBuilder builder;
  builder.BeginFunction("f");
  EXPECT_THROW(builder.SetBlockReads({}), Error);
  EXPECT_THROW(builder.BeginInit(), Error);
}

TEST(BlockBuilder, RootFrameCollectsTopLevelStatements) {
  IRBuilder builder;
  builder.BeginRoot();
  EXPECT_THROW(builder.BeginRoot(), InternalError);
  EXPECT_THROW(builder.BeginFunction("f"), InternalError);  // a function must be outermost
  EXPECT_THROW(builder.SetFunctionAttr("k", Int32(1)), Error);
  Var i = VarNode::Make("i", kI32);
  builder.BeginFor(i, C(0), C(4), ForKind::kSerial);
  builder.Emit(EvaluateNode::Make(i));
  builder.EndFor();
  builder.Emit(EvaluateNode::Make(C(1)));
  Stmt root = builder.EndRoot();
  auto* seq = AsPtr<SeqStmtNode>(root);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  EXPECT_NE(AsPtr<ForNode>(seq->seq[0]), nullptr);
  EXPECT_EQ(builder.depth(), 0u);

  IRBuilder empty;
  empty.BeginRoot();
  EXPECT_FALSE(empty.EndRoot());

  IRBuilder alloc;
  alloc.BeginRoot();
  EXPECT_THROW(alloc.AllocBuffer(BufferNode::Decl("A", kF32, {C(4)})), Error);
}

TEST(BlockAccess, TiledAccessGivesAConstantExtent) {
  Buffer a = BufferNode::Decl("A", kF32, {C(64)});
  Var v = VarNode::Make("v", kI32), k = VarNode::Make("k", kI32);
  Expr index = AddNode::Make(MulNode::Make(v, C(16)), k);
  Stmt body = Loop(k, 16, EvaluateNode::Make(Load(a, {index})));
  Block block =
      BlockNode::Make({IterVarNode::Make(R(4), v, IterVarType::kDataPar)}, {}, {}, "b", body);
  auto [reads, writes] = InferBlockAccessRegions(block.get());
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_TRUE(writes.empty());
  EXPECT_TRUE(IsConstInt(reads[0]->region[0]->extent, 16));
  EXPECT_TRUE(StructuralEqual(reads[0]->region[0]->min, MulNode::Make(v, C(16))));
}

TEST(BlockAccess, ModuloOfARangeWithinOnePeriodIsThatRange) {
  // (k + 1) % 8 for k in [0, 3) is 1..3; (k + 6) % 8 wraps around: the whole 0..7.
  Buffer a = BufferNode::Decl("A", kF32, {C(8)});
  Var k = VarNode::Make("k", kI32);
  auto region_of = [&](int64_t offset) {
    Expr index = FloorModNode::Make(AddNode::Make(k, C(offset)), C(8));
    Stmt body = Loop(k, 3, EvaluateNode::Make(Load(a, {index})));
    Block block = BlockNode::Make({}, {}, {}, "b", body);
    auto access = GetBlockAccessRegion(block.get(), {{a->data.get(), a}}, true);
    EXPECT_EQ(access.reads.size(), 1u);
    return access.reads.at(0)->region.at(0);
  };
  Range inside = region_of(1);
  EXPECT_TRUE(IsConstInt(inside->min, 1) && IsConstInt(inside->extent, 3));
  Range wrapped = region_of(6);
  EXPECT_TRUE(IsConstInt(wrapped->min, 0) && IsConstInt(wrapped->extent, 8));
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(StructuralEqualSeq, NestedAndSingletonSequencesCompareFlattened) {
  Buffer a = BufferNode::Decl("A", kI32, {C(4)});
  Stmt s1 = Store(a, C(1), {C(0)}), s2 = Store(a, C(2), {C(1)}), s3 = Store(a, C(3), {C(2)});
  Stmt nested = SeqStmtNode::Make({SeqStmtNode::Make({s1, s2}), s3});
  Stmt flat = SeqStmtNode::Make({s1, s2, s3});
  EXPECT_TRUE(StructuralEqual(nested, flat)) << StructuralEqualFailure(nested, flat);
  EXPECT_EQ(StructuralHash(nested), StructuralHash(flat));
  Stmt one = SeqStmtNode::Make({s1});
  EXPECT_TRUE(StructuralEqual(one, s1));
  EXPECT_EQ(StructuralHash(one), StructuralHash(s1));
  EXPECT_FALSE(StructuralEqual(nested, SeqStmtNode::Make({s1, s3, s2})));
  EXPECT_FALSE(StructuralEqual(SeqStmtNode::Make({s1, s2}), s1));
}

TEST(PrinterRoundTrip, BufferOverAPointerOfAnotherType) {
  Var p = VarNode::MakePointer("p", DataType::Int(8), "global");
  Buffer b = BufferNode::Make(p, kF32, {C(4)}, {}, nullptr, "B");
  EXPECT_EQ(AsScript(Store(b, FloatImmNode::Make(kF32, 1), {C(0)})),
            "p = T.handle(\"int8\", \"global\")\n"
            "B = T.Buffer((4,), data=p)\n"
            "B[0] = T.float32(1.0)");
}

TEST(PrinterRoundTrip, ParameterBuffersSharingOneDataPointer) {
  Buffer a = BufferNode::Decl("A", kI32, {C(4)});
  Buffer b = BufferNode::Make(a->data, kI32, {C(4)}, {}, nullptr, "B");
  Var pa = VarNode::Make("A", DataType::Handle()), pb = VarNode::Make("B", DataType::Handle());
  PrimFunc f = PrimFuncNode::Make({pa, pb}, {{pa, a}, {pb, b}}, Store(b, Load(a, {C(0)}), {C(1)}),
                                  DataType::Void(), {{"global_symbol", StringImmNode::Make("f")}});
  std::string text = AsScript(f);
  // As TVM: buffers sharing a data pointer are all matched, none is an annotation.
  EXPECT_NE(text.find("def f(A: T.handle, B: T.handle):\n    A_1 = T.match_buffer(A, (4,), \"int32\")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("B_1 = T.match_buffer(B, (4,), \"int32\", data=A_1.data)"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(PrinterRoot, AllocationsPrintAtFunctionLevelAndOtherRootsExplicitly) {
  Buffer a = BufferNode::Decl("A", kF32, {C(4)});
  Buffer y = BufferNode::Decl("Y", kF32, {C(4)});
  Var pa = VarNode::Make("A", DataType::Handle());
  Var i = VarNode::Make("i", kI32);
  Stmt body = Loop(i, 4, Store(a, Load(y, {i}), {i}));
  auto func = [&](Block root) {
    return PrimFuncNode::Make({pa}, {{pa, a}}, BlockRealizeNode::Make({}, Bool(true), root),
                              DataType::Void(), {{"global_symbol", StringImmNode::Make("f")}});
  };
  std::string implicit = AsScript(func(BlockNode::Make({}, {}, {}, "root", body, nullptr, {y})));
  EXPECT_NE(
      implicit.find("    # with T.block(\"root\"):\n    Y = T.alloc_buffer((4,))\n"
                    "    for i in range(4):"),
      std::string::npos)
      << implicit;
  // Without allocations or inner blocks the parser would not recreate it: printed explicitly.
  std::string explicit_root = AsScript(func(BlockNode::Make({}, {}, {}, "root", body)));
  EXPECT_NE(
      explicit_root.find("    with T.block(\"root\"):\n        T.reads()\n        T.writes()\n"),
      std::string::npos)
      << explicit_root;
}

}  // namespace
}  // namespace tessera
