// NarrowPredicateExpression (TVM's arith.NarrowPredicateExpression).
#pragma once

#include <utility>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

/*!
 * \brief A bool condition without the free parameters (vars with their ranges) that implies
 *  `cond`: each parameter becomes the end of its range that is hardest on the condition, and a
 *  comparison that cannot be narrowed (floormod, buffer loads, division by a parameter that may
 *  be 0) becomes false (true under a negation). A non-bool `cond` is a kType error.
 *
 * \code
 *   NarrowPredicateExpression(i > n, {{n, Range(0, 8)}});   // i > 7
 * \endcode
 */
Expr NarrowPredicateExpression(const Expr& cond,
                               const std::vector<std::pair<Var, Range>>& free_parameters);

}  // namespace arith
}  // namespace tessera
