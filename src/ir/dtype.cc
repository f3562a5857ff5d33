// Parsing and printing of DataType names, long ("int32x8") and short ("i32x8", "fp16", "bf16").
#include "tessera/ir/dtype.h"

#include <cctype>
#include <ostream>

#include "tessera/support/error.h"

namespace tessera {
namespace {

struct Prefix {
  const char* name;
  DataType::Code code;
  int default_bits;  // 0: bits are required
};

// Longest prefixes first so "uint" wins over "u" and "bfloat" over "bf".
constexpr Prefix kPrefixes[] = {
    {"bfloat", DataType::kBFloat, 0}, {"float", DataType::kFloat, 0}, {"uint", DataType::kUInt, 0},
    {"int", DataType::kInt, 0},       {"bool", DataType::kBool, 1},   {"bf", DataType::kBFloat, 0},
    {"fp", DataType::kFloat, 0},      {"u", DataType::kUInt, 0},      {"i", DataType::kInt, 0},
    {"f", DataType::kFloat, 0},
};

bool ParseNumber(const std::string& s, size_t* pos, int* out) {
  size_t start = *pos;
  long v = 0;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos]))) {
    v = v * 10 + (s[*pos] - '0');
    if (v > 65535) return false;
    ++*pos;
  }
  *out = static_cast<int>(v);
  return *pos > start;
}

bool ValidBits(DataType::Code code, int bits) {
  switch (code) {
    case DataType::kInt:
    case DataType::kUInt:
      return bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 1 || bits == 4;
    case DataType::kFloat:
      return bits == 16 || bits == 32 || bits == 64;
    case DataType::kBFloat:
      return bits == 16;
    case DataType::kBool:
      return bits == 1;
    default:
      return false;
  }
}

}  // namespace

DataType DataType::Parse(const std::string& name) {
  if (name == "handle") return Handle();
  if (name == "void") return Void();
  for (const Prefix& p : kPrefixes) {
    std::string pre = p.name;
    if (name.compare(0, pre.size(), pre) != 0) continue;
    size_t pos = pre.size();
    int bits = p.default_bits;
    if (p.code != kBool) {
      if (!ParseNumber(name, &pos, &bits)) continue;
    }
    int lanes = 1;
    if (pos < name.size()) {
      if (name[pos] != 'x') continue;
      ++pos;
      if (!ParseNumber(name, &pos, &lanes) || pos != name.size() || lanes < 1) continue;
    }
    if (!ValidBits(p.code, bits)) continue;
    return DataType(p.code, bits, lanes);
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kType) << "unknown data type \"" << name << "\"";
}

std::string DataType::ToString() const {
  std::string s;
  switch (code()) {
    case kInt:
      s = "int" + std::to_string(bits());
      break;
    case kUInt:
      s = "uint" + std::to_string(bits());
      break;
    case kFloat:
      s = "float" + std::to_string(bits());
      break;
    case kBFloat:
      s = "bfloat16";
      break;
    case kBool:
      s = "bool";
      break;
    case kHandle:
      return "handle";
    case kVoid:
      return "void";
  }
  if (lanes() > 1) s += "x" + std::to_string(lanes());
  return s;
}

}  // namespace tessera
