// Analyses of index maps: equivalence, inverse, and the layout a buffer access suggests
// (TVM's IndexMap.is_equivalent_to / IndexMap.inverse / tir.schedule.SuggestIndexMap).
#pragma once

#include <optional>
#include <utility>
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

/*! \brief The extents of the final indices of `map` over the input domain [0, shape) (TVM's
 *  IndexMap.map_shape): lambda i: (i // 4, i % 4) over [14] gives [4, 4]. The sizes take the
 *  widest integer type of the shape and the results. Over a symbolic extent E, a map that splits
 *  the index gives the outermost split ceildiv(E, factor), written (E - E % -factor) // factor. */
std::vector<Expr> MapShape(const IndexMap& map, const std::vector<Expr>& shape);

/*!
 * \brief The inverse of `map` over [0, shape) when the map may produce indices no input reaches
 *  (padding), and the predicate, over the inverse's inputs, that is true exactly on that padding
 *  (TVM's IndexMap.non_surjective_inverse). An input used as `i + c` is padded by c on the left;
 *  the padded inputs must map bijectively onto the shape MapShape gives. Over a symbolic extent
 *  E split by factor F the padding is E % -F != 0 && o == E // F && r >= E % F.
 *
 *    lambda i: ((i + 1) // 4, (i + 1) % 4) over [14]
 *    -> lambda i0, i1: (i0 * 4 + i1 - 1,), padding i0 == 0 && i1 < 1 || i0 == 3 && i1 == 3
 */
std::pair<IndexMap, Expr> NonSurjectiveInverse(const IndexMap& map,
                                               const std::vector<Expr>& shape);

/*! \brief For each element of a row-major array of `shape`, in order, the row-major offset of
 *  its mapped position in an array of the shape `map` produces (stored in `out_shape`): the
 *  permutation behind IndexMap.map_tensor. */
std::vector<int64_t> MapIndexOffsets(const IndexMap& map, const std::vector<int64_t>& shape,
                                     std::vector<int64_t>* out_shape);

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
