// The pass order of the TensorIR targets, host and CUDA alike, in one place
// (lowering-stages.md §5.1). Passes marked (G) run only for GPU targets.
//
// Passes of §5.1 that tessera does not implement yet are simply not listed: in normalize
// LiftThreadBinding (G), ManifestSharedMemoryLocalStage (G),
// LowerAutoCopy (G), InjectPermutedLayout (G), AnnotateIrregularLoop and
// TransformMmaBufferLayout (G); in flatten BF16ComputeLegalize and NarrowDataType; in loop
// InjectVirtualThread (G; provided as tir.InjectVirtualThread, not run here yet),
// InjectDoubleBuffer and LowerAsyncDMA; in cleanup
// RenormalizeSplitPattern, RewriteUnsafeSelect and InjectPTXLDG32 (G);
// in split AnnotateEntryFunc, ThreadSync("shared.dyn"/"warp"), InferFragment,
// AnnotateDeviceRegions, MergeSharedMemoryAllocations (G) and
// BF16StorageLegalize; in finalize LowerBuiltin (the host code generator prints the packed-call
// builtins itself), LowerWarpMemory (G), LowerDeviceStorageAccessInfo and CombineContextCall.
// User passes of "tir.add_lower_pass" run at the four phase points (run.UserPhase). LoopPartition, HoistIfThenElse,
// InjectPrefetch and StatementCSE (the host build's CommonSubexprElimTIR, see statement_cse.cc) are
// validated on the host path only so far.
#include <cstdio>

#include "tessera/driver/tir_stages.h"
#include "tessera/ir/functor.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/support/error.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace lower {

// Above this many bytes of generated C, host code is compiled without optimisation.
constexpr size_t kLargeHostSourceBytes = 256 * 1024;

namespace {

// T.realize (BufferRealize) is TVM's pre-TensorIR storage realization, which TVM v0.23 itself no
// longer lowers: tessera parses, prints and transforms it, but no stage lowers it. Refuse it
// here, with its source location, rather than letting a later stage see a buffer that nothing
// allocates.
void RefuseBufferRealize(const IRModule& mod) {
  for (const auto& [gv, f] : mod->functions) {
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      if (auto* realize = AsPtr<BufferRealizeNode>(n)) {
        TESSERA_THROW_KIND(realize->span, ErrorKind::kBuild)
            << "function " << gv->name_hint << ": T.realize of buffer " << realize->buffer->name
            << " cannot be lowered (BufferRealize is TVM's pre-TensorIR form and no tessera pass "
               "lowers it); allocate the buffer with T.alloc_buffer instead";
      }
    });
  }
}

// A buffer index of a type other than an integer (a float: te's comm_reducer combiners may
// index with their accumulator) is kept in the IR, as TVM keeps it, but no element address can
// be computed from it (TVM's code generators refuse it too). Refuse it here with its location.
void RefuseNonIntegerIndices(const IRModule& mod) {
  for (const auto& [gv, f] : mod->functions) {
    auto check = [&](const Buffer& buffer, const std::vector<Expr>& indices, const Span& span,
                     const char* what) {
      for (size_t i = 0; i < indices.size(); ++i) {
        DataType t = indices[i]->dtype;
        if (t.is_integer()) continue;
        const Span& where = span.defined() ? span : indices[i]->span;
        TESSERA_THROW_KIND(where.defined() ? where : f->span, ErrorKind::kBuild)
            << "function " << gv->name_hint << ": " << what << " of buffer " << buffer->name
            << " has index " << i << " of type " << t.ToString()
            << "; a buffer index must be an integer (an element address cannot be computed "
               "from a "
            << t.ToString() << " value)";
      }
    };
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      if (auto* load = AsPtr<BufferLoadNode>(n)) {
        check(load->buffer, load->indices, load->span, "a load");
      } else if (auto* store = AsPtr<BufferStoreNode>(n)) {
        check(store->buffer, store->indices, store->span, "a store");
      }
    });
  }
}


// Whether a function of `mod` has a loop with a step (For.step).
bool HasSteppedLoop(const IRModule& mod) {
  bool found = false;
  for (const auto& [gv, f] : mod->functions) {
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      if (auto* loop = AsPtr<ForNode>(n)) found = found || loop->step != nullptr;
    });
  }
  return found;
}

}  // namespace

