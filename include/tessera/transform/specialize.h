// Function-level rewrites of a PrimFunc's definitions: specialization of parameters to values
// (TVM's PrimFunc.specialize) and a copy in which every definition is new (TVM's RenewDefs).
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace transform {

/*!
 * \brief `func` with parameters fixed: each entry maps a parameter to a Buffer (a handle
 *  parameter of the buffer_map: the variables of its buffer's shape, strides, elem_offset and
 *  data take the given buffer's values) or to an expression (a parameter outside the
 *  buffer_map). Specialized scalar parameters leave the signature, uses are replaced and the
 *  operations whose operands became constants fold. `func` itself when nothing changes.
 *
 *    matmul(a, b, c, n) with A = match_buffer(a, [m, n]), specialize {n: 128}
 *    -> matmul(a, b, c) with A = match_buffer(a, [m, 128])
 *
 * A value error names the parameter when it is not one of `func`'s, when a buffer's rank,
 * strides, alignment or offset factor differ, or when a variable would take two values; a type
 * error when a buffer field to match is an expression other than a variable.
 */
PrimFunc Specialize(const PrimFunc& func, const std::vector<std::pair<Var, ObjectRef>>& param_map);

/*! \brief `stmt` with the variables of `vmap` replaced, in buffer definitions too: a buffer
 *  whose shape, strides, offset or data pointer uses them is rebuilt where it is defined (or
 *  first used) and its accesses follow (TVM's tir.stmt_functor.substitute). Nothing folds. */
Stmt SubstituteWithBuffers(const Stmt& stmt, const std::unordered_map<const VarNode*, Expr>& vmap);

/*! \brief A copy of `func` in which every definition is new: parameters, buffers (buffer_map,
 *  allocated, declared and matched ones, with their data pointers and the variables their shapes,
 *  strides and offsets define), loop and block variables, let variables and allocations. The
 *  copy is structurally equal to `func` and shares none of its variables or buffers. */
PrimFunc RenewDefs(const PrimFunc& func);

}  // namespace transform
}  // namespace tessera
