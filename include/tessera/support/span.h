// Source locations carried by IR nodes built from user code.
#pragma once

#include <memory>
#include <string>

namespace tessera {

/*! \brief A range of source text: file, 1-based line and 0-based column, end exclusive. */
struct Span {
  std::shared_ptr<const std::string> file;
  int line = 0;
  int column = 0;
  int end_line = 0;
  int end_column = 0;

  Span() = default;
  Span(std::string file_name, int line, int column, int end_line = 0, int end_column = 0)
      : file(std::make_shared<const std::string>(std::move(file_name))),
        line(line),
        column(column),
        end_line(end_line ? end_line : line),
        end_column(end_column ? end_column : column + 1) {}

  bool defined() const { return file != nullptr && line > 0; }
  const std::string& file_name() const;
  /*! \brief "file:line:col" (column 1-based), or "<unknown>". */
  std::string ToString() const;
};

}  // namespace tessera