StageResult TirBeginStage(IRModule mod, LowerContext& ctx) {
  RefuseBufferRealize(mod);
  RefuseNonIntegerIndices(mod);
  PassRunner run(ctx, Stage::kBegin);
  transform::RefuseScalableVectors(mod, ctx.target.kind());
  mod = run(mod, transform::BindTarget(ctx.target.kind()));
  // A provably out-of-bounds access is an error before any code runs (parsing leaves the
  // flattened views of TVM's lowered form to this check).
  mod = run(mod, "tir.VerifyBufferBounds");
  // Functions that carry no schedule get the automatic one (autoschedule/auto_schedule.h).
  // On the host, their argmax / argmin rows first become one-pass row searches, and their topi
  // sorts a row sort call (only where the automatic schedule runs: hand schedules and CUDA keep
  // topi's blocks).
  const bool auto_schedule = ctx.pass_ctx.GetBool("tir.auto_schedule", ctx.auto_schedule);
  const bool host_auto =
      auto_schedule && !ctx.IsGpu() &&
      ctx.pass_ctx.PassEnabled("tir.AutoSchedule", transform::AutoSchedule()->opt_level);
  mod = run.If(host_auto, mod, "tir.ArgExtremeRows");
  mod = run.If(host_auto, mod, "tir.SortRows");
  mod = run.If(auto_schedule, mod, "tir.AutoSchedule");
  return {mod, false, nullptr};
}

StageResult TirNormalizeStage(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kNormalize);
  mod = run.UserPhase(0, mod);
  mod = run(mod, "tir.CanonicalizeLoop");
  // The passes below take unit-step loops only. With tir.CanonicalizeLoop disabled, TVM's code
  // generators print a loop's step; tessera's lowering has no stepped form after this point, so
  // a loop with a step is rewritten all the same (the code computes the same values).
  if (HasSteppedLoop(mod)) {
    mod = transform::PassRegistry::Get("tir.CanonicalizeLoop")->fn(mod, ctx.pass_ctx);
  }
  mod = run.If(ctx.IsGpu(), mod, "tir.LowerCrossThreadReduction");
  mod = run(mod, "tir.LowerInitBlock");
  mod = run(mod, "tir.PlanBufferAllocationDown");
  mod = run(mod, "tir.ConvertBlocksToOpaque");
  mod = run(mod, "tir.CompactBufferAllocation");
  mod = run.If(ctx.IsGpu(), mod, "tir.UnifySiblingThreads");
  mod = run(mod, "tir.LowerMatchBuffer");
  mod = run(mod, "tir.SkewSoftwarePipeline");
  mod = run(mod, "tir.Simplify");
  return {mod, false, nullptr};
}

StageResult TirFlattenStage(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kFlatten);
  mod = run(mod, transform::LowerOpaqueBlock(/*keep_loops=*/true));
  mod = run(mod, "tir.FlattenBuffer");
  mod = run.UserPhase(1, mod);
  return {mod, false, nullptr};
}

StageResult TirLoopStage(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kLoop);
  mod = run.If(!ctx.IsGpu(), mod, "tir.LoopPartition");
  mod = run(mod, "tir.SplitVectorizedLoops");
  mod = run(mod, "tir.VectorizeLoop");
  mod = run.If(!ctx.IsGpu(), mod, "tir.LegalizeVectorLanes");
  mod = run(mod, "tir.StorageRewrite");
  mod = run.If(!ctx.IsGpu(), mod, "tir.HoistIfThenElse");
  mod = run(mod, "tir.UnrollLoop");
  mod = run.If(!ctx.IsGpu(), mod, "tir.InjectPrefetch");
  mod = run.UserPhase(2, mod);
  return {mod, false, nullptr};
}

StageResult TirCleanupStage(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kCleanup);
  mod = run(mod, "tir.Simplify");
  mod = run(mod, "tir.RemoveNoOp");
  mod = run.If(ctx.IsGpu(), mod, "tir.InjectPTXAsyncCopy");
  mod = run.UserPhase(3, mod);
  mod = run(mod, "tir.InstrumentBoundCheckers");  // only with tir.instrument_bound_checkers
  mod = run.If(!ctx.IsGpu(), mod, "tir.StatementCSE");  // see statement_cse.cc
  mod = run.If(!ctx.IsGpu(), mod, "tir.HoistSharedVectorLoads");
  return {mod, false, nullptr};
}

