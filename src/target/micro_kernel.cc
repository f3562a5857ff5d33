// The host's register-tile micro-kernels (see tessera/target/micro_kernel.h).
#include "tessera/target/micro_kernel.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace tessera {
namespace codegen {

std::optional<std::pair<int, int>> ParseMicroKernelName(const std::string& name) {
  static const std::regex kName("tessera_ukr_f32_([0-9]{1,2})x([0-9]{1,3})");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  int mr = std::stoi(m[1]), nr = std::stoi(m[2]);
  if (mr < 1 || nr < 1) return std::nullopt;
  return std::make_pair(mr, nr);
}

namespace {

/*! \brief The AVX2/FMA body: ymm0 .. ymm(MR*NV-1) accumulate row i, vector v in ymm(i*NV+v);
 *  the NV vectors of b in the next registers, the broadcasts of a in the one or two after. */
std::string AsmBody(int mr, int nr) {
  const int nv = nr / 8, acc = mr * nv, breg = acc, treg = acc + nv;
  const int tregs = std::min(2, 16 - treg);
  std::ostringstream os;
  auto line = [&](const std::string& s) { os << "    \"" << s << "\\n\\t\"\n"; };
  auto step = [&](int u, bool prefetch) {
    for (int v = 0; v < nv; ++v) {
      line("vmovups " + std::to_string((u * nr + v * 8) * 4) + "(%[b]), %%ymm" +
           std::to_string(breg + v));
    }
    if (prefetch) line("prefetcht0 " + std::to_string(512 + u * 64) + "(%[b])");
    for (int i = 0; i < mr; ++i) {
      const int t = treg + i % tregs;
      line("vbroadcastss " + std::to_string((u * mr + i) * 4) + "(%[a]), %%ymm" +
           std::to_string(t));
      for (int v = 0; v < nv; ++v) {
        line("vfmadd231ps %%ymm" + std::to_string(breg + v) + ", %%ymm" + std::to_string(t) +
             ", %%ymm" + std::to_string(i * nv + v));
      }
    }
  };
  os << "  const float* pa = a;\n  const float* pb = b;\n";
  os << "  float* pc = c;\n  long ldc_bytes = (long)ldc * 4;\n";
  os << "  long n4 = kc / 4, rest = kc % 4;\n";
  os << "  __asm__ volatile(\n";
  for (int r = 0; r < acc; ++r) {
    line("vxorps %%ymm" + std::to_string(r) + ", %%ymm" + std::to_string(r) + ", %%ymm" +
         std::to_string(r));
  }
  line("test %[n4], %[n4]");
  line("jz 2f");
  line(".p2align 4");
  line("1:");
  line("prefetcht0 " + std::to_string(mr * 4 * 16) + "(%[a])");
  for (int u = 0; u < 4; ++u) step(u, true);
  line("add $" + std::to_string(mr * 16) + ", %[a]");
  line("add $" + std::to_string(nr * 16) + ", %[b]");
  line("dec %[n4]");
  line("jnz 1b");
  line("2:");
  line("test %[rest], %[rest]");
  line("jz 4f");
  line("3:");
  step(0, false);
  line("add $" + std::to_string(mr * 4) + ", %[a]");
  line("add $" + std::to_string(nr * 4) + ", %[b]");
  line("dec %[rest]");
  line("jnz 3b");
  // C += the tile, row by row (vector loads and stores of any alignment, in the assembly: a
  // C loop here is not always vectorized by the C compiler once the kernel is inlined).
  line("4:");
  for (int i = 0; i < mr; ++i) {
    for (int v = 0; v < nv; ++v) {
      const std::string r = std::to_string(i * nv + v);
      line("vaddps " + std::to_string(v * 32) + "(%[c]), %%ymm" + r + ", %%ymm" + r);
      line("vmovups %%ymm" + r + ", " + std::to_string(v * 32) + "(%[c])");
    }
    if (i + 1 < mr) line("add %[ldc], %[c]");
  }
  // Every register operand read-write, so that no two share a register (an input-only row
  // stride equal to the loop count, both constants after inlining, would share one with it).
  os << "    : [a] \"+r\"(pa), [b] \"+r\"(pb), [c] \"+r\"(pc), [n4] \"+r\"(n4), [rest] \"+r\"(rest),"
     << " [ldc] \"+r\"(ldc_bytes)\n    :\n    : \"memory\", \"cc\"";
  for (int r = 0; r < 16; ++r) os << ", \"xmm" << r << "\"";
  os << ");\n";
  return os.str();
}

}  // namespace

std::string MicroKernelSource(int mr, int nr) {
  const std::string name = "tessera_ukr_f32_" + std::to_string(mr) + "x" + std::to_string(nr);
  const int nv = nr / 8;
  const bool asm_fits = nr % 8 == 0 && mr * nv + nv + 1 <= 16;
  std::ostringstream os;
  os << "static void " << name
     << "(int32_t kc, const float* restrict a, const float* restrict b, float* restrict c, "
        "int32_t ldc) {\n";
  for (int i = 0; i < mr; ++i) os << "  __builtin_prefetch(c + " << i << " * ldc, 1);\n";
  if (asm_fits) {
    os << "#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)\n"
       << AsmBody(mr, nr) << "#else\n";
  }
  os << "  float acc[" << mr << "][" << nr << "] = {{0}};\n"
     << "  for (int32_t k = 0; k < kc; ++k)\n"
     << "    for (int i = 0; i < " << mr << "; ++i)\n"
     << "      for (int j = 0; j < " << nr << "; ++j) acc[i][j] += a[k * " << mr << " + i] * b[k * "
     << nr << " + j];\n"
     << "  for (int i = 0; i < " << mr << "; ++i)\n"
     << "    for (int j = 0; j < " << nr << "; ++j) c[i * ldc + j] += acc[i][j];\n";
  if (asm_fits) os << "#endif\n";
  os << "}\n";
  return os.str();
}

}  // namespace codegen
}  // namespace tessera
