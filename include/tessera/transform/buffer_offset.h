// A buffer's element offsets and its flattened form (TVM's Buffer.offset_of and
// Buffer.get_flattened_buffer), with the index arithmetic simplified.
#pragma once

#include <vector>

#include "tessera/ir/buffer.h"

namespace tessera {
namespace transform {

/*! \brief The offsets of the element at `indices`, one per physical axis (one unless the
 *  buffer has axis_separators): row-major over the shape, or the dot product with the strides,
 *  plus elem_offset; simplified. A value error when the number of indices is not the rank. */
std::vector<Expr> BufferOffsetOf(const Buffer& buffer, const std::vector<Expr>& indices);

/*! \brief `buffer` with one dimension per physical axis (the product of the dimensions between
 *  axis separators, or stride * extent of the first dimension of a strided buffer), no strides,
 *  over the same data; `buffer` itself when it is already flat. */
Buffer FlattenedBuffer(const Buffer& buffer);

/*! \brief A value error unless `axis_separators` are non-decreasing and within [0, rank]. */
void CheckAxisSeparators(const std::vector<int64_t>& axis_separators, size_t rank,
                         const Span& span = {});

}  // namespace transform
}  // namespace tessera
