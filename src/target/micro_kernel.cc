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

/*! \brief The AVX-512 body: zmm0 .. zmm(MR*NV-1) accumulate row i, vector v in zmm(i*NV+v);
 *  the NV vectors of b in the next registers. A tile of one vector per row multiplies by a's
 *  element broadcast from memory in the FMA itself ({1to16}); wider tiles broadcast each
 *  element of a once into one of the registers after b's (up to 4, in turn). */
std::string Avx512Body(int mr, int nr) {
  const int nv = nr / 16, acc = mr * nv, breg = acc, treg = acc + nv;
  const int tregs = std::min(4, 32 - treg);
  const bool embedded = nv == 1 || tregs < 1;
  std::ostringstream os;
  auto line = [&](const std::string& s) { os << "    \"" << s << "\\n\\t\"\n"; };
  auto zmm = [](int r) { return "%%zmm" + std::to_string(r); };
  // B's panel: NR * 4 bytes a step, i.e. NV cache lines; prefetched 8 steps ahead.
  auto step = [&](int u, bool prefetch) {
    for (int v = 0; v < nv; ++v) {
      line("vmovups " + std::to_string((u * nr + v * 16) * 4) + "(%[b]), " + zmm(breg + v));
      if (prefetch) line("prefetcht0 " + std::to_string((u * nr + v * 16) * 4 + nr * 32) + "(%[b])");
    }
    for (int i = 0; i < mr; ++i) {
      const std::string a = std::to_string((u * mr + i) * 4) + "(%[a])";
      if (embedded) {
        for (int v = 0; v < nv; ++v) {
          line("vfmadd231ps " + a + "%{1to16%}, " + zmm(breg + v) + ", " + zmm(i * nv + v));
        }
        continue;
      }
      const int t = treg + i % tregs;
      line("vbroadcastss " + a + ", " + zmm(t));
      for (int v = 0; v < nv; ++v) {
        line("vfmadd231ps " + zmm(breg + v) + ", " + zmm(t) + ", " + zmm(i * nv + v));
      }
    }
  };
  os << "  const float* pa = a;\n  const float* pb = b;\n";
  os << "  float* pc = c;\n  long ldc_bytes = (long)ldc * 4;\n";
  os << "  long n4 = kc / 4, rest = kc % 4;\n";
  os << "  __asm__ volatile(\n";
  for (int r = 0; r < acc; ++r) line("vpxord " + zmm(r) + ", " + zmm(r) + ", " + zmm(r));
  line("test %[n4], %[n4]");
  line("jz 2f");
  line(".p2align 5");
  line("1:");
  // A's panel: MR * 16 bytes per 4 steps, prefetched 16 steps ahead, a line at a time.
  for (int off = 0; off < mr * 16; off += 64) {
    line("prefetcht0 " + std::to_string(mr * 4 * 16 + off) + "(%[a])");
  }
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
  // C += the tile, row by row, in the assembly (as the AVX2 body does).
  line("4:");
  for (int i = 0; i < mr; ++i) {
    for (int v = 0; v < nv; ++v) {
      const std::string off = std::to_string(v * 64) + "(%[c])";
      line("vaddps " + off + ", " + zmm(i * nv + v) + ", " + zmm(i * nv + v));
      line("vmovups " + zmm(i * nv + v) + ", " + off);
    }
    if (i + 1 < mr) line("add %[ldc], %[c]");
  }
  os << "    : [a] \"+r\"(pa), [b] \"+r\"(pb), [c] \"+r\"(pc), [n4] \"+r\"(n4), [rest] \"+r\"(rest),"
     << " [ldc] \"+r\"(ldc_bytes)\n    :\n    : \"memory\", \"cc\"";
  for (int r = 0; r < 32; ++r) os << ", \"xmm" << r << "\"";
  os << ");\n";
  return os.str();
}

}  // namespace

bool MicroKernelAvx512Fits(int mr, int nr) {
  return nr % 16 == 0 && mr * (nr / 16) + nr / 16 + 1 <= 32;
}

bool MicroKernelAvx2Fits(int mr, int nr) {
  return nr % 8 == 0 && mr * (nr / 8) + nr / 8 + 1 <= 16;
}

std::string MicroKernelSource(int mr, int nr) {
  const std::string name = "tessera_ukr_f32_" + std::to_string(mr) + "x" + std::to_string(nr);
  const bool avx512 = MicroKernelAvx512Fits(mr, nr), avx2 = MicroKernelAvx2Fits(mr, nr);
  std::ostringstream os;
  os << "static void " << name
     << "(int32_t kc, const float* restrict a, const float* restrict b, float* restrict c, "
        "int32_t ldc) {\n";
  for (int i = 0; i < mr; ++i) os << "  __builtin_prefetch(c + " << i << " * ldc, 1);\n";
  // The body the C compiler's target allows (-march=native: the build host's): AVX-512 where
  // the tile is whole zmm vectors, else AVX2/FMA where it fits the 16 ymm registers, else C.
  const char* word = "#if";
  if (avx512) {
    os << word << " defined(__x86_64__) && defined(__AVX512F__)\n" << Avx512Body(mr, nr);
    word = "#elif";
  }
  if (avx2) {
    os << word << " defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)\n"
       << AsmBody(mr, nr);
    word = "#elif";
  }
  const bool asm_fits = avx512 || avx2;
  if (asm_fits) os << "#else\n";
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
