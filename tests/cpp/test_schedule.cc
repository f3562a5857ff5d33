// The schedule layer: sref tree maintenance, primitives through Schedule, rollback on error,
// error rendering and the trace.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/schedule/schedule.h"
#include "tessera/schedule/tensor_intrin.h"
#include "tessera/support/error.h"

namespace tessera {
namespace schedule {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

Expr C(int64_t v) { return Int32(v); }

// for i, j in grid(16, 16): with T.block("B"): B[vi, vj] = A[vi, vj] * 2, under a root block.
IRModule Elementwise() {
  Buffer a = BufferNode::Decl("A", kF32, {C(16), C(16)});
  Buffer b = BufferNode::Decl("B", kF32, {C(16), C(16)});
  Var i = VarNode::Make("i", kI32), j = VarNode::Make("j", kI32);
  Var vi = VarNode::Make("vi", kI32), vj = VarNode::Make("vj", kI32);
  auto point = [](Buffer buf, Var x, Var y) {
    return BufferRegionNode::Make(buf, {RangeNode::Make(x, C(1)), RangeNode::Make(y, C(1))});
  };
  Stmt store = BufferStoreNode::Make(
      b, MulNode::Make(BufferLoadNode::Make(a, {vi, vj}), FloatImmNode::Make(kF32, 2)), {vi, vj});
  Block block =
      BlockNode::Make({IterVarNode::Make(RangeNode::Make(C(0), C(16)), vi, IterVarType::kDataPar),
                       IterVarNode::Make(RangeNode::Make(C(0), C(16)), vj, IterVarType::kDataPar)},
                      {point(a, vi, vj)}, {point(b, vi, vj)}, "B", store);
  Stmt body = ForNode::Make(i, C(0), C(16), ForKind::kSerial,
                            ForNode::Make(j, C(0), C(16), ForKind::kSerial,
                                          BlockRealizeNode::Make({i, j}, Bool(true), block)));
  Block root = BlockNode::Make({}, {}, {}, "root", body);
  Var pa = VarNode::Make("a", DataType::Handle()), pb = VarNode::Make("b", DataType::Handle());
  PrimFunc func = PrimFuncNode::Make({pa, pb}, {{pa, a}, {pb, b}},
                                     BlockRealizeNode::Make({}, Bool(true), root));
  return IRModuleNode::FromFunc(func, "main");
}

TEST(ScheduleState, SRefTreeFollowsTheIR) {
  ScheduleState state(Elementwise(), 0, true);
  state.VerifySRefTree();
  StmtSRef root = state.RootSRef("main");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->block()->name_hint, "root");
  EXPECT_EQ(root->parent, nullptr);
}

TEST(Schedule, SplitKeepsHandlesAndRecordsTheTrace) {
  Schedule sch(Elementwise(), /*debug_mask=*/-1);
  BlockRV b = sch.GetBlock("B", std::nullopt);
  std::vector<LoopRV> loops = sch.GetLoops(b);
  ASSERT_EQ(loops.size(), 2u);
  std::vector<LoopRV> split =
      sch.Split(loops[1], {TraceValue::None(), TraceValue::Int(4)}, true, false);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(sch.GetLoops(b).size(), 3u);
  EXPECT_TRUE(sch.IsValid(b));
  EXPECT_TRUE(sch.IsValid(loops[0]));   // the untouched loop keeps its handle
  EXPECT_FALSE(sch.IsValid(loops[1]));  // the split loop is gone
  auto* inner = AsPtr<ForNode>(sch.Get(split[1]));
  ASSERT_TRUE(inner);
  EXPECT_EQ(AsConstInt(inner->extent), 4);
  EXPECT_EQ(sch.trace().AsPython(),
            "b0 = sch.get_block(name=\"B\", func_name=\"main\")\n"
            "l1, l2 = sch.get_loops(block=b0)\n"
            "l3, l4 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, "
            "disable_predication=False)\n"
            "l5, l6, l7 = sch.get_loops(block=b0)\n");
}

TEST(Schedule, ReplayGivesTheSameModule) {
  IRModule mod = Elementwise();
  Schedule sch(mod);
  BlockRV b = sch.GetBlock("B", std::nullopt);
  std::vector<LoopRV> loops = sch.GetLoops(b);
  sch.Reorder({loops[1], loops[0]});
  sch.Parallel(sch.GetLoops(b)[0]);
  Schedule direct(mod), from_json(mod);
  sch.trace().ApplyToSchedule(&direct);
  Trace::ApplyJSONToSchedule(sch.trace().AsJSON(), &from_json);
  EXPECT_TRUE(StructuralEqual(direct.mod(), sch.mod()));
  EXPECT_TRUE(StructuralEqual(from_json.mod(), sch.mod()));
  EXPECT_FALSE(StructuralEqual(mod, sch.mod()));
}

TEST(Schedule, FailedPrimitiveRollsBackAndRenders) {
  Schedule sch(Elementwise());
  BlockRV b = sch.GetBlock("B", std::nullopt);
  std::vector<LoopRV> loops = sch.GetLoops(b);
  IRModule before = sch.mod();
  size_t trace_size = sch.trace().insts.size();
  try {
    sch.Split(loops[0], {TraceValue::Int(2), TraceValue::Int(2)}, true, false);
    FAIL() << "split should have failed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kSchedule);
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("ScheduleError: the schedule primitive 'split' failed.\n", 0), 0u) << msg;
    EXPECT_NE(msg.find("# tir.For#0\n"), std::string::npos) << msg;
    EXPECT_NE(msg.find("for i in range(16):\n"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Error message: the split factors may not cover the loop tir.For#0: "
                       "their product (4) is not provably at least its extent (16)"),
              std::string::npos)
        << msg;
  }
  EXPECT_EQ(sch.mod(), before);
  EXPECT_EQ(sch.trace().insts.size(), trace_size);
  EXPECT_TRUE(sch.IsValid(loops[0]));
  sch.state().VerifySRefTree();
}

