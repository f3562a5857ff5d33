// Structural hash of IR, consistent with StructuralEqual (equal programs hash alike).
#pragma once

#include <cstddef>

#include "tessera/ir/node.h"

namespace tessera {

/*!
 * \brief A hash of `node` that ignores spans and names: bound variables and defined buffers hash
 *  by the order of their definitions, free variables by identity (or by order of first use with
 *  `map_free_vars`), GlobalVars by name. StructuralEqual(a, b, m) implies equal hashes for `m`.
 */
size_t StructuralHash(const ObjectRef& node, bool map_free_vars = false);

/*! \brief Hasher for hash containers keyed by IR (with StructuralEqualFn). */
struct StructuralHashFn {
  size_t operator()(const ObjectRef& node) const { return StructuralHash(node); }
};

}  // namespace tessera
