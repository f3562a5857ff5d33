// What proofs may assume of `T.vscale()` (TVM's scalable vectors) on the current target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

/*!
 * \brief While a target with scalable vectors (AArch64 SVE, RISC-V V) is current, `values` are
 *  the values vscale can take there (powers of two), and `Analyzer::CanProve` proves a
 *  condition holding `T.vscale()` by checking it for each of them, as TVM does. Empty otherwise:
 *  such a proof then fails, with TVM's warning on stderr naming `target`. Process-wide;
 *  tessera.target.Target sets it when a target is entered and left (`with Target(...):`).
 */
struct VScaleContext {
  std::vector<int64_t> values;
  std::string target = "None";
};
VScaleContext& CurrentVScaleContext();

/*! \brief Whether `e` holds a `T.vscale()` call. */
bool ContainsVScale(const Expr& e);

}  // namespace arith
}  // namespace tessera
