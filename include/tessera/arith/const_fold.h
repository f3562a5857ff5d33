// Constant folding of the expression operators, as TVM folds them when an expression is built
// (`a + b`, `te.max`, `x < 3` ... in Python; TVMScript arithmetic): two constants become one, and
// a few identities (x + 0, x * 1, x * 0, 0 / x, x / 1, x % 1, min(x, x)) drop the operation.
// The node constructors (tessera._core.Add ...) never fold; these builders do.
#pragma once

#include <string>

#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

/*! \brief The folded value of the binary operation `kind` (Add, Sub, Mul, Div, Mod, FloorDiv,
 *  FloorMod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or) of `a` and `b`, which already have one
 *  type; null when TVM does not fold these operands. Integer results wrap to the type as TVM's
 *  do; float constants fold in float32 or float64 only. A constant divisor of 0 is an error. */
Expr TryConstFold(NodeKind kind, const Expr& a, const Expr& b, const Span& span = {});
/*! \brief `!a` of a constant; null otherwise. */
Expr TryConstFoldNot(const Expr& a);

/*! \brief The folded value of the integer intrinsic `op` ("tir.bitwise_and", "tir.bitwise_or",
 *  "tir.bitwise_xor", "tir.shift_left", "tir.shift_right") of `a` and `b` (one type), as TVM
 *  folds them on int32/int64 (two constants; a shift by constant 0 is `a`); null otherwise. A
 *  constant shift amount outside [0, bits) is an error. */
Expr TryConstFoldIntrinsic(const std::string& op, const Expr& a, const Expr& b,
                           const Span& span = {});

/*! \brief The operation `kind` of `a` and `b`: folded when TryConstFold folds it, else the node
 *  (which checks the operand types). */
Expr FoldBinary(NodeKind kind, const Expr& a, const Expr& b, const Span& span = {});
/*! \brief `!a`: the constant when `a` is one, else the Not node. */
Expr FoldNot(const Expr& a, const Span& span = {});

}  // namespace arith
}  // namespace tessera