TEST(Schedule, CopyIsIndependent) {
  Schedule sch(Elementwise());
  BlockRV b = sch.GetBlock("B", std::nullopt);
  Schedule other = sch.Copy();
  other.Fuse(other.GetLoops(b), true);
  EXPECT_EQ(other.GetLoops(b).size(), 1u);
  EXPECT_EQ(sch.GetLoops(b).size(), 2u);
  other.state().VerifySRefTree();
  sch.state().VerifySRefTree();
}

TEST(Schedule, LoopPartitionMakesOneLoopPerPartAndReplays) {
  IRModule mod = Elementwise();
  Schedule sch(mod, /*debug_mask=*/-1);
  BlockRV b = sch.GetBlock("B", std::nullopt);
  std::vector<LoopRV> loops = sch.GetLoops(b);
  std::vector<LoopRV> parts = sch.LoopPartition(loops[0], {TraceValue::Int(4)}, true);
  ASSERT_EQ(parts.size(), 2u);  // [0, 4) and the rest [4, 16)
  auto* second = AsPtr<ForNode>(sch.Get(parts[1]));
  ASSERT_TRUE(second);
  EXPECT_EQ(AsConstInt(second->min), 4);
  EXPECT_EQ(AsConstInt(second->extent), 12);
  BlockRV part = sch.GetBlock("B_i1", std::nullopt);
  EXPECT_EQ(sch.GetLoops(part).size(), 2u);
  Schedule replayed(mod), from_json(mod);
  sch.trace().ApplyToSchedule(&replayed);
  Trace::ApplyJSONToSchedule(sch.trace().AsJSON(), &from_json);
  EXPECT_TRUE(StructuralEqual(replayed.mod(), sch.mod()));
  EXPECT_TRUE(StructuralEqual(from_json.mod(), sch.mod()));
  // A part at least as large as the loop is an error, and the schedule stays as it was.
  IRModule before = sch.mod();
  EXPECT_THROW(sch.LoopPartition(sch.GetLoops(part)[1], {TraceValue::Int(16)}, true), Error);
  EXPECT_TRUE(before == sch.mod());
}

TEST(TensorIntrin, RegistryChecksNamesAndParameters) {
  IRModule mod = Elementwise();
  PrimFunc func = mod->functions[0].second;
  EXPECT_EQ(GetTensorIntrin("tessera_cpp_missing", /*allow_missing=*/true), nullptr);
  EXPECT_THROW(GetTensorIntrin("tessera_cpp_missing"), Error);
  RegisterTensorIntrin("tessera_cpp_copy", TensorIntrinNode::Make(func, func), false);
  EXPECT_EQ(GetTensorIntrin("tessera_cpp_copy")->desc, func);
  EXPECT_THROW(RegisterTensorIntrin("tessera_cpp_copy", TensorIntrinNode::Make(func, func), false),
               Error);
  RegisterTensorIntrin("tessera_cpp_copy", TensorIntrinNode::Make(func, func), true);
  // Different parameter counts.
  PrimFunc one = PrimFuncNode::Make({func->params[0]}, {func->buffer_map[0]}, func->body);
  EXPECT_THROW(TensorIntrinNode::Make(func, one), Error);
}

}  // namespace
}  // namespace schedule
}  // namespace tessera
