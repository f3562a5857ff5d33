// The buffer regions a TensorIR block reads and writes, inferred from its accesses.
#pragma once

#include <unordered_map>
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

/*! \brief Buffers by their data variable: the buffers an access analysis may report. */
using BufferVarMap = std::unordered_map<const VarNode*, Buffer>;

/*! \brief What a block reads, writes and accesses opaquely (through its data pointer). */
struct BlockAccessRegions {
  std::vector<BufferRegion> reads, writes, opaques;
};

/*!
 * \brief TVM's tir.analysis.get_block_access_region: the regions `block` accesses among the
 * buffers of `buffer_var_map` (an allocated buffer counts when the map holds it; a match_buffer
 * counts as its source). A use of a buffer's data variable other than a load or store (an
 * extern call's argument, a read-and-write tvm_access_ptr) is an opaque access of all of it;
 * let-bound variables in indices are replaced by their values. With `opaque_as_read_write`
 * (get_block_read_write_region) opaque buffers are left out of the reads and writes found
 * otherwise, and appended to both, and `opaques` is empty.
 */
BlockAccessRegions GetBlockAccessRegion(const BlockNode* block, const BufferVarMap& buffer_var_map,
                                        bool opaque_as_read_write);

}  // namespace tessera
