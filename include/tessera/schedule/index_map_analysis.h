// Analyses of index maps: equivalence, inverse, and the layout a buffer access suggests
// (TVM's IndexMap.is_equivalent_to / IndexMap.inverse / tir.schedule.SuggestIndexMap).
#pragma once

#include <optional>
#include <vector>

#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"
#include "tessera/schedule/index_map.h"
#include "tessera/schedule/state.h"

namespace tessera {
namespace schedule {

/*! \brief Whether `b` maps every index to values provably equal to `a`'s. */
bool IndexMapsEquivalent(const IndexMap& a, const IndexMap& b);

/*! \brief The inverse of `map` over the input domain [0, shape); throws a value error unless the
 *  map is a bijective fuse/split pattern over it. */
IndexMap InverseIndexMap(const IndexMap& map, const std::vector<Expr>& shape);

/*!
 * \brief The layout of `buffer` under which the access `buffer[indices]` inside `loops` walks
 *  the buffer in the order of the loops: the flattened access is written as splits of the loop
 *  variables, and the map cuts the flattened buffer into those splits, ordered by loop (outer
 *  split first). nullopt when the access is not such an affine pattern. `predicate` is not
 *  used (the iterator analysis has none).
 *
 *    buffer (8, 256), indices [(i//16)*4 + j//16, (i%16)*16 + j%16], i < 32, j < 64
 *    -> lambda i0, i1: (i0 // 4, i1 // 16, i0 % 4, i1 % 16)
 */
std::optional<IndexMap> SuggestIndexMap(const Buffer& buffer, const std::vector<Expr>& indices,
                                        const std::vector<For>& loops, const Expr& predicate);

}  // namespace schedule
}  // namespace tessera

namespace tessera {
namespace schedule {

/*! \brief How a block's iterators map onto a tensor intrinsic's (TVM's
 *  AutoTensorizeMappingInfo): the block computes what the description does up to buffer
 *  indices; `mappings` (at most one) fuses the block iterators that index the same buffers as
 *  one description iterator, in block order, the unmatched ones first. */
struct AutoTensorizeMappingInfo {
  std::vector<IndexMap> mappings;
  std::vector<std::pair<Buffer, Buffer>> lhs_buffer_map;  // (block buffer, description buffer)
  std::vector<std::pair<Buffer, std::vector<Expr>>> rhs_buffer_indices;
  std::vector<IterVar> lhs_iters, rhs_iters;
};

/*! \brief The mapping of `block` onto the description `desc`, or nullopt when the block does
 *  not compute the same expression tree (same operations, buffer dtypes, constants) or no
 *  unique fusion exists. */
std::optional<AutoTensorizeMappingInfo> GetAutoTensorizeMappingInfo(const ScheduleState& state,
                                                                    const StmtSRefNode* block,
                                                                    const PrimFunc& desc);

}  // namespace schedule
}  // namespace tessera
