// Analyses over lowered modules used by builds and runtimes.
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace transform {

/*! \brief For each parameter of `entry`: the number of elements a pointer parameter is known to
 *  be accessed at (highest constant index + 1, through subroutine calls too), 0 when it is not
 *  accessed or not a pointer, -1 when an access index is not a constant. */
std::vector<int64_t> PointerAccessExtents(const IRModule& mod, const std::string& entry);

}  // namespace transform
}  // namespace tessera
