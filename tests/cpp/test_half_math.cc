// float16 math on the host: tir.LowerIntrin's abs of float16 as a bit mask (the host C target
// only) and the float16-precision AVX-512 kernels of vector_math.h (their results are checked
// over every float16 input in tests/python/codegen/test_codegen_host_half_precision.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/target/vector_math.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

DataType T(const char* name) { return DataType::Parse(name); }
Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

// k(a, out): out[0:lanes] = abs(a[0:lanes]) of `dtype` (lanes 1: scalars), for `target`.
IRModule AbsKernel(const char* dtype, int lanes, const std::string& target) {
  std::vector<Var> params = {VarNode::MakePointer("a", T(dtype), "global"),
                             VarNode::MakePointer("out", T(dtype), "global")};
  std::vector<Buffer> bufs;
  for (const Var& p : params) {
    bufs.push_back(BufferNode::Make(p, p->pointer->element, {I32(1024)}, {}, nullptr, p->name));
  }
  Expr index = lanes == 1 ? I32(0) : RampNode::Make(I32(0), I32(1), lanes);
  Expr load = BufferLoadNode::Make(bufs[0], {index});
  Expr abs = CallNode::Make(load->dtype, OpNode::Get("tir.abs"), {load});
  Stmt s = BufferStoreNode::Make(bufs[1], abs, {index});
  for (size_t i = bufs.size(); i-- > 0;) s = DeclBufferNode::Make(bufs[i], s);
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("k");
  attrs["target"] = StringImmNode::Make(target);
  return IRModuleNode::FromFunc(PrimFuncNode::Make(params, {}, s, DataType::Void(), attrs), "k");
}

std::string Lowered(const char* dtype, int lanes, const std::string& target) {
  IRModule out =
      transform::LowerIntrin(target)->fn(AbsKernel(dtype, lanes, target), transform::PassContext());
  return AsScript(out);
}

TEST(LowerIntrinHalfAbs, Float16ClearsTheSignBitOfInt16Lanes) {
  for (int lanes : {1, 16, 32}) {
    std::string code = Lowered("float16", lanes, "c");
    EXPECT_NE(code.find("reinterpret"), std::string::npos) << code;
    EXPECT_NE(code.find("bitwise_and"), std::string::npos) << code;
    EXPECT_NE(code.find("32767"), std::string::npos) << code;
    EXPECT_EQ(code.find("fabs"), std::string::npos) << code;
  }
}

TEST(LowerIntrinHalfAbs, OtherFloatsAndCudaKeepFabs) {
  EXPECT_NE(Lowered("float32", 16, "c").find("fabsf"), std::string::npos);
  EXPECT_NE(Lowered("float64", 8, "c").find("\"fabs\""), std::string::npos);
  std::string cuda = Lowered("float16", 1, "cuda");
  EXPECT_EQ(cuda.find("bitwise_and"), std::string::npos) << cuda;
}

TEST(HalfPrecisionAvx512Source, KernelsForTheirFunctionsOnly) {
  for (const char* fname : {"logf", "log2f", "log10f", "exp2f", "coshf", "acoshf", "asinhf"}) {
    std::string c = codegen::HalfPrecisionAvx512Source(fname);
    ASSERT_FALSE(c.empty()) << fname;
    EXPECT_EQ(c.rfind("static inline $F $N($F x) {\n", 0), 0u) << fname;
    // only the placeholders $N, $F, $I; no NaN or infinity among the printed constants
    for (size_t at = c.find('$'); at != std::string::npos; at = c.find('$', at + 1)) {
      EXPECT_NE(std::string("NFI").find(c[at + 1]), std::string::npos) << fname;
    }
    EXPECT_EQ(c.find("nanf"), std::string::npos) << fname;  // as %a prints them, "f" added
    EXPECT_EQ(c.find("inff"), std::string::npos) << fname;
  }
  // the same tables each time (Gal's search is deterministic)
  EXPECT_EQ(codegen::HalfPrecisionAvx512Source("logf"), codegen::HalfPrecisionAvx512Source("logf"));
  for (const char* fname : {"expf", "tanhf", "sinf", "sinhf", "log1pf", "log", "powf", ""}) {
    EXPECT_TRUE(codegen::HalfPrecisionAvx512Source(fname).empty()) << fname;
  }
}

}  // namespace
}  // namespace tessera
