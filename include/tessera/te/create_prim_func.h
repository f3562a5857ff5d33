// CreatePrimFunc: a TensorIR function computing te tensors, one block per compute operation.
#pragma once

#include <optional>
#include <variant>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/te/tensor.h"

namespace tessera {
namespace te {

/*! \brief An argument of the function: a tensor (a buffer parameter) or a scalar variable. */
using PrimFuncArg = std::variant<Tensor, Var>;

/*!
 * \brief The PrimFunc computing the tensors reachable from `args` (spec/tensorir.md §4).
 *
 * Listed tensors become buffer parameters in order, listed variables scalar parameters, other
 * computed tensors root-block allocations. Each compute operation becomes one block named
 * after it (repeats get _1, _2, ...) under one serial loop per axis, spatial loops outside
 * reduce loops; a reduction block initialises its output with T.init(). The function has
 * "tir.noalias" = true and "global_symbol" = "main". With `index_dtype_override` the loops,
 * block iterators, shapes and indices use that integer type.
 *
 * Errors: a placeholder read but not listed, a tensor listed twice, a symbolic size defined by
 * no parameter.
 */
PrimFunc CreatePrimFunc(const std::vector<PrimFuncArg>& args,
                        std::optional<DataType> index_dtype_override = std::nullopt);

}  // namespace te
}  // namespace tessera
