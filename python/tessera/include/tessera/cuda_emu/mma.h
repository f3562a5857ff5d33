/* Stand-in for CUDA's <mma.h> (nvcuda::wmma) under tessera's CPU emulator. A fragment holds its
 * whole tile in every thread, so each thread of the warp performs the warp's load, mma and store
 * itself (with the same values), which gives the warp-level results of the tensor-core calls. */
#pragma once
#include <tessera/cuda_emu.h>

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static constexpr int kRows = std::is_same<Use, matrix_b>::value ? K : M;
  static constexpr int kCols = std::is_same<Use, matrix_a>::value ? K : N;
  static constexpr int num_elements = kRows * kCols;
  static constexpr bool kColMajor = std::is_same<Layout, col_major>::value;
  T x[num_elements];
};

template <class Use, int M, int N, int K, class T, class L, class V>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const V& value) {
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = T(value);
}

template <class Use, int M, int N, int K, class T, class L>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const T* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, T, L>;
  for (int r = 0; r < F::kRows; ++r)
    for (int c = 0; c < F::kCols; ++c)
      f.x[r * F::kCols + c] = F::kColMajor ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* p, unsigned ldm,
                             layout_t layout) {
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      f.x[r * N + c] = layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K, class T>
inline void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm,
                              layout_t layout) {
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      T& out = layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c];
      out = f.x[r * N + c];
    }
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
inline void mma_sync(fragment<accumulator, M, N, K, TC>& d,
                     const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TB, LB>& b,
                     const fragment<accumulator, M, N, K, TC>& c) {
  TC result[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float sum = float(c.x[i * N + j]);
      for (int k = 0; k < K; ++k) sum += float(a.x[i * K + k]) * float(b.x[k * N + j]);
      result[i * N + j] = TC(sum);
    }
  for (int i = 0; i < M * N; ++i) d.x[i] = result[i];
}

}  // namespace wmma
}  // namespace nvcuda
