// The host CPU's stage table ("c", and "llvm" as its alias): the order of its passes, in one
// place (lowering-stages.md §5.1 without the (G) passes).
//
// Passes of §5.1 that tessera does not implement yet are simply not listed: in normalize
// InjectSoftwarePipeline and AnnotateIrregularLoop; in flatten BF16ComputeLegalize and
// NarrowDataType; in loop InjectDoubleBuffer and LowerAsyncDMA; in cleanup
// RenormalizeSplitPattern, RewriteUnsafeSelect and InstrumentBoundCheckers; in split
// VerifyMemory, AnnotateEntryFunc, AnnotateDeviceRegions, SplitHostDevice, BF16StorageLegalize and
// LowerDeviceKernelLaunch; in finalize LowerBuiltin (the host code generator prints the packed-call
// builtins itself), LowerDeviceStorageAccessInfo and CombineContextCall. User phases
// (tir.add_lower_pass) are not run yet. tessera's own tir.InjectPrefetch (pragma_prefetch loops)
// ends the loop stage.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tessera/runtime/dso_module.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/target/codegen_host.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/stage.h"

namespace tessera {
namespace lower {
namespace {

StageResult HostBegin(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kBegin);
  mod = run(mod, transform::BindTarget(ctx.target));
  return {mod, false, nullptr};
}

StageResult HostNormalize(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kNormalize);
  mod = run(mod, "tir.CanonicalizeLoop");
  mod = run(mod, "tir.LowerInitBlock");
  mod = run(mod, "tir.PlanAndUpdateBufferAllocationLocation");
  mod = run(mod, "tir.ConvertBlocksToOpaque");
  mod = run(mod, "tir.CompactBufferAllocation");
  mod = run(mod, "tir.LowerMatchBuffer");
  mod = run(mod, "tir.Simplify");
  return {mod, false, nullptr};
}

StageResult HostFlatten(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kFlatten);
  mod = run(mod, "tir.LowerOpaqueBlock");
  mod = run(mod, "tir.FlattenBuffer");
  return {mod, false, nullptr};
}

StageResult HostLoop(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kLoop);
  mod = run(mod, "tir.LoopPartition");
  mod = run(mod, "tir.VectorizeLoop");
  mod = run(mod, "tir.StorageRewrite");
  mod = run(mod, "tir.HoistIfThenElse");
  mod = run(mod, "tir.UnrollLoop");
  mod = run(mod, "tir.InjectPrefetch");
  return {mod, false, nullptr};
}

StageResult HostCleanup(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kCleanup);
  mod = run(mod, "tir.Simplify");
  mod = run(mod, "tir.RemoveNoOp");
  mod = run(mod, "tir.CommonSubexprElimTIR");
  return {mod, false, nullptr};
}

StageResult HostSplit(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kSplit);
  mod = run(mod, "tir.SkipAssert");
  mod = run(mod, "tir.MakePackedAPI");
  return {mod, false, nullptr};
}

StageResult HostFinalize(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kFinalize);
  mod = run(mod, transform::LowerIntrin("c"));
  return {mod, false, nullptr};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

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
  std::string extra = ctx.pass_ctx.GetString("tessera.cc_options", "");
  for (size_t i = 0; i < extra.size();) {
    size_t j = extra.find(' ', i);
    if (j == std::string::npos) j = extra.size();
    if (j > i) flags.push_back(extra.substr(i, j - i));
    i = j + 1;
  }
  // The headers are part of what gets compiled, so they are part of the cache key.
  std::string headers = ReadFile(ctx.include_dir + "/tessera/runtime.h") +
                        ReadFile(ctx.include_dir + "/tessera/runtime_abi.h");
  built->lib_path = CompileSharedLibrary(src.code, flags, ctx.cache_dir, headers);
  return {mod, false, built};
}

StageResult HostEnd(IRModule mod, LowerContext& ctx) {
  if (ctx.built) runtime::LoadHostLibrary(ctx.built.get());
  return {mod, true, ctx.built};
}

/*! \brief Stages of the host C target, in execution order. */
StageTable HostCStages() {
  return {
      {Stage::kBegin, "begin", HostBegin},
      {Stage::kNormalize, "normalize", HostNormalize},
      {Stage::kFlatten, "flatten", HostFlatten},
      {Stage::kLoop, "loop", HostLoop},
      {Stage::kCleanup, "cleanup", HostCleanup},
      {Stage::kSplit, "split", HostSplit},
      {Stage::kFinalize, "finalize", HostFinalize},
      {Stage::kCodegen, "codegen", HostCodegen},
      {Stage::kEnd, "end", HostEnd},
  };
}

}  // namespace

TESSERA_REGISTER_STAGES("c", HostCStages);
TESSERA_REGISTER_STAGES("llvm", HostCStages);  // alias of the host target

}  // namespace lower
}  // namespace tessera
