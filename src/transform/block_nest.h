// A root block of the form te.create_prim_func gives, before any schedule: serial loops from 0,
// one per iterator in order, around one block that binds each iterator to its loop. Shared by
// the host passes that recognize topi's computations by their structure (tir.ArgExtremeRows,
// tir.SortRows).
#pragma once
#include <optional>
#include <vector>

#include "tessera/ir/stmt.h"

namespace tessera {
namespace transform {

struct BlockNest {
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = nullptr;
  const BlockNode* block = nullptr;
};

/*! \brief `s` as such a nest (constant extents equal to the iterators' domains, no predicate,
 *  no allocation or match buffer in the block), or nothing. */
std::optional<BlockNest> AsBlockNest(const Stmt& s);

}  // namespace transform
}  // namespace tessera
