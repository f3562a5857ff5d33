// Source registry and diagnostic rendering shared by the C++ core and the Python parser.
#include "tessera/support/diagnostic.h"

#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "tessera/support/error.h"

namespace tessera {
namespace {

struct SourceTable {
  std::mutex mu;
  std::unordered_map<std::string, std::vector<std::string>> lines;
};

SourceTable& Table() {
  static SourceTable* table = new SourceTable();
  return *table;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

const std::string& Span::file_name() const {
  static const std::string unknown = "<unknown>";
  return file ? *file : unknown;
}

std::string Span::ToString() const {
  if (!defined()) return "<unknown>";
  std::ostringstream os;
  os << *file << ":" << line << ":" << column + 1;
  return os.str();
}

void RegisterSource(const std::string& file, const std::string& text) {
  auto& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.lines[file] = SplitLines(text);
}

std::string SourceLine(const std::string& file, int line) {
  auto& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.lines.find(file);
  if (it == t.lines.end()) {
    std::ifstream in(file);
    if (!in) return "";
    std::stringstream ss;
    ss << in.rdbuf();
    it = t.lines.emplace(file, SplitLines(ss.str())).first;
  }
  if (line < 1 || line > static_cast<int>(it->second.size())) return "";
  return it->second[line - 1];
}

std::string RenderDiagnostic(const Span& span, const std::string& message,
                             const std::string& severity) {
  if (!span.defined()) return message;
  std::ostringstream os;
  os << span.ToString() << ": " << severity << ": " << message;
  std::string src = SourceLine(span.file_name(), span.line);
  if (!src.empty()) {
    os << "\n " << span.line << " | " << src << "\n ";
    os << std::string(std::to_string(span.line).size(), ' ') << " | ";
    int begin = span.column;
    int end = (span.end_line == span.line && span.end_column > span.column)
                  ? span.end_column
                  : static_cast<int>(src.size());
    if (begin > static_cast<int>(src.size())) begin = static_cast<int>(src.size());
    if (end <= begin) end = begin + 1;
    for (int i = 0; i < begin; ++i) os << (src[i] == '\t' ? '\t' : ' ');
    os << '^' << std::string(end - begin - 1, '~');
  }
  return os.str();
}

Error::Error(std::string message, Span span, ErrorKind kind)
    : std::runtime_error(RenderDiagnostic(span, message)),
      message_(std::move(message)),
      span_(std::move(span)),
      kind_(kind) {}

}  // namespace tessera
