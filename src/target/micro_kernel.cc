// The host's register-tile micro-kernels (see tessera/target/micro_kernel.h).
#include "tessera/target/micro_kernel.h"

#include <algorithm>
#include <functional>
#include <regex>
#include <sstream>
#include <vector>

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

/*! \brief How one vector ISA's body differs from the other's; the loop around it is shared. */
struct VectorIsa {
  const char* reg;   // register prefix: "ymm" or "zmm"
  int lanes;         // floats a register holds
  int registers;     // vector registers there are
  const char* zero;  // clears a register: "vxorps r, r, r" or "vpxord r, r, r"
  int align;         // .p2align of the k loop
};

/*! \brief The asm statement of a kernel: registers 0 .. MR*NV-1 accumulate row i, vector v in
 *  register i*NV+v, cleared first; a k loop unrolled by 4 of `step(u, prefetch)` (u: the step
 *  in the unrolled group) with A's panel prefetched at the lines `a_prefetch` (offsets in
 *  bytes), a loop over the remaining steps, then C += the tile row by row (vector loads and
 *  stores of any alignment, in the assembly: a C loop here is not always vectorized by the C
 *  compiler once the kernel is inlined). */
std::string AsmKernel(
    int mr, int nr, const VectorIsa& isa, const std::vector<int>& a_prefetch,
    const std::function<void(const std::function<void(const std::string&)>&, int, bool)>& step) {
  const int nv = nr / isa.lanes, acc = mr * nv, bytes = isa.lanes * 4;
  std::ostringstream os;
  auto line = [&](const std::string& s) { os << "    \"" << s << "\\n\\t\"\n"; };
  auto reg = [&](int r) { return "%%" + std::string(isa.reg) + std::to_string(r); };
  os << "  const float* pa = a;\n  const float* pb = b;\n";
  os << "  float* pc = c;\n  long ldc_bytes = (long)ldc * 4;\n";
  os << "  long n4 = kc / 4, rest = kc % 4;\n";
  os << "  __asm__ volatile(\n";
  for (int r = 0; r < acc; ++r)
    line(std::string(isa.zero) + " " + reg(r) + ", " + reg(r) + ", " + reg(r));
  line("test %[n4], %[n4]");
  line("jz 2f");
  line(".p2align " + std::to_string(isa.align));
  line("1:");
  for (int off : a_prefetch) line("prefetcht0 " + std::to_string(off) + "(%[a])");
  for (int u = 0; u < 4; ++u) step(line, u, true);
  line("add $" + std::to_string(mr * 16) + ", %[a]");
  line("add $" + std::to_string(nr * 16) + ", %[b]");
  line("dec %[n4]");
  line("jnz 1b");
  line("2:");
  line("test %[rest], %[rest]");
  line("jz 4f");
  line("3:");
  step(line, 0, false);
  line("add $" + std::to_string(mr * 4) + ", %[a]");
  line("add $" + std::to_string(nr * 4) + ", %[b]");
  line("dec %[rest]");
  line("jnz 3b");
  line("4:");
  for (int i = 0; i < mr; ++i) {
    for (int v = 0; v < nv; ++v) {
      const std::string off = std::to_string(v * bytes) + "(%[c])";
      line("vaddps " + off + ", " + reg(i * nv + v) + ", " + reg(i * nv + v));
      line("vmovups " + reg(i * nv + v) + ", " + off);
    }
    if (i + 1 < mr) line("add %[ldc], %[c]");
  }
  // Every register operand read-write, so that no two share a register (an input-only row
  // stride equal to the loop count, both constants after inlining, would share one with it).
  os << "    : [a] \"+r\"(pa), [b] \"+r\"(pb), [c] \"+r\"(pc), [n4] \"+r\"(n4), [rest] "
        "\"+r\"(rest),"
     << " [ldc] \"+r\"(ldc_bytes)\n    :\n    : \"memory\", \"cc\"";
  for (int r = 0; r < isa.registers; ++r) os << ", \"xmm" << r << "\"";
  os << ");\n";
  return os.str();
}

/*! \brief The AVX2/FMA body: the NV vectors of b after the accumulators, the broadcasts of a in
 *  the one or two registers after those. */
std::string AsmBody(int mr, int nr) {
  const int nv = nr / 8, breg = mr * nv, treg = breg + nv;
  const int tregs = std::min(2, 16 - treg);
  auto ymm = [](int r) { return "%%ymm" + std::to_string(r); };
  auto step = [&](const std::function<void(const std::string&)>& line, int u, bool prefetch) {
    for (int v = 0; v < nv; ++v) {
      line("vmovups " + std::to_string((u * nr + v * 8) * 4) + "(%[b]), " + ymm(breg + v));
    }
    if (prefetch) line("prefetcht0 " + std::to_string(512 + u * 64) + "(%[b])");
    for (int i = 0; i < mr; ++i) {
      const int t = treg + i % tregs;
      line("vbroadcastss " + std::to_string((u * mr + i) * 4) + "(%[a]), " + ymm(t));
      for (int v = 0; v < nv; ++v) {
        line("vfmadd231ps " + ymm(breg + v) + ", " + ymm(t) + ", " + ymm(i * nv + v));
      }
    }
  };
  return AsmKernel(mr, nr, {"ymm", 8, 16, "vxorps", 4}, {mr * 4 * 16}, step);
}

/*! \brief The AVX-512 body: the NV vectors of b after the accumulators. A tile of one vector per
 *  row multiplies by a's element broadcast from memory in the FMA itself ({1to16}); wider tiles
 *  broadcast each element of a once into one of the registers after b's (up to 4, in turn). */
std::string Avx512Body(int mr, int nr) {
  const int nv = nr / 16, breg = mr * nv, treg = breg + nv;
  const int tregs = std::min(4, 32 - treg);
  const bool embedded = nv == 1 || tregs < 1;
  auto zmm = [](int r) { return "%%zmm" + std::to_string(r); };
  // B's panel: NR * 4 bytes a step, i.e. NV cache lines; prefetched 8 steps ahead.
  auto step = [&](const std::function<void(const std::string&)>& line, int u, bool prefetch) {
    for (int v = 0; v < nv; ++v) {
      line("vmovups " + std::to_string((u * nr + v * 16) * 4) + "(%[b]), " + zmm(breg + v));
      if (prefetch)
        line("prefetcht0 " + std::to_string((u * nr + v * 16) * 4 + nr * 32) + "(%[b])");
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
  // A's panel: MR * 16 bytes per 4 steps, prefetched 16 steps ahead, a line at a time.
  std::vector<int> a_prefetch;
  for (int off = 0; off < mr * 16; off += 64) a_prefetch.push_back(mr * 4 * 16 + off);
  return AsmKernel(mr, nr, {"zmm", 16, 32, "vpxord", 5}, a_prefetch, step);
}

}  // namespace

bool MicroKernelAvx512Fits(int mr, int nr) {
  return nr % 16 == 0 && mr * (nr / 16) + nr / 16 + 1 <= 32;
}

bool MicroKernelAvx2Fits(int mr, int nr) { return nr % 8 == 0 && mr * (nr / 8) + nr / 8 + 1 <= 16; }

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
