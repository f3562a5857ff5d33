// Factories of the built-in passes; each pass also registers itself under its name.
#pragma once

#include "tessera/transform/pass.h"

namespace tessera {
namespace transform {

/*! \brief Fold constants, canonicalise comparisons (a > b -> b < a) and drop identities. */
Pass Simplify();
/*! \brief Remove statements without effect (Evaluate of constants, empty loops and branches). */
Pass RemoveNoOp();
/*! \brief Record the target name in each function's "target" attribute. */
Pass BindTarget(const std::string& target);

/*! \brief Simplify one expression (used by passes and tests). */
Expr SimplifyExpr(const Expr& e);

}  // namespace transform
}  // namespace tessera
