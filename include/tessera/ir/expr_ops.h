// Typed expression builders: operands are brought to the wider of their two types and integer
// constants fold, so that code building index arithmetic (schedule primitives, passes) writes
// `AddE(i, j)` instead of casting by hand.
#pragma once

#include <cstdint>

#include "tessera/ir/expr.h"

namespace tessera {

/*! \brief The integer constant `v` of type `t`. */
Expr IntConst(DataType t, int64_t v);
/*! \brief `e` converted to `t` (integer constants are rebuilt, others cast; `e` itself when it
 *  already has type `t`). */
Expr CastTo(DataType t, const Expr& e);

/*! \brief a + b, a - b, a * b, floordiv(a, b), floormod(a, b) in the wider of the operands'
 *  types. Two integer constants fold into one when the result fits the type (and, for the
 *  divisions, the divisor is not 0); anything else builds the node. */
Expr AddE(const Expr& a, const Expr& b);
Expr SubE(const Expr& a, const Expr& b);
Expr MulE(const Expr& a, const Expr& b);
Expr FloorDivE(const Expr& a, const Expr& b);
Expr FloorModE(const Expr& a, const Expr& b);
/*! \brief a && b; a null or constant-true operand drops out. */
Expr AndE(const Expr& a, const Expr& b);

}  // namespace tessera
