// CodeGenCUDA: CUDA C for the device kernels of a "cuda" build, and the host C that launches
// them.
#pragma once

#include <map>
#include <set>
#include <string>

#include "tessera/target/codegen_c.h"
#include "tessera/target/codegen_host.h"

namespace tessera {
namespace codegen {

/*! \brief Prints device kernels (calling_conv "device_kernel") as `extern "C" __global__`
 *  functions for NVRTC. Loops bound to blockIdx/threadIdx read the hardware indices (guarded
 *  when their extent is below the launch extent), "shared" allocations are `__shared__`,
 *  "local" ones are registers, float16/bfloat16 are `half`/`nv_bfloat16` and
 *  tir.tvm_storage_sync is `__syncthreads()`. The prelude defines the fixed-width integer types
 *  and floor division, as NVRTC has no C library headers. */
class CodeGenCUDA : public CodeGenC {
 public:
  CodeGenCUDA();
  std::string Generate(const IRModule& mod);

 protected:
  std::string TypeName(DataType t, const Span& span) override;
  std::string FunctionPrefix(const PrimFunc& func, bool prototype) override;
  void PrintFunctionPrologue(const PrimFunc& func) override;
  std::string PrintParam(const Var& param) override;
  std::string AllocationPrefix(const std::string& scope) override;
  std::string PrintFloatImm(const FloatImmNode* op) override;
  std::string PrintScalarBinary(const BinaryNode* op) override;
  std::string PrintCallOp(const CallNode* op, const OpNode* callee) override;

  using CodeGenC::VisitStmt_;
  void VisitStmt_(const ForNode* op) override;
  void VisitStmt_(const AttrStmtNode* op) override;

 private:
  /*! \brief A loop bound to `tag` or a T.launch_thread region: its body, guarded when its
   *  extent is below the launch extent. */
  void PrintThreadRegion(const std::string& tag, const VarNode* var, const Expr& extent,
                         const Stmt& body, const Span& span);
  bool uses_fp16_ = false, uses_bf16_ = false;
  std::map<std::string, Expr> launch_extents_;  // of the kernel being printed
};

/*! \brief The host C of a "cuda" build: CodeGenHost plus tessera.launch_kernel, which calls the
 *  launcher the runtime installs when it loads the library. */
class CodeGenCUDAHost : public CodeGenHost {
 protected:
  std::string TypeName(DataType t, const Span& span) override;
  std::string PrintCallOp(const CallNode* op, const OpNode* callee) override;
};

}  // namespace codegen

/*! \brief Whether `func` is a device kernel of a GPU build. */
bool IsDeviceKernel(const PrimFunc& func);

/*! \brief The CUDA C source of the device kernels of `mod` (other functions are skipped). */
std::string CodeGenCUDA(const IRModule& mod);

/*! \brief The host C of the non-kernel functions of `mod`, embedding the CUDA source and the
 *  compiled device code (`ptx`) so that the library (and an exported copy) is self-contained. */
HostSource CodeGenCUDAHost(const IRModule& mod, const std::string& cuda_source,
                           const std::string& ptx);

}  // namespace tessera
