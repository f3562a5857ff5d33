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
 *  packed k-major, c: the MR x NR tile). The body is an inline-assembly loop that keeps the
 *  tile in registers (broadcasts of a, vector loads of b, the reduction unrolled by 4,
 *  prefetches of the next lines of a and b, the tile added into c at the end), chosen by the C
 *  compiler's predefined macros (i.e. -march=native on the build host): with AVX-512F, zmm
 *  vectors where MicroKernelAvx512Fits; else with AVX2 and FMA, ymm vectors where
 *  MicroKernelAvx2Fits; elsewhere a plain C loop nest. */
std::string MicroKernelSource(int mr, int nr);

/*! \brief Whether the AVX-512 body can hold the tile: NR a multiple of 16 and the accumulators,
 *  B's vectors and a broadcast in 32 zmm registers (MR * NR / 16 + NR / 16 + 1 <= 32). */
bool MicroKernelAvx512Fits(int mr, int nr);

/*! \brief Whether the AVX2 body can hold the tile: NR a multiple of 8 and the accumulators,
 *  B's vectors and a broadcast in 16 ymm registers (MR * NR / 8 + NR / 8 + 1 <= 16). */
bool MicroKernelAvx2Fits(int mr, int nr);

}  // namespace codegen
}  // namespace tessera
