// Where two IR objects first differ, as a path of steps (TVM's AccessPath of a mismatch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/node.h"

namespace tessera {

/*! \brief One step of a path: a field, an item of an array, or the value under a map key. */
struct MismatchStep {
  enum class Kind { kAttr, kArrayItem, kMapItem };
  Kind kind = Kind::kAttr;
  /*! \brief The field (kAttr). */
  std::string name;
  /*! \brief The index (kArrayItem). */
  int64_t index = -1;
  /*! \brief The key (kMapItem): a string key, or the key objects of each side (a buffer_map's
   *  parameter, a module's GlobalVar). */
  std::string str_key;
  ObjectRef key_a, key_b;
  /*! \brief An item that one side lacks (an array or map of different size): 1 when the first
   *  side lacks it, 2 when the second does (TVM's array_item_missing / map_item_missing). */
  int missing_side = 0;
};

/*! \brief The first mismatch of a structural comparison. */
struct StructuralMismatch {
  /*! \brief What differs there, e.g. "IntImm 1 vs IntImm 2". */
  std::string reason;
  /*! \brief From the root of each side to the mismatch (the same steps; keys per side). */
  std::vector<MismatchStep> steps;
};

/*! \brief The first mismatch of StructuralEqual(a, b, map_free_vars); none when equal. */
std::optional<StructuralMismatch> FindStructuralMismatch(const ObjectRef& a, const ObjectRef& b,
                                                         bool map_free_vars = false,
                                                         bool bind_free_buffers = false);

}  // namespace tessera
