// String escaping for C, Python and JSON literals, and printf format text.
#include "tessera/support/escape.h"

#include <cstdio>

namespace tessera {

std::string Quote(const std::string& s, QuoteStyle style) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t' && style != QuoteStyle::kJson) {
      out += "\\t";
    } else if (c < 0x20 || (c == 0x7f && style == QuoteStyle::kPython) ||
               (c >= 0x7f && style == QuoteStyle::kC)) {
      char buf[8];
      if (style == QuoteStyle::kC) {
        std::snprintf(buf, sizeof(buf), "\\%03o", c);
      } else if (style == QuoteStyle::kPython) {
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      }
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string EscapeFormat(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

}  // namespace tessera
