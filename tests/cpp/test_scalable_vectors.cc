// Scalable vectors (TVM's SVE form, vscale * k lanes): the data type, Ramp/Broadcast of
// T.vscale() * k lanes, predicated accesses, structural equality and hashing, printing, and the
// located refusal by the C code generator.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/support/error.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

void ExpectError(const std::function<void()>& build, ErrorKind kind, const std::string& needle) {
  try {
    build();
    ADD_FAILURE() << "no error; expected one mentioning \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

Expr C(int64_t v) { return IntImmNode::Make(kI32, v); }

TEST(ScalableDataType, ParsesAndPrintsTvmNames) {
  DataType t = DataType::Parse("float32xvscalex4");
  EXPECT_TRUE(t.is_scalable_vector());
  EXPECT_TRUE(t.is_vector());
  EXPECT_FALSE(t.is_scalar());
  EXPECT_FALSE(t.is_fixed_length_vector());
  EXPECT_EQ(t.vscale_factor(), 4);
  EXPECT_EQ(t.element_of(), kF32);
  EXPECT_EQ(t.ToString(), "float32xvscalex4");
  EXPECT_EQ(t, kF32.with_scalable_vscale_factor(4));
  EXPECT_NE(t, DataType::Float(32, 4));  // vscale * 4 lanes are not 4 lanes
  EXPECT_NE(t.Hash(), DataType::Float(32, 4).Hash());
  EXPECT_EQ(DataType::Parse("uint1xvscalex4").ToString(), "uint1xvscalex4");
  EXPECT_TRUE(DataType::Parse("uint1xvscalex4").is_predicate_dtype());
  EXPECT_EQ(DataType::Parse("boolxvscalex8"), DataType::Bool().with_scalable_vscale_factor(8));
  EXPECT_EQ(DataType::Parse("i8xvscalex16").ToString(), "int8xvscalex16");
  // Fixed types are unchanged.
  EXPECT_FALSE(DataType::Float(32, 4).is_scalable_vector());
  EXPECT_EQ(DataType::Float(32, 4).lanes_or_vscale_factor(), 4);
}

TEST(ScalableDataType, LaneCountIsRefusedNotGuessed) {
  DataType t = DataType::Parse("int32xvscalex4");
  ExpectError([&] { (void)t.lanes(); }, ErrorKind::kType, "not known at compile time");
  ExpectError([&] { (void)t.bytes(); }, ErrorKind::kType, "scalable vector");
  ExpectError([] { (void)kF32.vscale_factor(); }, ErrorKind::kType, "not a scalable vector");
  ExpectError([] { DataType::Parse("float32xvscalex1"); }, ErrorKind::kType, "unknown data type");
  ExpectError([] { DataType::Parse("float32xvscale"); }, ErrorKind::kType, "unknown data type");
  ExpectError([] { DataType::Parse("float32xvscalex"); }, ErrorKind::kType, "unknown data type");
  ExpectError([] { DataType::Parse("float32x40000"); }, ErrorKind::kType, "unknown data type");
  ExpectError([] { kF32.with_scalable_vscale_factor(1); }, ErrorKind::kType, "vscale factor");
}

TEST(ScalableVectors, RampAndBroadcastOfVscaleLanes) {
  Expr lanes = ScalableLanesExpr(8);
  ASSERT_TRUE(MatchScalableLanes(lanes).has_value());
  EXPECT_EQ(*MatchScalableLanes(lanes), 8);
  // k * vscale() is the same lanes.
  Expr swapped = MulNode::Make(C(8), CallNode::Make(kI32, OpNode::Get("tir.vscale"), {}));
  EXPECT_EQ(MatchScalableLanes(swapped), 8);
  EXPECT_FALSE(MatchScalableLanes(C(8)).has_value());
  EXPECT_FALSE(MatchScalableLanes(ScalableLanesExpr(1)).has_value());

  Var a = VarNode::Make("a", kI32);
  auto ramp = RampNode::Make(a, C(1), -8);
  EXPECT_EQ(ramp->dtype, kI32.with_scalable_vscale_factor(8));
  auto bc = BroadcastNode::Make(FloatImmNode::Make(kF32, 0.5), -4);
  EXPECT_EQ(bc->dtype.ToString(), "float32xvscalex4");
  ExpectError([&] { RampNode::Make(a, C(1), -1); }, ErrorKind::kType, "at least 2 lanes");

  EXPECT_EQ(AsScript(ramp), "T.Ramp(a, 1, T.vscale() * 8)");
  EXPECT_EQ(AsScript(bc), "T.Broadcast(T.float32(0.5), T.vscale() * 4)");
  EXPECT_TRUE(StructuralEqual(bc, BroadcastNode::Make(FloatImmNode::Make(kF32, 0.5), -4)));
  EXPECT_FALSE(StructuralEqual(bc, BroadcastNode::Make(FloatImmNode::Make(kF32, 0.5), 4)));
  EXPECT_FALSE(StructuralEqual(bc, BroadcastNode::Make(FloatImmNode::Make(kF32, 0.5), -8)));
  EXPECT_EQ(StructuralHash(bc), StructuralHash(BroadcastNode::Make(FloatImmNode::Make(kF32, 0.5), -4)));
  EXPECT_NE(StructuralHash(bc), StructuralHash(BroadcastNode::Make(FloatImmNode::Make(kF32, 0.5), 4)));
  // Comparisons and casts keep the lanes scalable.
  auto lt = LTNode::Make(ramp, RampNode::Make(C(0), C(2), -8));
  EXPECT_EQ(lt->dtype.ToString(), "boolxvscalex8");
  ExpectError([&] { CastNode::Make(DataType::Float(32, 8), ramp); }, ErrorKind::kType,
              "lane count");
  EXPECT_EQ(CastNode::Make(kF32.with_scalable_vscale_factor(8), ramp)->dtype.ToString(),
            "float32xvscalex8");
}

TEST(ScalableVectors, PredicatedLoadsAndStores) {
  Buffer A = BufferNode::Decl("A", kF32, {C(128)});
  Expr index = RampNode::Make(C(0), C(1), -4);
  Expr mask = CallNode::Make(DataType::Parse("uint1xvscalex4"),
                             OpNode::Get("tir.get_active_lane_mask"), {C(0), C(13)});
  auto load = BufferLoadNode::Make(A, {index}, mask);
  EXPECT_EQ(load->dtype.ToString(), "float32xvscalex4");
  Stmt store = BufferStoreNode::Make(A, load, {RampNode::Make(C(0), C(2), -4)}, mask);
  EXPECT_EQ(AsScript(store),
            "A = T.Buffer((128,))\nA.vstore([T.Ramp(0, 2, T.vscale() * 4)], A.vload([T.Ramp(0, 1, "
            "T.vscale() * 4)], predicate=T.get_active_lane_mask(\"uint1xvscalex4\", 0, 13)), "
            "predicate=T.get_active_lane_mask(\"uint1xvscalex4\", 0, 13))");
  // A fixed predicate on a scalable access, or the wrong factor, is refused.
  ExpectError([&] { BufferLoadNode::Make(A, {index}, BroadcastNode::Make(Bool(true), 4)); },
              ErrorKind::kType, "load predicate must be boolxvscalex4, got boolx4");
  ExpectError([&] { BufferStoreNode::Make(A, load, {index}, BroadcastNode::Make(Bool(true), -8)); },
              ErrorKind::kType, "store predicate must be boolxvscalex4, got boolxvscalex8");
  ExpectError([&] { BufferStoreNode::Make(A, BroadcastNode::Make(FloatImmNode::Make(kF32, 1), 4),
                                          {index}); },
              ErrorKind::kType, "cannot store float32x4 into buffer A of float32 at vscale * 4 lanes");
  // A unit-stride scalable ramp prints as a slice.
  EXPECT_EQ(AsScript(load->indices[0]), "T.Ramp(0, 1, T.vscale() * 4)");
  Stmt copy = BufferStoreNode::Make(A, BufferLoadNode::Make(A, {index}), {index});
  EXPECT_EQ(AsScript(copy), "A = T.Buffer((128,))\nA[0:T.vscale() * 4] = A[0:T.vscale() * 4]");
}

TEST(ScalableVectors, CodeGeneratorsRefuseThemWithALocation) {
  Span span("kernel.py", 7, 5, 7, 30);
  Var a = VarNode::Make("a", DataType::Handle());
  Buffer A = BufferNode::Decl("A", kF32, {C(128)});
  Stmt store = BufferStoreNode::Make(
      A, BroadcastNode::Make(FloatImmNode::Make(kF32, 1), -4, span), {RampNode::Make(C(0), C(1), -4)},
      nullptr, span);
  PrimFunc f = PrimFuncNode::Make({a}, {{a, A}}, store);
  ExpectError([&] { transform::RefuseScalableVectors(f, "c"); }, ErrorKind::kBuild,
              "scalable vectors are not supported on the c target");
  try {
    transform::RefuseScalableVectors(f, "c");
  } catch (const Error& e) {
    EXPECT_EQ(e.span().line, 7);
  }
  // A fixed-width function passes.
  Stmt fixed = BufferStoreNode::Make(A, BroadcastNode::Make(FloatImmNode::Make(kF32, 1), 4),
                                     {RampNode::Make(C(0), C(1), 4)});
  transform::RefuseScalableVectors(PrimFuncNode::Make({a}, {{a, A}}, fixed), "c");
}

}  // namespace
}  // namespace tessera
