// The TensorIR stages shared by the host ("c", "llvm") and CUDA targets: one pass order for both,
// with the GPU-only (G) passes chosen by ctx.IsGpu() (lowering-stages.md §5.1).
#pragma once

#include "tessera/transform/stage.h"

namespace tessera {
namespace lower {

StageResult TirBeginStage(IRModule mod, LowerContext& ctx);
StageResult TirNormalizeStage(IRModule mod, LowerContext& ctx);
StageResult TirFlattenStage(IRModule mod, LowerContext& ctx);
StageResult TirLoopStage(IRModule mod, LowerContext& ctx);
StageResult TirCleanupStage(IRModule mod, LowerContext& ctx);
StageResult TirSplitStage(IRModule mod, LowerContext& ctx);
StageResult TirFinalizeStage(IRModule mod, LowerContext& ctx);

}  // namespace lower
}  // namespace tessera
