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

// The narrow float formats by name ("float8_e4m3fn"); their widths are part of the name.
struct NarrowFloat {
  const char* name;
  DataType::Code code;
  int bits;
};

constexpr NarrowFloat kNarrowFloats[] = {
    {"float8_e3m4", DataType::kFloat8E3M4, 8},
    {"float8_e4m3", DataType::kFloat8E4M3, 8},
    {"float8_e4m3b11fnuz", DataType::kFloat8E4M3B11FNUZ, 8},
    {"float8_e4m3fn", DataType::kFloat8E4M3FN, 8},
    {"float8_e4m3fnuz", DataType::kFloat8E4M3FNUZ, 8},
    {"float8_e5m2", DataType::kFloat8E5M2, 8},
    {"float8_e5m2fnuz", DataType::kFloat8E5M2FNUZ, 8},
    {"float8_e8m0fnu", DataType::kFloat8E8M0FNU, 8},
    {"float6_e2m3fn", DataType::kFloat6E2M3FN, 6},
    {"float6_e3m2fn", DataType::kFloat6E3M2FN, 6},
    {"float4_e2m1fn", DataType::kFloat4E2M1FN, 4},
};

bool ParseNumber(const std::string& s, size_t* pos, int* out) {
  size_t start = *pos;
  long v = 0;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos]))) {
    v = v * 10 + (s[*pos] - '0');
    if (v > 32767) return false;  // lanes are an int16 (negative: scalable)
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

// The lanes suffix after the element name: "" (1), "x8" (8 lanes) or "xvscalex4" (vscale * 4
// lanes, stored as -4). False when `name` from `pos` is not one of these.
bool ParseLanes(const std::string& name, size_t pos, int* lanes) {
  *lanes = 1;
  if (pos == name.size()) return true;
  if (name[pos] != 'x') return false;
  ++pos;
  static const std::string kVscale = "vscalex";
  bool scalable = name.compare(pos, kVscale.size(), kVscale) == 0;
  if (scalable) pos += kVscale.size();
  int n = 0;
  if (!ParseNumber(name, &pos, &n) || pos != name.size() || n < 1) return false;
  if (scalable && n < 2) return false;  // TVM: a vscale factor is at least 2
  *lanes = scalable ? -n : n;
  return true;
}

}  // namespace

DataType DataType::Scalable(Code code, int bits, int vscale_factor) {
  if (vscale_factor < 2 || vscale_factor > 32767) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kType)
        << "the vscale factor of a scalable vector must be in [2, 32767], got " << vscale_factor;
  }
  return DataType(code, bits, -vscale_factor);
}

void DataType::ThrowScalableLanes() {
  TESSERA_THROW_KIND(Span(), ErrorKind::kType)
      << "the lane count of a scalable vector (vscale * k lanes) is not known at compile time; "
         "this operation does not support scalable vectors";
}

int DataType::vscale_factor() const {
  if (!is_scalable_vector()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kType)
        << ToString() << " is not a scalable vector and has no vscale factor";
  }
  return -lanes_;
}

DataType DataType::Parse(const std::string& name) {
  if (name == "handle") return Handle();
  if (name == "void") return Void();
  // TVM's 32-bit defaults of the bare names.
  if (name == "int") return Int(32);
  if (name == "uint") return UInt(32);
  if (name == "float") return Float(32);
  for (const NarrowFloat& f : kNarrowFloats) {
    size_t n = std::char_traits<char>::length(f.name);
    if (name.compare(0, n, f.name) != 0) continue;
    if (name.size() == n) return DataType(f.code, f.bits);
    int lanes = 0;
    if (ParseLanes(name, n, &lanes)) return DataType(f.code, f.bits, lanes);
  }
  for (const Prefix& p : kPrefixes) {
    std::string pre = p.name;
    if (name.compare(0, pre.size(), pre) != 0) continue;
    size_t pos = pre.size();
    int bits = p.default_bits;
    if (p.code != kBool) {
      if (!ParseNumber(name, &pos, &bits)) continue;
    }
    int lanes = 1;
    if (!ParseLanes(name, pos, &lanes)) continue;
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
    default:
      for (const NarrowFloat& f : kNarrowFloats) {
        if (f.code == code()) s = f.name;
      }
      break;
  }
  if (is_scalable_vector()) {
    s += "xvscalex" + std::to_string(vscale_factor());
  } else if (lanes_ > 1) {
    s += "x" + std::to_string(lanes_);
  }
  return s;
}

}  // namespace tessera
