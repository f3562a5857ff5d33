// The host's register-tile micro-kernels: the C functions that the implementation of the
// "tessera_ukr_f32_<MR>x<NR>_k<K>" tensor intrinsics calls (schedule/tensor_intrin.h), defined
// by the host code generator once per module that calls them.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tessera {
namespace codegen {

/*! \brief (MR, NR) of a micro-kernel function name "tessera_ukr_f32_<MR>x<NR>", or nothing. */
std::optional<std::pair<int, int>> ParseMicroKernelName(const std::string& name);

/*! \brief The C definition of `void tessera_ukr_f32_<MR>x<NR>(int32_t kc, const float* a,
 *  const float* b, float* c, int32_t ldc)`: c[i * ldc + j] += sum_k a[k * MR + i] *
 *  b[k * NR + j] for i < MR, j < NR (a: an MR-row panel packed k-major, b: an NR-wide panel
 *  packed k-major, c: the MR x NR tile). On x86-64 with AVX2 and FMA (decided by the C
 *  compiler's predefined macros, i.e. -march=native on the build host) and a tile whose
 *  accumulators fit the 16 ymm registers (NR a multiple of 8, MR * NR / 8 + NR / 8 + 1 <= 16),
 *  the body is an inline-assembly loop that keeps the tile in registers (broadcasts of a,
 *  vector loads of b, the reduction unrolled by 4, prefetches of the next lines of a and b);
 *  elsewhere a plain C loop nest. */
std::string MicroKernelSource(int mr, int nr);

}  // namespace codegen
}  // namespace tessera
