// The strides of a buffer as lowering sees them.
#pragma once

#include <vector>

#include "tessera/ir/buffer.h"

namespace tessera {

/*!
 * \brief The strides lowering uses: `b->strides` when there is one per dimension; empty
 *  (compact row-major) when there are none, or when fewer are given and each is the compact
 *  stride of its dimension counted from the innermost (TVM's cache_index declares its
 *  buffers with `strides=[1]` whatever their rank). Throws a ValueError otherwise.
 */
std::vector<Expr> LoweringStrides(const Buffer& b);

}  // namespace tessera
