// Rule "inline": elementwise producers disappear into their consumers, so that a chain of
// elementwise operators reads its inputs once and writes its output once.
#include "rules.h"

namespace tessera {
namespace autoschedule {

namespace {

constexpr int64_t kPoolWindowMax = 64;  // points of a pool's window (reduction.cc's kWindowMax)

/*! \brief Padding whose only consumer is a pool over a small window of it (a reduction of at
 *  most kPoolWindowMax points that reads nothing else) and whose condition does not depend on
 *  its innermost iterator (NCHWc's channels of a block): inlined, each window point is one
 *  select of a whole vector on a test of the row and column, where the copy of the window into
 *  a padded buffer and back cost more than the pool (max 3 x 3 / 3 ceil_mode over (1, 16, 31,
 *  31, 8) float32, one thread: 0.024 ms copied, 0.011 inlined, TVM's default 0.020). */
bool PaddingOfAPool(Schedule& sch, const BlockInfo& info, const std::vector<BlockRV>& consumers,
                    const PrimFunc& func) {
  if (consumers.size() != 1 || info.store == nullptr || info.block->iter_vars.empty()) return false;
  BlockInfo pool = AnalyzeBlock(sch, consumers[0], func);
  if (!pool.is_reduction || pool.block == nullptr || pool.loads.empty()) return false;
  for (const BufferLoadNode* load : pool.loads) {
    if (load->buffer.get() != info.store->buffer.get()) return false;
  }
  int64_t window = 1;
  for (size_t k = 0; k < pool.block->iter_vars.size(); ++k) {
    if (pool.block->iter_vars[k]->iter_type != IterVarType::kCommReduce) continue;
    if (pool.extents[k] < 1) return false;
    window *= pool.extents[k];
  }
  if (window > kPoolWindowMax) return false;
  const VarNode* last = info.block->iter_vars.back()->var.get();
  bool lane_test = false;
  PostOrderVisit(info.store->value, [&](const ObjectRef& n) {
    if (auto* call = AsPtr<CallNode>(n)) {
      if (call->is_op("tir.if_then_else") && !call->args.empty()) {
        lane_test |= UsesVar(call->args[0], last);
      }
    } else if (auto* sel = AsPtr<SelectNode>(n)) {
      lane_test |= UsesVar(sel->condition, last);
    }
  });
  return !lane_test;
}

}  // namespace

void InlineElementwise(Schedule& sch, const PrimFunc& func, const TargetFacts& facts) {
  BlockRV root = sch.GetBlock("root", std::nullopt);
  bool changed = true;
  while (changed) {
    changed = false;
    for (const BlockRV& rv : sch.GetChildBlocks(root)) {
      if (!sch.IsValid(rv)) continue;
      BlockInfo info = AnalyzeBlock(sch, rv, func);
      if (info.block == nullptr || info.store == nullptr || info.is_reduction) continue;
      if (info.writes_param) continue;  // an output stays
      bool spatial = true;
      for (const IterVar& iv : info.block->iter_vars) {
        spatial = spatial && iv->iter_type == IterVarType::kDataPar;
      }
      if (!spatial) continue;
      std::vector<BlockRV> consumers = sch.GetConsumers(rv);
      if (consumers.empty()) continue;
      bool into_reduction = false;
      for (const BlockRV& c : consumers) {
        into_reduction = into_reduction || AnalyzeBlock(sch, c, func).is_reduction;
      }
      // Padding read by a reduction would put a branch into its inner loop: it stays a copy.
      if (info.has_select && into_reduction &&
          (facts.IsGpu() || !PaddingOfAPool(sch, info, consumers, func))) {
        continue;
      }
      // So does a re-layout (a read indexed by floordiv / floormod of its iterators: a
      // transposed convolution's kernel taps per output phase): inlined, the divisions would
      // be computed by every read of the reduction's inner loop.
      if (into_reduction && ReadsDivided(info)) continue;
      // An expensive value read by several consumers would be computed several times.
      if (info.has_call && consumers.size() > 1) continue;
      // Go on with the next block rather than start over: one pass per round stays linear.
      if (Try(sch, [&] { sch.ComputeInline(rv); })) changed = true;
    }
  }
}

}  // namespace autoschedule
}  // namespace tessera
