// Vector math kernels of the host C code generator (see tessera/target/vector_math.h).
#include "tessera/target/vector_math.h"

#include <sstream>

namespace tessera {
namespace codegen {

// Why fmod is computed from a quotient: C's fmod (glibc's, and numpy's np.fmod, which calls it)
// is a scalar loop over the bits of the operands, about 20 ns an element on a Zen 4 (bench_topi
// mod, 2048 x 2048 float32, one thread: 21 ms, numpy 19 ms). A vector division, a truncation and
// one fused multiply-add give the remainder for every lane whose rounded quotient truncates to
// the true one: then a0 - q * a1 is the remainder, which is representable, so the fma's single
// rounding is exact. A quotient off by k != 0 leaves a0 - q * a1 outside [0, |a1|) on a0's
// side (beyond |a1|, or of the other sign), and rounding keeps it there (0 and |a1| are
// representable, and the value, a nonzero multiple of the operands' least unit, does not
// round to zero); so the test below certifies every lane it keeps. Such lanes, and infinities,
// NaNs and zero divisors (their m is a NaN or infinite), go to the C library.
std::string VectorFmodSource(const std::string& name, const std::string& vector_type,
                             const std::string& mask_type, int bits, int lanes) {
  std::string f = bits == 32 ? "f" : "";
  std::string t = bits == 32 ? "float" : "double";
  std::string n = std::to_string(lanes);
  std::ostringstream os;
  os << "static inline " << vector_type << " " << name << "(" << vector_type << " a0, "
     << vector_type << " a1) {\n"
     << "  " << vector_type << " r;\n"
     << "#if defined(__FP_FAST_FMA" << (bits == 32 ? "F" : "") << ")\n"
     << "  " << mask_type << " bad;\n"
     << "  for (int i = 0; i < " << n << "; ++i) {\n"
     << "    " << t << " m = __builtin_fma" << f << "(-__builtin_trunc" << f
     << "(a0[i] / a1[i]), a1[i], a0[i]);\n"
     << "    r[i] = __builtin_copysign" << f << "(m, a0[i]);\n"
     << "    bad[i] = !(__builtin_fabs" << f << "(m) < __builtin_fabs" << f
     << "(a1[i])) | (m != r[i]);\n"
     << "  }\n"
     << "  int any = 0;\n"
     << "  for (int i = 0; i < " << n << "; ++i) any |= bad[i] != 0;\n"
     << "  if (__builtin_expect(any, 0)) {\n"
     << "    for (int i = 0; i < " << n << "; ++i)\n"
     << "      if (bad[i]) r[i] = fmod" << f << "(a0[i], a1[i]);\n"
     << "  }\n"
     << "#else\n"
     << "  for (int i = 0; i < " << n << "; ++i) r[i] = fmod" << f << "(a0[i], a1[i]);\n"
     << "#endif\n"
     << "  return r;\n"
     << "}\n";
  return os.str();
}

}  // namespace codegen
}  // namespace tessera
