// Staged lowering: stages per target, the pass runner (timing, dumps) and StageLowerer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/ir/dsl_target.h"
#include "tessera/ir/target.h"
#include "tessera/runtime/module.h"
#include "tessera/transform/pass.h"

namespace tessera {
namespace lower {

/*! \brief Lowering stages, in execution order. A target uses a subsequence. */
enum class Stage : int {
  kNone = -1,  ///< Nothing has run yet.
  kBegin = 0,  ///< Target bound; DSL front-end normalisation.
  kNormalize,  ///< Schedulable TensorIR becomes opaque blocks; allocations placed.
  kFlatten,    ///< Blocks removed; buffers flattened to 1-D.
  kLoop,       ///< Loop transformations: partition, vectorize, storage reuse, unroll.
  kCleanup,    ///< Simplification and CSE on flat IR.
  kLegalize,   ///< Vector DSL only: widths, masks and intrinsics made native.
  kSplit,      ///< Host/device split and the packed calling convention.
  kFinalize,   ///< Builtin and intrinsic lowering, separately for host and device code.
  kCodegen,    ///< Source emission and compilation.
  kEnd,        ///< The runtime module exists.
};
const char* StageName(Stage s);
/*! \brief "flatten" -> Stage::kFlatten; unknown names throw listing the stage names. */
Stage ParseStage(const std::string& name);

/*! \brief One timed pass run. */
struct PassTiming {
  std::string stage, pass;
  double seconds = 0;
  bool changed = false, skipped = false;
};

/*! \brief What stages and passes see: target, pass context, DSL target, timings, dump state. */
struct LowerContext {
  /*! \brief Whether the target runs kernels on a GPU (selects the (G) passes). */
  bool IsGpu() const { return target.IsGpu(); }
  Target target;  // parsed once: its kind ("dsl", "c", "llvm", "cuda") names the stage table
  transform::PassContext pass_ctx;
  const DSLTargetDesc* dsl_target = nullptr;
  std::string entry;           // name of the entry function
  std::string include_dir;     // where the shipped C headers live
  std::string cache_dir;       // build cache root
  std::vector<PassTiming> timings;
  std::string dump_dir;        // empty: no dumps
  int pass_counter = 0;
  /*! \brief Run tir.AutoSchedule in the begin stage (ts.build: yes; ts.lower: on request);
   *  the config "tir.auto_schedule" overrides it. */
  bool auto_schedule = false;
  runtime::Module built;
};

struct StageResult {
  IRModule mod;
  bool done = false;
  runtime::Module built;
};
using StageFn = StageResult (*)(IRModule mod, LowerContext& ctx);
struct StageEntry {
  Stage stage;
  const char* name;
  StageFn fn;
};
using StageTable = std::vector<StageEntry>;

/*! \brief Per-target stage tables. Register checks the table (starts with begin, ends with end,
 *  strictly increasing); a bad or duplicate registration is an InternalError. */
class StageRegistry {
 public:
  static void Register(const std::string& target, StageTable (*make)());
  static const StageTable& Get(const std::string& target);
};

#define TESSERA_STAGE_CONCAT_(a, b) a##b
#define TESSERA_STAGE_CONCAT(a, b) TESSERA_STAGE_CONCAT_(a, b)
#define TESSERA_REGISTER_STAGES(target, make)                                  \
  static const bool TESSERA_STAGE_CONCAT(__tessera_stages_, __COUNTER__) =    \
      (::tessera::lower::StageRegistry::Register(target, make), true)

/*! \brief Runs passes by name inside a stage: skips, times, detects change, dumps. */
class PassRunner {
 public:
  PassRunner(LowerContext& ctx, Stage stage) : ctx_(ctx), stage_(stage) {}
  IRModule operator()(IRModule mod, const std::string& pass_name);
  /*! \brief Run a pass object whose arguments the stage bound (BindTarget(target)). */
  IRModule operator()(IRModule mod, const transform::Pass& pass);
  IRModule If(bool cond, IRModule mod, const std::string& pass_name) {
    return cond ? (*this)(std::move(mod), pass_name) : mod;
  }
  IRModule If(bool cond, IRModule mod, const transform::Pass& pass) {
    return cond ? (*this)(std::move(mod), pass) : mod;
  }
  /*! \brief Run the user passes of "tir.add_lower_pass" registered for `phase` (0-3). */
  IRModule UserPhase(int phase, IRModule mod);

 private:
  LowerContext& ctx_;
  Stage stage_;
};

/*! \brief Write `text` as dump file number `index` named `name` (no-op without a dump dir). */
void DumpText(LowerContext& ctx, const std::string& name, const std::string& text);

/*! \brief The user's extra C compiler flags (config "tessera.cc_options"), split at spaces. */
std::vector<std::string> ExtraCompilerOptions(const LowerContext& ctx);
/*! \brief The concatenated text of shipped headers (ctx.include_dir/tessera/<name>), which the
 *  build cache must key on because the compiled code includes them. */
std::string ShippedHeaderText(const LowerContext& ctx, const std::vector<std::string>& names);

/*! \brief Lowers a module stage by stage; can stop after a stage and resume. */
class StageLowerer {
 public:
  StageLowerer(IRModule mod, LowerContext ctx);
  /*! \brief Run every stage after the current one up to and including `stage`. */
  void RunTo(Stage stage);
  Stage current_stage() const { return current_; }
  IRModule Module() const { return mod_; }
  void SetModule(IRModule mod);
  runtime::Module Result() const { return ctx_.built; }
  const LowerContext& context() const { return ctx_; }
  /*! \brief The timing table (sorted by time) as text. */
  std::string TimingReport() const;

 private:
  IRModule mod_;
  LowerContext ctx_;
  Stage current_ = Stage::kNone;
};

}  // namespace lower
}  // namespace tessera
