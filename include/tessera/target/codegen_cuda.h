// CodeGenCUDA: CUDA C for the device kernels of a "cuda" build, and the host C that launches
// them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/arith/analyzer.h"
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
  explicit CodeGenCUDA(bool loop_addresses = true);
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

  // ---- Vectors (codegen_cuda_vector.cc) ----
  std::string PrintVectorLoad(const BufferLoadNode* op) override;
  void PrintVectorStore(const BufferStoreNode* op) override;
  void VisitStmt_(const LetStmtNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;

 private:
  /*! \brief A loop bound to `tag` or a T.launch_thread region: its body, guarded when its
   *  extent is below the launch extent. */
  void PrintThreadRegion(const std::string& tag, const VarNode* var, const Expr& extent,
                         const Stmt& body, const Span& span);
  /*! \brief Lane `i` of the vector expression `e` as a scalar expression; vector loads in it
   *  are printed (once per statement) as declarations before the statement. */
  Expr LaneOf(const Expr& e, int i);
  /*! \brief The lanes of a vector load: one vector word when aligned, else lane by lane. */
  const std::vector<Expr>& LoadLanes(const BufferLoadNode* op);
  /*! \brief Declares the scalar `value` of type `t` in a fresh variable. */
  Expr DeclareLane(DataType t, const std::string& value);
  /*! \brief Forgets the loads and let values declared for the previous vector statement. */
  void BeginVectorStatement();
  /*! \brief Declares one scalar variable per lane of `value` for the vector `var`. */
  void BindVectorVar(const Var& var, const Expr& value);
  /*! \brief The CUDA type of a vector memory word holding `t` ("float4", "uint2", ...), empty
   *  when `t` is not moved as one word. */
  std::string VectorWordType(DataType t);
  /*! \brief Whether `index` is a contiguous Ramp whose start is provably a multiple of `lanes`
   *  into a suitably aligned buffer. */
  bool VectorAccessAligned(const BufferNode* buffer, const Expr& index, int lanes);
  /*! \brief `ptr + offset` with the terms of `offset` that use the innermost serial loop's
   *  variable added last: `((ptr + rest) + inner)`, so that the address of `ptr + rest` is
   *  computed once outside that loop and each (unrolled) iteration adds a constant, which
   *  nvcc folds into the memory instruction's immediate offset. */
  std::string OffsetPointerByLoop(const std::string& ptr, const Expr& offset);

  bool uses_fp16_ = false, uses_bf16_ = false;

  // ---- Tensor-core fragments (codegen_cuda_wmma.cc) ----
  /*! \brief A "wmma.*" allocation as an array of nvcuda::wmma fragments; false for others. */
  bool PrintFragmentAllocation(const AllocateNode* op);
  /*! \brief TVM's fragment builtins and tvm_access_ptr as CUDA; false for other ops. */
  bool PrintFragmentCall(const CallNode* op, const std::string& name, std::string* out);
  bool uses_wmma_ = false;
  bool uses_wmma_f16_store_ = false;  // a float32 fragment stored as float16 (the helper)
  /*! \brief Threads of the kernel being printed when every threadIdx extent is a constant,
   *  else -1. */
  int64_t ThreadsPerBlock() const;
  bool uses_fp16_words_ = false, uses_bf16_words_ = false;

  // ---- Dynamic shared memory (codegen_cuda_shared.cc) ----
  /*! \brief Declares the dynamic shared memory of `func` when it has "shared.dyn" allocations. */
  void PrintDynamicSharedDeclaration(const PrimFunc& func);
  static constexpr const char* kDynamicSharedName = "__tsr_dyn_shmem";
  bool uses_dynamic_shared_ = false;
  bool uses_cp_async_ = false;  // cp.async helpers (kCUDAAsyncCopyHelpers)
  bool uses_bitcast_ = false;   // scalar reinterpret (kCUDABitCastHelper)
  std::map<std::string, std::string> int_pow_helpers_;  // exact integer powers, by name
  std::unordered_map<const VarNode*, Expr> dynamic_shared_offsets_;  // byte offsets
  arith::Analyzer vector_analyzer_;
  std::set<const VarNode*> vector_accessed_;  // allocations with vector accesses
  bool aligned_allocation_ = false;           // of the allocation being printed
  std::set<const VarNode*> wmma_accessed_;    // allocations wmma loads or stores address
  bool wmma_allocation_ = false;              // of the allocation being printed
  std::unordered_map<const BufferLoadNode*, std::vector<Expr>> vector_loads_;
  std::unordered_map<const VarNode*, std::vector<Expr>> vector_vars_;
  std::vector<Var> vector_temps_;
  std::unordered_map<const LetNode*, Expr> let_bodies_;  // of the current vector statement
  std::vector<const VarNode*> statement_lets_;  // vector lets bound in it               // the
                                                // variables declared for lanes and words
  std::map<std::string, Expr> launch_extents_;  // of the kernel being printed
  std::vector<const VarNode*> serial_loops_;    // the enclosing serial loops, innermost last
  bool loop_addresses_ = true;                  // OffsetPointerByLoop splits the sum
};

/*! \brief Helpers of the 16-bit vector words (codegen_cuda_vector.cc). */
extern const char* kCUDAHalfWordHelpers;
extern const char* kCUDABFloat16WordHelpers;
/*! \brief TESSERA_DYNAMIC_SHARED(name): the `extern __shared__` array of a kernel. */
extern const char* kCUDADynamicSharedMacro;
/*! \brief __tessera_wmma_store_f16<WARPS>(dst, fragment, ldm) (codegen_cuda_wmma.cc). */
extern const char* kCUDAWmmaStoreF16Helper;

/*! \brief The host C of a "cuda" build: CodeGenHost plus tessera.launch_kernel, which calls the
 *  launcher the runtime installs when it loads the library. */
class CodeGenCUDAHost : public CodeGenHost {
 protected:
  std::string TypeName(DataType t, const Span& span) override;
  std::string PrintCallOp(const CallNode* op, const OpNode* callee) override;
  /*! \brief An allocation of host code that kernels use is device memory (a workspace
   *  allocated through the runtime and freed at the end of its scope). */
  void VisitStmt_(const AllocateNode* op) override;
  using CodeGenHost::VisitStmt_;
};

}  // namespace codegen

/*! \brief Whether `func` is a device kernel of a GPU build. */
bool IsDeviceKernel(const PrimFunc& func);

/*! \brief The CUDA C source of the device kernels of `mod` (other functions are skipped).
 *  `loop_addresses`: cp.async addresses add the copy loop's term last (see
 *  OffsetPointerByLoop); false prints them as one sum (target option -loop_addresses=0, for
 *  comparing the two on a GPU). */
std::string CodeGenCUDA(const IRModule& mod, bool loop_addresses = true);

/*! \brief The host C of the non-kernel functions of `mod`, embedding the CUDA source and the
 *  compiled device code (`ptx`) so that the library (and an exported copy) is self-contained. */
HostSource CodeGenCUDAHost(const IRModule& mod, const std::string& cuda_source,
                           const std::string& ptx);

}  // namespace tessera
