// Tensor intrinsics: a description of a computation (a PrimFunc) and its implementation (a
// PrimFunc with the same buffer parameters), registered by name for tir.Schedule.tensorize.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace schedule {

/*!
 * \brief A tensor intrinsic. `desc` describes the computation as a block whose body the
 *  tensorized block must match; `impl` replaces that body. Both take only handle parameters,
 *  as many, each bound to a buffer.
 */
struct TensorIntrinNode {
  PrimFunc desc;
  PrimFunc impl;
  /*! \brief Checks the parameters (ValueError on a mismatch, as TVM's). */
  static std::shared_ptr<TensorIntrinNode> Make(PrimFunc desc, PrimFunc impl);
};
using TensorIntrin = std::shared_ptr<TensorIntrinNode>;

/*! \brief Register `intrin` as `name`; a second registration fails unless `override`. */
void RegisterTensorIntrin(const std::string& name, TensorIntrin intrin, bool override);
/*! \brief The intrinsic named `name`; null when missing and `allow_missing`, else ValueError. */
TensorIntrin GetTensorIntrin(const std::string& name, bool allow_missing = false);
/*! \brief "tessera_ukr_f32_<MR>x<NR>_k<K>": the host's register-tile micro-kernel
 *  C[MR, NR] (local) += A[K, MR]^T B[K, NR] over an MR-row and an NR-wide panel packed k-major,
 *  implemented by a call of the C function tessera_ukr_f32_<MR>x<NR> that the host code
 *  generator defines (target/micro_kernel.h). GetTensorIntrin makes such an intrinsic on first
 *  use of its name. With `global_c`, "tessera_ukr_f32_<MR>x<NR>_k<K>_global": the same with C
 *  in "global" memory (a tile of the output itself, accumulated over k blocks of K). */
std::string MicroKernelIntrinName(int mr, int nr, int64_t k, bool global_c = false);
/*! \brief The micro-kernel intrinsic of an MR x NR tile over K (ValueError outside
 *  1 <= MR <= 16, 1 <= NR <= 128, K >= 1), C "local" or, with `global_c`, "global". */
TensorIntrin MakeMicroKernelIntrin(int mr, int nr, int64_t k, bool global_c = false);
/*! \brief The micro-kernel intrinsic `name` names, or null when it names none. */
TensorIntrin MicroKernelIntrinFromName(const std::string& name);
/*! \brief The registered names, sorted. */
std::vector<std::string> ListTensorIntrins();

}  // namespace schedule
}  // namespace tessera
