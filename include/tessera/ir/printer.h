// TVMScript printer: IR modules, functions, statements and expressions as parseable Python text.
#pragma once

#include <string>
#include <unordered_map>

#include "tessera/ir/node.h"

namespace tessera {

/*! \brief Options of the printer (the keywords of `mod.script(...)`). */
struct PrinterConfig {
  /*! \brief Alias of `tessera.script.ir` in the text (`@I.ir_module`). */
  std::string ir_prefix = "I";
  /*! \brief Alias of `tessera.script.tir` in the text (`T.Buffer`, `T.grid`). */
  std::string tir_prefix = "T";
  /*! \brief Print loop nests as `T.grid(...)` and unit-stride vector indices as `A[a:b]`. */
  bool syntax_sugar = true;
  /*!
   * \brief Print the metadata section. As TVM, a string of several lines prints as a reference
   *  `metadata["tir.StringImm"][i]`; with show_meta the text starts with the line
   *  `metadata = tessera.ir.load_json("""...""")` defining them (so that it parses back),
   *  else it ends with a comment saying the metadata was left out.
   */
  bool show_meta = false;
  /*! \brief Prefix each line with its 1-based number. */
  bool print_line_numbers = false;
  int indent_spaces = 4;
  /*!
   * \brief Statements to mark for a diagnostic (a schedule error): the first line of each is
   *  underlined with `^` on the next line and, when its tag is not empty, ends with the comment
   *  `# tag`. A marked loop is not merged into a `T.grid`. Marked text does not parse back.
   */
  std::unordered_map<const Object*, std::string> marks;
  /*! \brief Statements whose first line ends with the comment `# tag`, not underlined (TVM's
   *  `obj_to_annotate`). A mark of the same statement takes precedence. */
  std::unordered_map<const Object*, std::string> comments;
};

/*!
 * \brief The package the import header of printed modules and functions names
 *  (`# from <package>.script import tir as T`): "tessera", or "tvm" while tessera.compat maps
 *  TVM's names onto tessera. Process-wide.
 */
std::string& ScriptHeaderPackage();

/*!
 * \brief The TVMScript text of `node`: an IRModule or PrimFunc (with the import header), a
 *  statement (preceded by declarations of the variables and buffers it uses but does not
 *  define), an expression, or another IR object (Buffer, Range, Array, ...).
 *
 * The text of a module or function parses back to a structurally equal one. Variables and
 * buffers print by name; distinct ones sharing a name within a function get `_1`, `_2`, ...
 * suffixes. The output is deterministic.
 */
std::string AsScript(const ObjectRef& node, const PrinterConfig& cfg = {});

}  // namespace tessera
