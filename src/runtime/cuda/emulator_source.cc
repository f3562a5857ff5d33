// The CUDA emulator reads the kernel source it compiles: kernel names, whether a kernel
// synchronises, static shared memory per kernel.
#include <cctype>
#include <cstdlib>
#include <map>

#include "emulator_internal.h"
#include "tessera/runtime/cuda/emulator.h"

namespace tessera {
namespace runtime {
namespace cuda {
namespace emu {
namespace internal {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<KernelInfo> ScanKernels(const std::string& source) {
  static const std::string kHead = "extern \"C\" __global__ ";
  std::vector<KernelInfo> out;
  size_t at = 0;
  while ((at = source.find(kHead, at)) != std::string::npos) {
    size_t p = at + kHead.size();
    if (source.compare(p, 18, "__launch_bounds__(") == 0) {
      p = source.find(')', p);
      if (p == std::string::npos) break;
      p += 1;
      while (p < source.size() && source[p] == ' ') ++p;
    }
    at = p;
    if (source.compare(p, 5, "void ") != 0) continue;
    p += 5;
    size_t b = p;
    while (p < source.size() && IsIdentChar(source[p])) ++p;
    if (p == b || p >= source.size() || source[p] != '(') continue;
    if (!out.empty()) out.back().body_end = at;
    out.push_back({source.substr(b, p - b), p, source.size()});
  }
  return out;
}

bool UsesSynchronisation(const std::string& source) {
  for (const char* s : {"__syncthreads", "__syncwarp", "__shfl", "__ballot_sync", "__any_sync",
                        "__all_sync", "__activemask"}) {
    if (source.find(s) != std::string::npos) return true;
  }
  return false;
}

// Bytes of `__shared__ TYPE NAME[N]...;` declarations in [begin, end) (the codegen's form).
int64_t StaticSharedBytes(const std::string& source, size_t begin, size_t end) {
  static const std::map<std::string, int64_t> kSizes = {
      {"float", 4},    {"double", 8},   {"half", 2},     {"nv_bfloat16", 2}, {"int8_t", 1},
      {"uint8_t", 1},  {"int16_t", 2},  {"uint16_t", 2}, {"int32_t", 4},     {"uint32_t", 4},
      {"int64_t", 8},  {"uint64_t", 8}, {"int", 4},      {"char", 1},        {"bool", 1},
      {"unsigned", 4}, {"short", 2},    {"long", 8}};
  int64_t total = 0;
  size_t at = begin;
  while ((at = source.find("__shared__ ", at)) != std::string::npos && at < end) {
    size_t p = at + 11;
    at = p;
    size_t b = p;
    while (p < end && IsIdentChar(source[p])) ++p;
    auto it = kSizes.find(source.substr(b, p - b));
    if (it == kSizes.end()) continue;
    int64_t elems = 1;
    size_t semi = source.find(';', p);
    if (semi == std::string::npos || semi > end) continue;
    for (size_t q = p; q < semi; ++q) {
      if (source[q] != '[') continue;
      elems *= std::strtoll(source.c_str() + q + 1, nullptr, 10);
    }
    total += elems * it->second;
  }
  return total;
}

}  // namespace internal

std::vector<std::string> KernelNames(const std::string& source) {
  std::vector<std::string> names;
  for (const internal::KernelInfo& k : internal::ScanKernels(source)) names.push_back(k.name);
  return names;
}

}  // namespace emu
}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
