// Printing an object with the declarations of the variables and buffers it uses.
#pragma once

#include <string>

#include "tessera/ir/printer.h"

namespace tessera {

/*!
 * \brief The TVMScript of an expression (or another object that is not a statement, function or
 *  module) preceded by the declarations of its free variables and buffers (`a = T.int32()`,
 *  `A = T.Buffer(...)`), as TVM prints with `verbose_expr`; other objects print as AsScript.
 */
std::string AsVerboseScript(const ObjectRef& node, const PrinterConfig& config);

}  // namespace tessera
