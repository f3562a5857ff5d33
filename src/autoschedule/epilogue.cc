// Rule "epilogue": the elementwise consumer of a tiled block (bias, activation) is computed at
// the tile, reading the tile where it sits, instead of in a second pass over memory.
#include "rules.h"

namespace tessera {
namespace autoschedule {

BlockRV AttachEpilogue(Schedule& sch, const BlockRV& write_back, const LoopRV& tile_loop,
                       const PrimFunc& func, const TargetFacts& facts) {
  BlockRV at_tile = write_back;
  BlockInfo wb = AnalyzeBlock(sch, write_back, func);
  if (!wb.writes_param) {
    std::vector<BlockRV> consumers = sch.GetConsumers(write_back);
    if (consumers.size() == 1) {
      BlockInfo epi = AnalyzeBlock(sch, consumers[0], func);
      // The copy out of the tile disappears into the epilogue, which then reads the tile.
      // (Not into a re-indexing reader, an interleave reading `y // 2`: the tile's region in
      // its terms would be the whole buffer.)
      if (!epi.is_reduction && epi.store != nullptr && !ReadsDivided(epi) &&
          Try(sch, [&] { sch.ComputeInline(write_back); })) {
        at_tile = consumers[0];
      }
    }
  }
  sch.ReverseComputeAt(at_tile, tile_loop, true, -1);
  if (!facts.IsGpu()) {
    std::vector<LoopRV> loops = sch.GetLoops(at_tile);
    Try(sch, [&] { sch.Vectorize(loops.back()); });
  }
  return at_tile;
}

}  // namespace autoschedule
}  // namespace tessera
