// The TensorIR stages shared by the host ("c", "llvm") and CUDA targets: one pass order for both,
// with the GPU-only (G) passes chosen by ctx.IsGpu() (lowering-stages.md §5.1).
#pragma once

#include <memory>

#include "tessera/driver/stage.h"
#include "tessera/target/codegen_host.h"

namespace tessera {
namespace lower {

StageResult TirBeginStage(IRModule mod, LowerContext& ctx);
StageResult TirNormalizeStage(IRModule mod, LowerContext& ctx);
StageResult TirFlattenStage(IRModule mod, LowerContext& ctx);
StageResult TirLoopStage(IRModule mod, LowerContext& ctx);
StageResult TirCleanupStage(IRModule mod, LowerContext& ctx);
StageResult TirSplitStage(IRModule mod, LowerContext& ctx);
StageResult TirFinalizeStage(IRModule mod, LowerContext& ctx);
/*! \brief Loads the library the codegen stage built (a CUDA build touches no GPU here: kernels
 *  are loaded into a device on their first launch). */
StageResult TirEndStage(IRModule mod, LowerContext& ctx);

/*! \brief The runtime module of a host library: `src` (host C) dumped and compiled with the
 *  shipped runtime headers and the user's compiler options; `target` names the module. */
std::shared_ptr<runtime::ModuleNode> CompileHostLibrary(IRModule mod, const HostSource& src,
                                                        const std::string& target,
                                                        LowerContext& ctx);

/*! \brief The stage table of a TensorIR target: the shared stages, `codegen`, then the end. */
StageTable TirStageTable(StageFn codegen);

}  // namespace lower
}  // namespace tessera
