// The host's row sort: the C functions "tessera_sort_row_<order>_<dtype>_<outputs>" that the pass
// tir.SortRows calls in place of topi.sort / argsort / topk's rank-and-gather blocks over the
// last axis; defined by the host code generator once per module that calls them.
#pragma once

#include <optional>
#include <string>

#include "tessera/transform/sort_row_names.h"

namespace tessera {
namespace codegen {

/*! \brief The C definition of
 *    `int32_t NAME(const void* row, int64_t n, [void* values,] [void* indices,] int64_t k, T last)`
 *  (row: n elements of T; values: k of T, indices: k of the index type): the first k positions of
 *  the row's stable order - ascending or descending values, equal values in index order, -0.0
 *  equal to +0.0, NaN after every number in both orders (numpy's np.sort puts NaN last) - as
 *  values (the row's own elements, so a -0.0 stays -0.0) and indices; returns 0. `last` is
 *  row[n - 1], unused: the call passes it so that its block's read region is the whole row.
 *  Each element becomes an unsigned key whose order is the wanted one (the sign bit flipped for
 *  signed integers; for floats, the bits with the sign flipped or all bits inverted, +0.0 for
 *  -0.0, the highest key for NaN; inverted again for descending), held with its index, so that
 *  plain comparisons give the stable order. k * 8 < n: one pass keeping the k best in a sorted
 *  buffer (an element no better than the k-th is skipped with one comparison). Else a merge
 *  sort. Types of up to 32 bits: 64-bit words key << 32 | index computed by a loop that
 *  vectorizes, the row padded to a multiple of 128 with the highest word; each 128 as 16 vectors
 *  of 8 words, Batcher's odd-even merge network of 16 across the vectors (lane-wise minimum and
 *  maximum, GCC vector extensions) sorting the 8 columns, stored transposed as runs of 16; then
 *  branch-free merges, runs of the same length merged from both ends at once (two independent
 *  chains). 64-bit types: (key, index) pairs, runs of 16 by insertion, then the same merges.
 *  Scratch on the stack up to 1024 elements, malloc'ed beyond. */
std::string SortRowSource(const std::string& name, const SortRow& row);

}  // namespace codegen
}  // namespace tessera
