// The CUDA target's stage table ("cuda"): the shared TensorIR stages (pipeline_tir.cc, where the
// GPU passes are chosen by ctx.IsGpu()), then CodeGenCUDA with NVRTC and the host launcher.
#include <cstdio>

#include "tessera/driver/stage.h"
#include "tessera/driver/tir_stages.h"
#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/runtime/cuda/emulator.h"
#include "tessera/runtime/cuda/nvrtc.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/support/error.h"
#include "tessera/target/codegen_cuda.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace lower {
namespace {

// "-arch=sm_86" from the target; else the compute capability of GPU 0; else sm_80.
std::string TargetArch(const LowerContext& ctx) {
  std::string arch = ctx.target.GetAttr("arch");
  if (!arch.empty()) return arch;
  if (runtime::cuda::DriverAvailable()) {
    return "sm_" + std::to_string(runtime::cuda::ComputeCapability(0));
  }
  return "sm_80";
}

StageResult CudaCodegen(IRModule mod, LowerContext& ctx) {
  std::string cuda_source = CodeGenCUDA(mod, ctx.target.GetAttr("loop_addresses", "1") != "0");
  char dump_name[32];
  std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen.cu", ++ctx.pass_counter);
  DumpText(ctx, dump_name, cuda_source);
  std::string arch = TargetArch(ctx);
  // NVRTC checks that the source compiles for real GPUs. The CUDA emulator runs the source
  // itself, so under it a machine without NVRTC builds without PTX.
  std::string ptx;
  if (!runtime::cuda::emu::Enabled() || runtime::cuda::NVRTCAvailable()) {
    ptx = runtime::cuda::CompileCUDA(cuda_source, arch, ctx.cache_dir + "/cuda");
  }

  auto built = CompileHostLibrary(mod, CodeGenCUDAHost(mod, cuda_source, ptx), "cuda", ctx);
  built->device_source = cuda_source;
  built->device_binary = ptx;
  built->device_format = "ptx";
  built->info["arch"] = arch;
  return {mod, false, built};
}

/*! \brief Stages of the CUDA target, in execution order. */
StageTable CudaStages() { return TirStageTable(CudaCodegen); }

}  // namespace

TESSERA_REGISTER_STAGES("cuda", CudaStages);

}  // namespace lower
}  // namespace tessera