StageResult TirSplitStage(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kSplit);
  mod = run.If(ctx.IsGpu(), mod, "tir.VerifyMemory");
  mod = run.If(ctx.IsGpu(), mod, transform::ThreadSync("shared"));
  mod = run.If(ctx.IsGpu(), mod, "tir.LowerBlockAllreduce");
  // What tessera's variant leaves (reductions of several values) gets TVM's lowering.
  mod = run.If(ctx.IsGpu(), mod, "tir.LowerThreadAllreduce");
  mod = run.If(ctx.IsGpu(), mod, "tir.SplitThreadKernels");
  mod = run(mod, "tir.SkipAssert");
  mod = run(mod, "tir.MakePackedAPI");
  mod = run.If(ctx.IsGpu(), mod, "tir.LowerKernelLaunchCalls");
  return {mod, false, nullptr};
}

StageResult TirFinalizeStage(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kFinalize);
  mod = run(mod, transform::LowerIntrin("c"));                  // host functions
  mod = run.If(!ctx.IsGpu(), mod, "tir.OutlineLargeBody");
  mod = run.If(ctx.IsGpu(), mod, transform::LowerIntrin("cuda"));  // device kernels
  mod = run.If(ctx.IsGpu(), mod, "tir.Simplify");
  return {mod, false, nullptr};
}

StageResult TirEndStage(IRModule mod, LowerContext& ctx) {
  if (ctx.built) runtime::LoadHostLibrary(ctx.built.get());
  return {mod, true, ctx.built};
}

std::shared_ptr<runtime::ModuleNode> CompileHostLibrary(IRModule mod, const HostSource& src,
                                                        const std::string& target,
                                                        LowerContext& ctx) {
  auto built = std::make_shared<runtime::ModuleNode>();
  built->target = target;
  built->ir = mod;
  built->source =
      src.code.substr(0, src.code.find("\nTESSERA_EXPORT const char " TESSERA_MODULE_INFO_SYMBOL));
  runtime::ParseModuleInfo(src.metadata, built.get());
  char dump_name[64];
  std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen.c", ++ctx.pass_counter);
  DumpText(ctx, dump_name, src.code);
  for (size_t i = 0; i < src.units.size(); ++i) {
    std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen_unit%zu.c", ctx.pass_counter, i);
    DumpText(ctx, dump_name, src.units[i].code);
  }
  std::vector<std::string> flags = DefaultHostCompileFlags(ctx.include_dir, src.uses_openmp);
  // The C compiler's optimiser is superlinear in the size of a function (a 440 KB function took
  // 6.9 s at -O2 and 0.9 s at -O0). A large source comes split into compilation units
  // (src.units), compiled in parallel at -O2, except a unit holding a function larger than
  // kLargeHostSourceBytes (a packed entry checking thousands of arguments), compiled at -O0
  // so that build time stays linear in program size. A large source that could not be split
  // (one function) is compiled at -O0 as a whole.
  auto at_o0 = [](std::vector<std::string> f) {
    for (std::string& x : f) {
      if (x == "-O2") x = "-O0";
    }
    return f;
  };
  std::vector<std::string> extra = ExtraCompilerOptions(ctx);
  auto with_extra = [&extra](std::vector<std::string> f) {
    f.insert(f.end(), extra.begin(), extra.end());
    return f;
  };
  std::vector<CompileUnit> units;
  for (const HostUnit& u : src.units) {
    units.push_back(
        {u.code, with_extra(u.largest_function > kLargeHostSourceBytes ? at_o0(flags) : flags)});
  }
  if (units.empty() && built->source.size() > kLargeHostSourceBytes) flags = at_o0(flags);
  flags = with_extra(flags);
  built->compile_command = flags;
  built->compile_command.insert(built->compile_command.begin(), FindHostCompiler());
  built->lib_path =
      CompileSharedLibraryUnits(src.code, units, flags, ctx.cache_dir,
                                ShippedHeaderText(ctx, {"runtime.h", "runtime_abi.h"}));
  return built;
}

StageTable TirStageTable(StageFn codegen) {
  return {
      {Stage::kBegin, "begin", TirBeginStage},
      {Stage::kNormalize, "normalize", TirNormalizeStage},
      {Stage::kFlatten, "flatten", TirFlattenStage},
      {Stage::kLoop, "loop", TirLoopStage},
      {Stage::kCleanup, "cleanup", TirCleanupStage},
      {Stage::kSplit, "split", TirSplitStage},
      {Stage::kFinalize, "finalize", TirFinalizeStage},
      {Stage::kCodegen, "codegen", codegen},
      {Stage::kEnd, "end", TirEndStage},
  };
}

}  // namespace lower
}  // namespace tessera
