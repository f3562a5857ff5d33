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
 *  -0.0, the highest key for NaN; inverted again for descending). k * 8 < n: one pass keeping
 *  the k best in a sorted buffer (an element no better than the k-th is skipped with one
 *  comparison). Else a sorting network on words of 16, 32 or 64 bits, the narrowest that holds
 *  one element, chosen at run time: the key alone when only the values are wanted (an integer
 *  row's keys of 16 bits and more less its smallest, so that a row of keys within 2^16 of each
 * other sorts as 16-bit words, whatever the type; a float row's NaN and -0.0 are put back from the
 * row afterwards, in the row's order), else key << b | index (b: the bits of n - 1), which makes
 *  the words distinct and the order stable. With AVX-512 (F, BW, DQ): the words, in 64-byte
 *  vectors (GCC vector extensions, AVX-512 minimum and maximum), are sorted in blocks
 *  of up to 16 vectors in registers - Batcher's odd-even merge network across the vectors,
 *  then bitonic merges with lane permutes, then a transpose - and the blocks merged a vector
 *  at a time (bitonic merges of two vectors). The keys and the outputs are converted a vector
 *  at a time. Without AVX-512, and for 64-bit keys with indices whose words would pass 64
 *  bits: a merge sort - types of up to 32 bits as words key << 32 | index, 16-input networks
 *  across 8-lane vectors then branch-free merges; 64-bit types as (key, index) pairs, runs of
 *  16 by insertion, then the same merges. Scratch on the stack up to 8 KiB (the network) or 1024
 *  elements (the merge sort), malloc'ed beyond. */
std::string SortRowSource(const std::string& name, const SortRow& row);

}  // namespace codegen
}  // namespace tessera
