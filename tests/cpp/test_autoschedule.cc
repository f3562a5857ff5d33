// autoschedule: target facts, the "carries no schedule" rule and the rules on a te matmul + relu.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/autoschedule/auto_schedule.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/te/create_prim_func.h"
#include "tessera/te/reduce.h"
#include "tessera/te/tensor.h"

namespace tessera {
namespace {

const DataType kF32 = DataType::Float(32);

Expr C(int64_t v) { return Int32(v); }

template <class F>
std::function<te::ComputeBody(const std::vector<Var>&)> Body(F f) {
  return [f](const std::vector<Var>& v) -> te::ComputeBody { return f(v); };
}

template <class F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

// Y = A @ B (n x n), Z = max(Y, 0).
PrimFunc MatmulRelu(int64_t n) {
  te::Tensor a = te::Placeholder({C(n), C(n)}, kF32, "A");
  te::Tensor b = te::Placeholder({C(n), C(n)}, kF32, "B");
  IterVar k = te::ReduceAxis(RangeNode::Make(C(0), C(n)), "k");
  te::Tensor y =
      te::Compute({C(n), C(n)}, Body([&](const std::vector<Var>& v) {
                    return te::Sum(MulNode::Make((*a)({v[0], k->var}), (*b)({k->var, v[1]})), {k});
                  }),
                  "Y");
  te::Tensor z =
      te::Compute({C(n), C(n)}, Body([&](const std::vector<Var>& v) -> Expr {
                    return MaxNode::Make((*y)({v[0], v[1]}), FloatImmNode::Make(kF32, 0));
                  }),
                  "Z");
  return te::CreatePrimFunc({a, b, z});
}

std::vector<std::string> Kinds(const schedule::Trace& trace) {
  std::vector<std::string> out;
  for (const schedule::Instruction& inst : trace.insts) out.push_back(inst.kind);
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(TargetFacts, HostFactsAreDetectedOnce) {
  const autoschedule::TargetFacts& f = autoschedule::HostFacts();
  EXPECT_EQ(&f, &autoschedule::HostFacts());
  EXPECT_EQ(f.kind, "c");
  EXPECT_TRUE(f.vector_bits == 128 || f.vector_bits == 256 || f.vector_bits == 512);
  EXPECT_GE(f.cores, 1);
  EXPECT_GT(f.l1_bytes, 0);
  EXPECT_GE(f.l1_ways, 1);
  EXPECT_GE(f.l2_bytes, f.l1_bytes);
  EXPECT_EQ(f.VectorLanes(32), f.vector_bits / 32);
}

TEST(TargetFacts, OverridesAreChecked) {
  autoschedule::TargetFacts f = autoschedule::FactsForTarget("llvm");
  f.Override("vector_bits", 512);
  EXPECT_EQ(f.VectorLanes(16), 32);
  EXPECT_NE(ErrorOf([&] { f.Override("lanes", 4); }).find("unknown target fact 'lanes'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { f.Override("cores", -1); }).find("must be positive"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { f.Override("vector_bits", 100); }).find("multiple of 32"),
            std::string::npos);
  EXPECT_EQ(autoschedule::FactsForTarget("cuda -arch=sm_80").warp_size, 32);
  EXPECT_NE(ErrorOf([] { autoschedule::FactsForTarget("X2_1204"); }).find("not 'X2_1204'"),
            std::string::npos);
}

TEST(AutoSchedule, TilesTheMatmulAndComputesTheEpilogueAtTheTile) {
  PrimFunc func = MatmulRelu(128);
  std::string why;
  EXPECT_TRUE(autoschedule::CarriesNoSchedule(func, &why)) << why;
  autoschedule::TargetFacts facts = autoschedule::HostFacts();
  facts.Override("vector_bits", 256);
  facts.Override("vector_registers", 16);
  facts.Override("cores", 4);
  schedule::Schedule sch = autoschedule::AutoSchedule(IRModuleNode::FromFunc(func), facts);
  std::vector<std::string> kinds = Kinds(sch.trace());
  for (const char* k : {"cache_write", "split", "reorder", "compute_inline", "reverse_compute_at",
                        "vectorize", "unroll", "parallel", "decompose_reduction"}) {
    EXPECT_TRUE(Has(kinds, k)) << k;
  }
  // The analysis' lookups that fed no primitive are not in the trace.
  EXPECT_FALSE(Has(kinds, "get_producers"));
  EXPECT_FALSE(autoschedule::CarriesNoSchedule(sch.mod()->Lookup("main"), &why));
  // A second run leaves the scheduled function alone.
  EXPECT_TRUE(autoschedule::AutoSchedule(sch.mod(), facts).trace().insts.empty());
}

TEST(AutoScheduleSpace, PreferredPointIsTheAutomaticScheduleAndDecisionsReplay) {
  IRModule mod = IRModuleNode::FromFunc(MatmulRelu(128));
  autoschedule::TargetFacts facts = autoschedule::HostFacts();
  facts.Override("vector_bits", 256);
  facts.Override("vector_registers", 16);
  facts.Override("cores", 4);
  schedule::Schedule automatic = autoschedule::AutoSchedule(mod, facts);
  autoschedule::SpacePoint preferred = autoschedule::AutoScheduleSpace(mod, facts, {}, 1, false);
  EXPECT_TRUE(StructuralEqual(preferred.sch.mod(), automatic.mod()));
  ASSERT_FALSE(preferred.decisions.empty());
  ASSERT_EQ(preferred.decisions.size(), preferred.sizes.size());
  size_t samples = 0;
  for (const auto& kind : Kinds(preferred.sch.trace())) samples += kind == "sample_categorical";
  EXPECT_EQ(samples, preferred.decisions.size());
  EXPECT_FALSE(Has(Kinds(automatic.trace()), "sample_categorical"));
  // A drawn point: its decisions give it again, whatever the seed.
  for (int64_t seed : {3, 11, 97}) {
    autoschedule::SpacePoint drawn = autoschedule::AutoScheduleSpace(mod, facts, {}, seed);
    autoschedule::SpacePoint again =
        autoschedule::AutoScheduleSpace(mod, facts, drawn.decisions, seed + 1);
    EXPECT_EQ(drawn.decisions, again.decisions);
    EXPECT_TRUE(StructuralEqual(drawn.sch.mod(), again.sch.mod()));
    for (size_t k = 0; k < drawn.decisions.size(); ++k) {
      EXPECT_GE(drawn.decisions[k], 0);
      EXPECT_LT(drawn.decisions[k], drawn.sizes[k]);
    }
  }
}

// topi.stack of two (rows x cols) tensors: T[s, i, j] = select(s == 0, A[i, j], B[i, j]).
PrimFunc Stack(int64_t rows, int64_t cols) {
  te::Tensor a = te::Placeholder({C(rows), C(cols)}, kF32, "A");
  te::Tensor b = te::Placeholder({C(rows), C(cols)}, kF32, "B");
  te::Tensor t = te::Compute({C(2), C(rows), C(cols)}, Body([&](const std::vector<Var>& v) -> Expr {
                               return SelectNode::Make(EQNode::Make(v[0], C(0)),
                                                       (*a)({v[1], v[2]}), (*b)({v[1], v[2]}));
                             }),
                             "T");
  return te::CreatePrimFunc({a, b, t});
}

TEST(AutoSchedule, SelectOnTheOuterIteratorPartitionsItsLoop) {
  autoschedule::TargetFacts facts = autoschedule::HostFacts();
  facts.Override("vector_bits", 256);
  facts.Override("cores", 2);
  schedule::Schedule sch = autoschedule::AutoSchedule(IRModuleNode::FromFunc(Stack(64, 40)), facts);
  std::vector<std::string> kinds = Kinds(sch.trace());
  EXPECT_TRUE(Has(kinds, "loop_partition"));
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "vectorize"), 2);  // each part its vectors
}

// NCHW -> NCHW8c: T[n, cb, h, w, c] = A[n, cb * 8 + c, h, w], a load affine in the iterators.
TEST(AutoSchedule, BlockedLayoutIsTiledAsAPermutation) {
  te::Tensor a = te::Placeholder({C(1), C(32), C(6), C(96)}, kF32, "A");
  te::Tensor t = te::Compute(
      {C(1), C(4), C(6), C(96), C(8)}, Body([&](const std::vector<Var>& v) -> Expr {
        return (*a)({v[0], AddNode::Make(MulNode::Make(v[1], C(8)), v[4]), v[2], v[3]});
      }),
      "T");
  autoschedule::TargetFacts facts = autoschedule::HostFacts();
  facts.Override("vector_bits", 512);
  facts.Override("cores", 2);
  schedule::Schedule sch =
      autoschedule::AutoSchedule(IRModuleNode::FromFunc(te::CreatePrimFunc({a, t})), facts);
  std::vector<std::string> kinds = Kinds(sch.trace());
  EXPECT_TRUE(Has(kinds, "reorder"));
  EXPECT_TRUE(Has(kinds, "vectorize"));  // 8 channels: half a native vector of float32 lanes
}

TEST(AutoSchedule, FunctionAttributeOptsOut) {
  PrimFunc func = MatmulRelu(8)->WithAttr("tessera.auto_schedule", Bool(false));
  std::string why;
  EXPECT_FALSE(autoschedule::CarriesNoSchedule(func, &why));
  EXPECT_NE(why.find("tessera.auto_schedule"), std::string::npos);
}

}  // namespace
}  // namespace tessera
