// String escaping, written once: quoted literals for C, Python (TVMScript) and JSON, and printf
// format text.
#pragma once

#include <string>

namespace tessera {

/*! \brief The language a quoted string is written in. */
enum class QuoteStyle {
  kC,       ///< C/C++ literal: \n \t named, other control bytes and bytes >= 0x7f as octal \ooo
  kPython,  ///< Python literal: \n \t named, other control bytes and DEL as \xhh; UTF-8 kept
  kJson,    ///< JSON string: \n named, other control bytes as \u00hh; UTF-8 kept
};

/*! \brief `s` between double quotes, with `"` and `\` escaped and control bytes escaped as
 *  `style` writes them, so that the language reads back exactly `s`. */
std::string Quote(const std::string& s, QuoteStyle style);

/*! \brief `s` usable as literal text in a printf format (every % doubled). */
std::string EscapeFormat(const std::string& s);

}  // namespace tessera
