// The CUDA emulator without Python: kernel discovery, compiling CUDA C for the host, launches
// with barriers and warp shuffles, and its errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/runtime/cuda/emulator.h"
#include "tessera/support/error.h"
#include "tessera/target/toolchain.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
namespace emu = runtime::cuda::emu;

TEST(CudaEmulatorSource, FindsKernelNamesInTheCodegenFormat) {
  std::string src =
      "extern \"C\" __global__ __launch_bounds__(128) void add_kernel(float* __restrict__ A) {}\n"
      "static __device__ int helper(int x) { return x; }\n"
      "extern \"C\" __global__ void second(int n) {}\n";
  EXPECT_EQ(emu::KernelNames(src), (std::vector<std::string>{"add_kernel", "second"}));
  EXPECT_TRUE(emu::KernelNames("int x;").empty());
}

class CudaEmulator : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      FindHostCXXCompiler();
    } catch (const Error& e) {
      GTEST_SKIP() << e.what();
    }
    emu::SetIncludeDir(std::string(TESSERA_SOURCE_DIR) + "/python/tessera/include");
    char templ[] = "/tmp/tessera-emulator-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    cache_dir_ = templ;
    const char* old = std::getenv("TESSERA_CACHE_DIR");
    if (old != nullptr) old_cache_ = old;
    had_cache_ = old != nullptr;
    setenv("TESSERA_CACHE_DIR", cache_dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_cache_) {
      setenv("TESSERA_CACHE_DIR", old_cache_.c_str(), 1);
    } else {
      unsetenv("TESSERA_CACHE_DIR");
    }
    std::error_code ec;
    if (!cache_dir_.empty()) fs::remove_all(cache_dir_, ec);
  }

  std::string cache_dir_, old_cache_;
  bool had_cache_ = false;
};

TEST_F(CudaEmulator, BlockReductionWithBarriersAndShuffles) {
  // Per block: warp sums by __shfl_down_sync, then the warp sums added through shared memory.
  const char* src = R"(
extern "C" __global__ void block_sum(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float warp_sums[32];
  int t = threadIdx.x;
  float v = x[blockIdx.x * blockDim.x + t];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  if (t % 32 == 0) warp_sums[t / 32] = v;
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (int w = 0; w < (int)(blockDim.x / 32); ++w) s += warp_sums[w];
    out[blockIdx.x] = s;
  }
}
)";
  emu::Program p(src);
  EXPECT_EQ(p.kernels(), std::vector<std::string>{"block_sum"});
  std::vector<float> x(3 * 256), out(3, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 17);
  float* xp = x.data();
  float* op = out.data();
  void* args[] = {&xp, &op};
  int64_t dims[7] = {3, 1, 1, 256, 1, 1, 0};
  p.Launch("block_sum", dims, args, 2);
  for (int b = 0; b < 3; ++b) {
    float want = 0;
    for (int i = 0; i < 256; ++i) want += x[b * 256 + i];
    EXPECT_EQ(out[b], want) << "block " << b;
  }
}

TEST_F(CudaEmulator, ReportsDeadlocksAndBadLaunches) {
  const char* src = R"(
extern "C" __global__ void k(int* __restrict__ x) {
  if (threadIdx.x % 2 == 0) __syncthreads();
  x[threadIdx.x] = 1;
}
)";
  emu::Program p(src);
  std::vector<int> x(64);
  int* xp = x.data();
  void* args[] = {&xp};
  int64_t dims[7] = {1, 1, 1, 64, 1, 1, 0};
  try {
    p.Launch("k", dims, args);
    FAIL() << "no deadlock reported";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("the CUDA kernel k deadlocked in block (0, 0, 0): 32 of 64 "
                                   "threads wait at __syncthreads while 32 exited"),
        std::string::npos)
        << e.what();
  }
  int64_t too_big[7] = {1, 1, 1, 32, 32, 2, 0};
  EXPECT_THROW(p.Launch("k", too_big, args), Error);
  EXPECT_THROW(p.Launch("nope", dims, args), Error);
}

TEST_F(CudaEmulator, HalfConversionsRoundToNearestEven) {
  const char* src = R"(
#include <cuda_fp16.h>
extern "C" __global__ void conv(const float* __restrict__ f, unsigned short* __restrict__ h) {
  half v = __float2half(f[threadIdx.x]);
  h[threadIdx.x] = __half_as_ushort(v);
}
)";
  emu::Program p(src);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1). 1 + 3 * 2^-11 ties up.
  // 65520 overflows to inf; 2^-24 is the smallest subnormal; 2^-25 ties to 0.
  std::vector<float> f = {
      1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65520.0f, 0x1p-24f, 0x1p-25f,
      -2.5f,           0x1.8p-25f};
  std::vector<unsigned short> h(f.size());
  float* fp = f.data();
  unsigned short* hp = h.data();
  void* args[] = {&fp, &hp};
  int64_t dims[7] = {1, 1, 1, int64_t(f.size()), 1, 1, 0};
  p.Launch("conv", dims, args, 2);
  EXPECT_EQ(h, (std::vector<unsigned short>{0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0001, 0x0000, 0xc100,
                                            0x0001}));
}

TEST_F(CudaEmulator, CompileErrorsCarryTheCompilerOutput) {
  try {
    emu::Program p("extern \"C\" __global__ void k() { not_declared(); }\n");
    FAIL() << "no compile error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not_declared"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
