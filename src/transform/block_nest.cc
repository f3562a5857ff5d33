// See block_nest.h.
#include "block_nest.h"

#include "tessera/ir/ir_utils.h"

namespace tessera {
namespace transform {

std::optional<BlockNest> AsBlockNest(const Stmt& s) {
  BlockNest nest;
  Stmt at = s;
  while (auto* loop = AsPtr<ForNode>(at)) {
    if (loop->for_kind != ForKind::kSerial || !loop->annotations.empty() ||
        !loop->HasTrivialStep() || !IsConstInt(loop->min, 0)) {
      return std::nullopt;
    }
    nest.loops.push_back(loop);
    at = loop->body;
  }
  nest.realize = AsPtr<BlockRealizeNode>(at);
  if (!nest.realize) return std::nullopt;
  nest.block = nest.realize->block.get();
  const BlockNode* b = nest.block;
  if (b->iter_vars.size() != nest.loops.size() || !b->alloc_buffers.empty() ||
      !b->match_buffers.empty() || !IsConstInt(nest.realize->predicate, 1)) {
    return std::nullopt;
  }
  for (size_t i = 0; i < nest.loops.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (nest.realize->iter_values[i].get() != nest.loops[i]->loop_var.get() || !iv->dom ||
        !IsConstInt(iv->dom->min, 0) || !AsConstInt(iv->dom->extent) ||
        !AsConstInt(nest.loops[i]->extent) ||
        *AsConstInt(iv->dom->extent) != *AsConstInt(nest.loops[i]->extent)) {
      return std::nullopt;
    }
  }
  return nest;
}

}  // namespace transform
}  // namespace tessera
