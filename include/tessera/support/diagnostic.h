// Source registry and rendering of diagnostics (file:line, the source line, a caret).
#pragma once

#include <string>

#include "tessera/support/span.h"

namespace tessera {

/*! \brief Remember the text of a source file so errors can quote it (also for unsaved sources). */
void RegisterSource(const std::string& file, const std::string& text);

/*! \brief The 1-based line of a registered (or readable) file; empty when unknown. */
std::string SourceLine(const std::string& file, int line);

/*! \brief Render "file:line:col: error: message", the source line and a caret under the span. */
std::string RenderDiagnostic(const Span& span, const std::string& message,
                             const std::string& severity = "error");

}  // namespace tessera
