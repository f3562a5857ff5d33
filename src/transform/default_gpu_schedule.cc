// tir.DefaultGPUSchedule: the simplest schedule that makes each function of a GPU target run on
// the GPU. In every function not yet marked "tir.is_scheduled" whose target (its "target"
// attribute, else the current target) is a GPU, each innermost block (one without child blocks)
// whose loops are not bound to threads gets its data-parallel loops fused into one loop, which
// is split and bound:
//  - at most 256 x max_num_threads iterations: [blockIdx.x, threadIdx.x of
//    min(extent, max_num_threads)];
//  - more (or an extent not known): [serial, blockIdx.x of 256, threadIdx.x of max_num_threads],
//    reordered so that the serial loop is innermost.
// A block without data-parallel loops gets a unit loop to bind. Every function of the module
// is then marked "tir.is_scheduled".
#include <algorithm>
#include <limits>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/schedule/schedule.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr int64_t kMaxThreadBlocks = 256;

bool IsGpuKind(const std::string& kind) {
  static const std::unordered_set<std::string> kGpu = {"cuda",   "nvptx",  "metal", "rocm",
                                                       "vulkan", "opencl", "webgpu"};
  return kGpu.count(kind) > 0;
}

// The names of the blocks of `body`, children before their parent (the root block excluded).
class BlockNameCollector : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;
  std::vector<std::string> names;
  void VisitStmt_(const BlockNode* op) override {
    StmtVisitor::VisitStmt_(op);
    if (depth_++ > 0 || op->name_hint != "root") names.push_back(op->name_hint);
  }

 private:
  int depth_ = 0;
};

void ThreadBind(schedule::Schedule& sch, const schedule::BlockRV& block,
                int64_t max_threads_per_block) {
  std::vector<schedule::LoopRV> loops = sch.GetLoops(block);
  for (const schedule::LoopRV& loop : loops) {
    auto* f = AsPtr<ForNode>(sch.Get(loop));
    if (f->for_kind == ForKind::kThreadBinding) return;  // already bound
  }
  auto* b = AsPtr<BlockNode>(sch.Get(block));
  const std::vector<IterVar>& iters = b->iter_vars;
  if (loops.size() != iters.size() && !(loops.empty() && iters.size() == 1)) {
    TESSERA_THROW_KIND(b->span, ErrorKind::kSchedule)
        << "tir.DefaultGPUSchedule: block " << b->name_hint << " has " << iters.size()
        << " iteration variables but " << loops.size()
        << " loops around it; it needs one loop per variable";
  }
  std::vector<schedule::LoopRV> parallel;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (iters[i]->iter_type == IterVarType::kDataPar) parallel.push_back(loops[i]);
  }
  if (parallel.empty()) {
    parallel.push_back(loops.empty() ? sch.AddUnitLoop(block) : sch.AddUnitLoop(loops[0]));
  }
  schedule::LoopRV fused = sch.Fuse(parallel, /*preserve_unit_iters=*/false);
  int64_t product = std::numeric_limits<int64_t>::max();
  if (auto* extent = AsPtr<IntImmNode>(AsPtr<ForNode>(sch.Get(fused))->extent)) {
    product = extent->value;
  }
  using schedule::TraceValue;
  if (product > max_threads_per_block * kMaxThreadBlocks) {
    std::vector<schedule::LoopRV> splits =
        sch.Split(fused,
                  {TraceValue::None(), TraceValue::Int(kMaxThreadBlocks),
                   TraceValue::Int(max_threads_per_block)},
                  /*preserve_unit_iters=*/true, /*disable_predication=*/false);
    sch.Reorder({splits[1], splits[2], splits[0]});
    sch.Bind(splits[1], "blockIdx.x");
    sch.Bind(splits[2], "threadIdx.x");
  } else {
    std::vector<schedule::LoopRV> splits = sch.Split(
        fused, {TraceValue::None(), TraceValue::Int(std::min(product, max_threads_per_block))},
        /*preserve_unit_iters=*/true, /*disable_predication=*/false);
    sch.Bind(splits[0], "blockIdx.x");
    sch.Bind(splits[1], "threadIdx.x");
  }
}

IRModule DefaultGPUScheduleModule(const IRModule& mod, const ObjectRef& current_target) {
  schedule::Schedule sch(mod, 0, schedule::ErrorRenderLevel::kDetail, true, -1);
  for (const auto& [gv, f] : mod->functions) {
    if (f->GetIntAttr("tir.is_scheduled", 0) != 0) continue;
    auto it = f->attrs.find("target");
    ObjectRef target = it != f->attrs.end() ? it->second : current_target;
    if (target && !IsGpuKind(TargetKindOf(target))) continue;
    if (!target) {
      TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
          << "tir.DefaultGPUSchedule: function " << gv->name_hint
          << " has no \"target\" attribute and no target is current (`with Target(\"cuda\"):`)";
    }
    auto* t = AsPtr<MapNode>(target);
    auto mt = t->items.find("max_num_threads");
    auto* max_threads = mt == t->items.end() ? nullptr : AsPtr<IntImmNode>(mt->second);
    if (!max_threads || max_threads->value <= 0) {
      TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
          << "tir.DefaultGPUSchedule: the target of " << gv->name_hint
          << " does not set max_num_threads";
    }
    sch.WorkOn(gv->name_hint);
    BlockNameCollector collect;
    collect.VisitStmt(sch.mod()->Lookup(gv->name_hint)->body);
    for (const std::string& name : collect.names) {
      schedule::BlockRV block = sch.GetBlock(name, gv->name_hint);
      if (!sch.GetChildBlocks(block).empty()) continue;
      ThreadBind(sch, block, max_threads->value);
    }
  }
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  for (const auto& [gv, f] : sch.mod()->functions) {
    out.emplace_back(gv, f->WithAttr("tir.is_scheduled", Bool(true)));
  }
  return IRModuleNode::Make(std::move(out), sch.mod()->attrs);
}

}  // namespace

Pass DefaultGPUSchedule(ObjectRef current_target) {
  return CreateModulePass(
      [current_target](IRModule mod, const PassContext&) {
        return DefaultGPUScheduleModule(mod, current_target);
      },
      0, "tir.DefaultGPUSchedule");
}

}  // namespace transform
}  // namespace tessera
