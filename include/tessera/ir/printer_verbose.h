// Printing an object with the declarations of the variables and buffers it uses.
#pragma once

#include <string>
#include <unordered_set>

#include "tessera/ir/printer.h"

namespace tessera {

/*!
 * \brief The TVMScript of an expression (or another object that is not a statement, function or
 *  module) preceded by the declarations of its free variables and buffers (`a = T.int32()`,
 *  `A = T.Buffer(...)`), as TVM prints with `verbose_expr`; other objects print as AsScript.
 */
std::string AsVerboseScript(const ObjectRef& node, const PrinterConfig& config);

/*! \brief The options of the Python `script()` that PrinterConfig does not hold. */
struct ScriptOptions {
  /*! \brief As AsVerboseScript. */
  bool verbose_expr = false;
  /*! \brief Suffix every variable and buffer name with `_0x<address>` (TVM's option). */
  bool show_object_address = false;
  /*!
   * \brief Objects to underline as TVM's `obj_to_underline` / `path_to_underline` do: every
   *  line a statement, function or module prints is underlined (indentation and comments
   *  excepted), and every place an expression prints is underlined within its line.
   */
  std::unordered_set<const Object*> underline;
};

/*! \brief The TVMScript of `node` with the options of `script()`. */
std::string AsScript(const ObjectRef& node, const PrinterConfig& config,
                     const ScriptOptions& options);

}  // namespace tessera
