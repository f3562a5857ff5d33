// The host target end to end in C++: stage lowering, CodeGenHost, the build cache, the packed
// calling convention with its argument checks, and NDArray.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "tessera/driver/stage.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

// A parameter handle `name` bound to a float32 buffer of `shape`.
std::pair<Var, Buffer> Param(const std::string& name, std::vector<Expr> shape) {
  Var handle = VarNode::Make(name, DataType::Handle());
  Buffer buf = BufferNode::Decl(name, DataType::Float(32), std::move(shape));
  return {handle, buf};
}

// out[i, j] = exp(x[i, j]) * 2 for a symbolic number of rows n: the rows run in parallel and
// the columns are vectorized.
IRModule ScaleModule() {
  Var n = VarNode::Make("n", DataType::Int(32));
  auto [x, X] = Param("x", {n, I32(16)});
  auto [out, Out] = Param("out", {n, I32(16)});
  Var i = VarNode::Make("i", DataType::Int(32)), j = VarNode::Make("j", DataType::Int(32));
  Expr value = MulNode::Make(CallNode::Make(DataType::Float(32), OpNode::Get("tir.exp"),
                                            {BufferLoadNode::Make(X, {i, j})}),
                             FloatImmNode::Make(DataType::Float(32), 2.0));
  Stmt inner = ForNode::Make(j, I32(0), I32(16), ForKind::kVectorized,
                             BufferStoreNode::Make(Out, value, {i, j}));
  Stmt body = ForNode::Make(i, I32(0), n, ForKind::kParallel, inner);
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("scale");
  PrimFunc f = PrimFuncNode::Make({x, out}, {{x, X}, {out, Out}}, body, DataType::Void(), attrs);
  return IRModuleNode::FromFunc(f, "scale");
}

class HostBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ =
        (fs::temp_directory_path() / ("tessera-host-test-" + std::to_string(getpid()))).string();
  }
  void TearDown() override { fs::remove_all(cache_); }

  runtime::Module Build(const IRModule& mod) {
    lower::LowerContext ctx;
    ctx.target = Target::Parse("c");
    ctx.entry = "scale";
    ctx.include_dir = "python/tessera/include";  // tests run from the source root
    ctx.cache_dir = cache_;
    lower::StageLowerer lw(mod, ctx);
    lw.RunTo(lower::Stage::kEnd);
    return lw.Result();
  }

  std::string cache_;
};

TEST_F(HostBuildTest, VectorizedParallelKernelRunsAndChecksArguments) {
  runtime::Module lib = Build(ScaleModule());
  EXPECT_NE(lib->source.find("#pragma omp parallel for"), std::string::npos);
  // Vectors of the host's width (16 fp32 lanes with AVX-512, 8 with AVX2), at most the loop's 16.
  int lanes = std::min(16, transform::HostVectorBits() / 32);
  EXPECT_NE(lib->source.find("typedef float tessera_float32x" + std::to_string(lanes)),
            std::string::npos);
  EXPECT_NE(lib->source.find("expf("), std::string::npos);
  ASSERT_EQ(lib->entry, "scale");
  const runtime::PackedFunctionInfo& f = runtime::GetFunction(*lib, "");
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[0].kind, "buffer");
  EXPECT_EQ(f.params[0].name, "x");

  runtime::NDArray x = runtime::NDArray::Empty({3, 16}, DataType::Float(32), {});
  runtime::NDArray out = runtime::NDArray::Empty({3, 16}, DataType::Float(32), {});
  auto* xs = static_cast<float*>(x.data());
  for (int k = 0; k < 48; ++k) xs[k] = 0.01f * k;
  runtime::PackedArgs args;
  args.AddTensor(x.dltensor());
  args.AddTensor(out.dltensor());
  runtime::CallPacked(*lib, f, args);
  auto* os = static_cast<float*>(out.data());
  for (int k = 0; k < 48; ++k) EXPECT_NEAR(os[k], 2 * std::exp(0.01f * k), 1e-5) << k;

  runtime::NDArray bad = runtime::NDArray::Empty({4, 16}, DataType::Float(32), {});
  runtime::PackedArgs mismatch;
  mismatch.AddTensor(x.dltensor());
  mismatch.AddTensor(bad.dltensor());
  try {
    runtime::CallPacked(*lib, f, mismatch);
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_EQ(
        e.message(),
        "Argument scale.out.shape[0] has an unsatisfied constraint: n == out.shape[0] (got 4)");
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  }
  runtime::PackedArgs few;
  few.AddTensor(x.dltensor());
  EXPECT_THROW(runtime::CallPacked(*lib, f, few), Error);
}

TEST_F(HostBuildTest, RebuildHitsTheCacheAndLoadModuleReadsMetadata) {
  runtime::Module a = Build(ScaleModule());
  runtime::Module b = Build(ScaleModule());
  EXPECT_EQ(a->lib_path, b->lib_path);
  runtime::Module loaded = runtime::LoadModule(a->lib_path);
  ASSERT_EQ(loaded->functions.size(), 1u);
  EXPECT_EQ(loaded->functions[0].name, "scale");
  EXPECT_EQ(loaded->source, a->source);
}

TEST(NDArrayTest, DescribesItselfAsADLTensor) {
  runtime::NDArray a = runtime::NDArray::Empty({2, 3}, DataType::Bool(), {});
  EXPECT_EQ(a.nbytes(), 6);
  EXPECT_EQ(a.dltensor()->ndim, 2);
  EXPECT_EQ(a.dltensor()->dtype.code, TESSERA_DL_BOOL);
  EXPECT_EQ(a.dltensor()->dtype.bits, 8);
  EXPECT_EQ(a.dltensor()->shape[1], 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  EXPECT_THROW(runtime::NDArray::Empty({2}, DataType::Float(32), {TESSERA_DEVICE_CUDA, 0}), Error);
}

}  // namespace
}  // namespace tessera
