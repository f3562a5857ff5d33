// The host CPU's stage table ("c", and "llvm" as its alias): the shared TensorIR stages
// (pipeline_tir.cc) followed by CodeGenHost and the system C compiler.
#include <cstdio>

#include "tessera/runtime/dso_module.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/target/codegen_host.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/stage.h"
#include "tessera/transform/tir_stages.h"

namespace tessera {
namespace lower {
namespace {

StageResult HostCodegen(IRModule mod, LowerContext& ctx) {
  HostSource src = CodeGenHost(mod);
  auto built = std::make_shared<runtime::ModuleNode>();
  built->target = ctx.target;
  built->ir = mod;
  built->source =
      src.code.substr(0, src.code.find("\nTESSERA_EXPORT const char " TESSERA_MODULE_INFO_SYMBOL));
  runtime::ParseModuleInfo(src.metadata, built.get());
  char dump_name[32];
  std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen.c", ++ctx.pass_counter);
  DumpText(ctx, dump_name, src.code);
  std::vector<std::string> flags = DefaultHostCompileFlags(ctx.include_dir, src.uses_openmp);
  for (std::string& f : ExtraCompilerOptions(ctx)) flags.push_back(std::move(f));
  built->lib_path = CompileSharedLibrary(src.code, flags, ctx.cache_dir,
                                         ShippedHeaderText(ctx, {"runtime.h", "runtime_abi.h"}));
  return {mod, false, built};
}

StageResult HostEnd(IRModule mod, LowerContext& ctx) {
  if (ctx.built) runtime::LoadHostLibrary(ctx.built.get());
  return {mod, true, ctx.built};
}

/*! \brief Stages of the host C target, in execution order. */
StageTable HostCStages() {
  return {
      {Stage::kBegin, "begin", TirBeginStage},
      {Stage::kNormalize, "normalize", TirNormalizeStage},
      {Stage::kFlatten, "flatten", TirFlattenStage},
      {Stage::kLoop, "loop", TirLoopStage},
      {Stage::kCleanup, "cleanup", TirCleanupStage},
      {Stage::kSplit, "split", TirSplitStage},
      {Stage::kFinalize, "finalize", TirFinalizeStage},
      {Stage::kCodegen, "codegen", HostCodegen},
      {Stage::kEnd, "end", HostEnd},
  };
}

}  // namespace

TESSERA_REGISTER_STAGES("c", HostCStages);
TESSERA_REGISTER_STAGES("llvm", HostCStages);  // alias of the host target

}  // namespace lower
}  // namespace tessera
