// The host CPU's stage table ("c", and "llvm" as its alias): the shared TensorIR stages
// (pipeline_tir.cc) followed by CodeGenHost and the system C compiler.
#include <cstdint>
#include <cstdio>

#include "tessera/driver/stage.h"
#include "tessera/driver/tir_stages.h"
#include "tessera/runtime/dso_module.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/target/codegen_host.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace lower {
namespace {

StageResult HostCodegen(IRModule mod, LowerContext& ctx) {
  int64_t split =
      ctx.pass_ctx.GetInt("tessera.host_split_bytes", static_cast<int64_t>(kHostSplitBytes));
  // 0 (or less) keeps every program one file.
  size_t split_bytes = split <= 0 ? SIZE_MAX : static_cast<size_t>(split);
  return {mod, false,
          CompileHostLibrary(mod, CodeGenHost(mod, split_bytes), ctx.target.kind(), ctx)};
}

/*! \brief Stages of the host C target, in execution order. */
StageTable HostCStages() { return TirStageTable(HostCodegen); }

}  // namespace

TESSERA_REGISTER_STAGES("c", HostCStages);
TESSERA_REGISTER_STAGES("llvm", HostCStages);  // alias of the host target

}  // namespace lower
}  // namespace tessera
