// IndexMap: a function from buffer (or iteration) indices to new indices, `lambda i, j: (j, i)`.
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {
namespace schedule {

/*! \brief Maps the indices `initial_indices` to the expressions `final_indices` over them. */
struct IndexMap {
  std::vector<Var> initial_indices;
  std::vector<Expr> final_indices;

  /*! \brief The final indices at `indices` (one per initial index), simplified. */
  std::vector<Expr> Apply(const std::vector<Expr>& indices) const;
  /*! \brief The map as Python: `lambda i, j: (j, i)`. */
  std::string AsPython() const;
};

}  // namespace schedule
}  // namespace tessera
