// The CUDA target's stage table ("cuda"): the host stages plus the (G) passes of
// lowering-stages.md §5.1, the host/device split, CodeGenCUDA and NVRTC.
//
// Of the (G) passes, tessera implements UnifyThreadBinding, VerifyMemory, ThreadSync("shared"),
// SplitHostDevice and LowerDeviceKernelLaunch; LowerCrossThreadReduction, LiftThreadBinding,
// ManifestSharedMemoryLocalStage, LowerAutoCopy, InjectPermutedLayout, TransformMmaBufferLayout,
// InjectVirtualThread, InjectPTXLDG32, ThreadSync("shared.dyn"/"warp"), InferFragment,
// LowerThreadAllreduce, MergeSharedMemoryAllocations and LowerWarpMemory are not listed yet
// (nor the host passes that pipeline_host.cc leaves out).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/runtime/cuda/nvrtc.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/support/error.h"
#include "tessera/target/codegen_cuda.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/stage.h"

namespace tessera {
namespace lower {
namespace {

StageResult CudaBegin(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kBegin);
  mod = run(mod, transform::BindTarget("cuda"));
  return {mod, false, nullptr};
}

StageResult CudaNormalize(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kNormalize);
  mod = run(mod, "tir.CanonicalizeLoop");
  mod = run(mod, "tir.LowerInitBlock");
  mod = run(mod, "tir.PlanAndUpdateBufferAllocationLocation");
  mod = run(mod, "tir.ConvertBlocksToOpaque");
  mod = run(mod, "tir.CompactBufferAllocation");
  mod = run(mod, "tir.UnifyThreadBinding");
  mod = run(mod, "tir.LowerMatchBuffer");
  mod = run(mod, "tir.Simplify");
  return {mod, false, nullptr};
}

StageResult CudaFlatten(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kFlatten);
  mod = run(mod, "tir.LowerOpaqueBlock");
  mod = run(mod, "tir.FlattenBuffer");
  return {mod, false, nullptr};
}

StageResult CudaLoop(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kLoop);
  mod = run(mod, "tir.VectorizeLoop");
  mod = run(mod, "tir.StorageRewrite");
  mod = run(mod, "tir.UnrollLoop");
  return {mod, false, nullptr};
}

StageResult CudaCleanup(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kCleanup);
  mod = run(mod, "tir.Simplify");
  mod = run(mod, "tir.RemoveNoOp");
  return {mod, false, nullptr};
}

StageResult CudaSplit(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kSplit);
  mod = run(mod, "tir.VerifyMemory");
  mod = run(mod, transform::ThreadSync("shared"));
  mod = run(mod, "tir.SplitHostDevice");
  mod = run(mod, "tir.SkipAssert");
  mod = run(mod, "tir.MakePackedAPI");
  mod = run(mod, "tir.LowerDeviceKernelLaunch");
  return {mod, false, nullptr};
}

StageResult CudaFinalize(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kFinalize);
  mod = run(mod, transform::LowerIntrin("c"));     // host functions
  mod = run(mod, transform::LowerIntrin("cuda"));  // device kernels
  mod = run(mod, "tir.Simplify");
  return {mod, false, nullptr};
}

// "-arch=sm_86" from the target string; else the compute capability of GPU 0; else sm_80.
std::string TargetArch(const LowerContext& ctx) {
  const std::string& o = ctx.target_options;
  size_t at = o.find("-arch=");
  if (at != std::string::npos) {
    size_t end = o.find(' ', at);
    return o.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
  }
  if (runtime::cuda::DriverAvailable()) {
    return "sm_" + std::to_string(runtime::cuda::ComputeCapability(0));
  }
  return "sm_80";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

StageResult CudaCodegen(IRModule mod, LowerContext& ctx) {
  std::string cuda_source = CodeGenCUDA(mod);
  char dump_name[32];
  std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen.cu", ++ctx.pass_counter);
  DumpText(ctx, dump_name, cuda_source);
  std::string arch = TargetArch(ctx);
  std::string ptx = runtime::cuda::CompileCUDA(cuda_source, arch, ctx.cache_dir + "/cuda");

  HostSource src = CodeGenCUDAHost(mod, cuda_source, ptx);
  auto built = std::make_shared<runtime::ModuleNode>();
  built->target = "cuda";
  built->ir = mod;
  built->source =
      src.code.substr(0, src.code.find("\nTESSERA_EXPORT const char " TESSERA_MODULE_INFO_SYMBOL));
  built->device_source = cuda_source;
  built->device_binary = ptx;
  built->device_format = "ptx";
  built->info["arch"] = arch;
  runtime::ParseModuleInfo(src.metadata, built.get());
  std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen.c", ++ctx.pass_counter);
  DumpText(ctx, dump_name, src.code);
  std::vector<std::string> flags = DefaultHostCompileFlags(ctx.include_dir, src.uses_openmp);
  std::string headers = ReadFile(ctx.include_dir + "/tessera/runtime.h") +
                        ReadFile(ctx.include_dir + "/tessera/runtime_abi.h");
  built->lib_path = CompileSharedLibrary(src.code, flags, ctx.cache_dir, headers);
  return {mod, false, built};
}

StageResult CudaEnd(IRModule mod, LowerContext& ctx) {
  // Loading touches no GPU: the kernels are loaded into a device on their first launch.
  if (ctx.built) runtime::LoadHostLibrary(ctx.built.get());
  return {mod, true, ctx.built};
}

/*! \brief Stages of the CUDA target, in execution order. */
StageTable CudaStages() {
  return {
      {Stage::kBegin, "begin", CudaBegin},
      {Stage::kNormalize, "normalize", CudaNormalize},
      {Stage::kFlatten, "flatten", CudaFlatten},
      {Stage::kLoop, "loop", CudaLoop},
      {Stage::kCleanup, "cleanup", CudaCleanup},
      {Stage::kSplit, "split", CudaSplit},
      {Stage::kFinalize, "finalize", CudaFinalize},
      {Stage::kCodegen, "codegen", CudaCodegen},
      {Stage::kEnd, "end", CudaEnd},
  };
}

}  // namespace

TESSERA_REGISTER_STAGES("cuda", CudaStages);

}  // namespace lower
}  // namespace tessera
