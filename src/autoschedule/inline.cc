// Rule "inline": elementwise producers disappear into their consumers, so that a chain of
// elementwise operators reads its inputs once and writes its output once.
#include "rules.h"

namespace tessera {
namespace autoschedule {

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
      if (info.has_select && into_reduction) continue;
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
