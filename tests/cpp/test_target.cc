// ir/target.h, support/escape.h and ir/expr_ops.h: the Target parsed once, one quoting helper,
// the typed expression builders with constant folding.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tessera/ir/expr_ops.h"
#include "tessera/ir/target.h"
#include "tessera/support/error.h"
#include "tessera/support/escape.h"

namespace tessera {
namespace {

template <class F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

TEST(Target, ParsesKindAndOptionsOnce) {
  Target t = Target::Parse("  cuda   -arch=sm_86 -max_num_threads=512 -fast ");
  EXPECT_EQ(t.kind(), "cuda");
  EXPECT_EQ(t.options(), "-arch=sm_86 -max_num_threads=512 -fast");
  EXPECT_EQ(t.str(), "cuda -arch=sm_86 -max_num_threads=512 -fast");
  ASSERT_EQ(t.attrs().size(), 3u);
  EXPECT_EQ(t.attrs()[1].first, "max_num_threads");
  EXPECT_EQ(t.GetAttr("arch"), "sm_86");
  EXPECT_TRUE(t.HasAttr("fast"));
  EXPECT_EQ(t.GetAttr("fast", "x"), "");
  EXPECT_EQ(t.GetAttr("mcpu", "none"), "none");
  EXPECT_TRUE(t.IsGpu());
  EXPECT_FALSE(t.IsHost());
  EXPECT_EQ(t.facts().kind, "cuda");
  EXPECT_EQ(t.facts().warp_size, 32);
}

TEST(Target, HostFactsAreTheDetectedOnesAndOverridable) {
  Target c = Target::Parse("c");
  EXPECT_TRUE(c.IsHost());
  EXPECT_EQ(c.str(), "c");
  EXPECT_EQ(c.facts().vector_bits, HostFacts().vector_bits);
  EXPECT_EQ(c.facts().cores, HostFacts().cores);
  EXPECT_EQ(Target().kind(), "c");
  Target llvm = Target::Parse("llvm -mcpu=skylake");
  llvm.OverrideFact("vector_bits", 512);
  llvm.OverrideFact("cores", 3);
  EXPECT_EQ(llvm.facts().vector_bits, 512);
  EXPECT_EQ(llvm.facts().cores, 3);
  EXPECT_EQ(HostFacts().cores, c.facts().cores);  // the detected facts are unchanged
  EXPECT_NE(ErrorOf([&] { llvm.OverrideFact("lanes", 4); }).find("unknown target fact 'lanes'"),
            std::string::npos);
}

TEST(Target, MattrTakesVectorFeaturesAwayFromTheHostFacts) {
  // What the host has, less what -mattr takes away from the C compiler; never more.
  const TargetFacts& host = HostFacts();
  TargetFacts no512 = Target::Parse("c -mattr=-avx512f").facts();
  EXPECT_EQ(no512.vector_bits, std::min(host.vector_bits, 256));
  if (host.isa == "avx512") {
    EXPECT_EQ(no512.isa, "avx2");
    EXPECT_EQ(no512.vector_registers, 16);
  }
  TargetFacts no_fma = FactsForTarget("llvm -mcpu=native -mattr=+sse4.2,-fma");
  if (host.vector_bits >= 256) {
    EXPECT_EQ(no_fma.isa, "avx");
  }
  EXPECT_EQ(FactsForTarget("c -mattr=-avx").vector_bits, std::min(host.vector_bits, 128));
  EXPECT_EQ(Target::Parse("c -mattr=+avx2").facts().vector_bits, host.vector_bits);
  EXPECT_EQ(Target::Parse("c -mattr=-avx512f").facts().cores, host.cores);
}

TEST(Target, StreamVectorLanesCapMemoryBoundLoops) {
  TargetFacts f;
  f.vector_bits = 512;
  f.stream_vector_bits = 256;
  EXPECT_EQ(f.VectorLanes(32), 16);
  EXPECT_EQ(f.StreamVectorLanes(32), 8);
  EXPECT_EQ(f.StreamVectorLanes(8), 32);
  EXPECT_EQ(f.StreamVectorLanes(64), 4);
  f.stream_vector_bits = 0;  // no cap: the full vector
  EXPECT_EQ(f.StreamVectorLanes(32), 16);
  f.vector_bits = 128, f.stream_vector_bits = 256;  // never wider than the vector
  EXPECT_EQ(f.StreamVectorLanes(32), 4);
  // the host's: capped at 256 bits where AVX-512 is detected
  const TargetFacts& host = HostFacts();
  if (host.isa == "avx512") {
    EXPECT_EQ(host.StreamVectorLanes(32), 8);
  }
  EXPECT_EQ(host.StreamVectorLanes(32), std::min(host.VectorLanes(32), 8));
  Target t = Target::Parse("c");
  t.OverrideFact("stream_vector_bits", 0);
  EXPECT_EQ(t.facts().stream_vector_bits, 0);
  EXPECT_NE(ErrorOf([&] { t.OverrideFact("stream_vector_bits", 100); })
                .find("'stream_vector_bits' must be a multiple of 32, got 100"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { t.OverrideFact("stream_vector_bits", -256); }).find("must be 0 or more"),
            std::string::npos);
}

TEST(Target, BadStringsAndKindsWithoutFactsAreErrors) {
  EXPECT_NE(ErrorOf([] { Target::Parse("   "); }).find("empty target string"), std::string::npos);
  EXPECT_NE(ErrorOf([] { Target::Parse("llvm mcpu"); }).find("must look like -key=value"),
            std::string::npos);
  Target dsl = Target::Parse("dsl");  // a stage table without facts
  EXPECT_EQ(dsl.kind(), "dsl");
  EXPECT_NE(ErrorOf([&] { dsl.facts(); }).find("not 'dsl'"), std::string::npos);
}

TEST(Escape, QuotesForEachLanguage) {
  std::string s = "a\"b\\c\nd\te\x01\x7f\xc3\xa9";
  EXPECT_EQ(Quote(s, QuoteStyle::kC), "\"a\\\"b\\\\c\\nd\\te\\001\\177\\303\\251\"");
  EXPECT_EQ(Quote(s, QuoteStyle::kPython), "\"a\\\"b\\\\c\\nd\\te\\x01\\x7f\xc3\xa9\"");
  EXPECT_EQ(Quote(s, QuoteStyle::kJson), "\"a\\\"b\\\\c\\nd\\u0009e\\u0001\x7f\xc3\xa9\"");
  EXPECT_EQ(Quote("", QuoteStyle::kC), "\"\"");
  EXPECT_EQ(EscapeFormat("100% of %d"), "100%% of %%d");
}

TEST(ExprOps, PromoteTypesAndFoldConstants) {
  const DataType i32 = DataType::Int(32), i64 = DataType::Int(64);
  Var x = VarNode::Make("x", i32);
  Expr sum = AddE(x, IntConst(i64, 2));
  EXPECT_EQ(sum->dtype, i64);
  ASSERT_NE(AsPtr<AddNode>(sum), nullptr);
  EXPECT_NE(AsPtr<CastNode>(AsPtr<AddNode>(sum)->a), nullptr);
  EXPECT_EQ(AsConstInt(AddE(IntConst(i32, 2), IntConst(i32, 3))), 5);
  EXPECT_EQ(AsConstInt(SubE(IntConst(i32, 2), IntConst(i64, 7))), -5);
  EXPECT_EQ(SubE(IntConst(i32, 2), IntConst(i64, 7))->dtype, i64);
  EXPECT_EQ(AsConstInt(MulE(IntConst(i32, 6), IntConst(i32, 7))), 42);
  EXPECT_EQ(AsConstInt(FloorDivE(IntConst(i32, -7), IntConst(i32, 2))), -4);
  EXPECT_EQ(AsConstInt(FloorModE(IntConst(i32, -7), IntConst(i32, 2))), 1);
  // No fold where the result leaves the type or the divisor is 0: the node is built.
  EXPECT_NE(AsPtr<MulNode>(MulE(IntConst(i32, 1 << 20), IntConst(i32, 1 << 20))), nullptr);
  EXPECT_NE(AsPtr<FloorDivNode>(FloorDivE(IntConst(i32, 1), IntConst(i32, 0))), nullptr);
  EXPECT_EQ(AndE(nullptr, x), Expr(x));
  EXPECT_EQ(AndE(x, IntConst(DataType::Bool(), 1)), Expr(x));
}

}  // namespace
}  // namespace tessera
