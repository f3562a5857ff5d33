// The buffer regions a TensorIR block reads and writes, inferred from its accesses.
#pragma once

#include <utility>
#include <vector>

#include "tessera/ir/stmt.h"

namespace tessera {

/*!
 * \brief The regions `block` reads and writes (in order of first access), over its iterators.
 *
 * Accesses in `init` and `body` count; loops inside the block are relaxed over their ranges;
 * nested blocks contribute their declared regions with their iterators replaced by their
 * bindings; an access to one of the block's match_buffers counts as its source region. Buffers
 * allocated inside the block are left out. Per dimension, a region is [lo, hi] when the bounds
 * of all accesses share one symbolic part (e.g. `vi * 16 + 0 ... vi * 16 + 15`), else the whole
 * dimension. As in TVM, a block with an `init` statement (a reduction) does not list the buffers
 * it writes among its reads.
 */
std::pair<std::vector<BufferRegion>, std::vector<BufferRegion>> InferBlockAccessRegions(
    const BlockNode* block);

}  // namespace tessera
