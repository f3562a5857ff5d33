// CodeGenDSL: the vector DSL's OpenCL-C-style source and its host launcher.
#pragma once

#include <string>
#include <vector>

#include "tessera/target/codegen_c.h"

namespace tessera {
namespace codegen {

/*! \brief Prints a DSL module as OpenCL-C-style source for `tessera/dsl.h`: address-space
 *  qualifiers, OpenCL vector names (`int8`, `half16`), 32-bit mask predicates (`bool8`) and
 *  `__v*` intrinsic calls. Expects native 256-bit vectors (after the legalize stage). */
class CodeGenDSL : public CodeGenC {
 public:
  /*! \brief `opencl_spelling`: the text as Compass shows it, where a scalar broadcast to a
   *  vector prints as OpenCL C's cast `(int8)x` and an unmasked bfloat16 vector +, - or * as the
   *  C operator; otherwise `(int8)__vbcast(x)` and `__vadd(x, y, ALL_TRUE_h)`, which GCC
   *  compiles (see the free function CodeGenDSL). */
  explicit CodeGenDSL(bool opencl_spelling = false);

  /*! \brief The whole source: the include, every prototype, then every definition. The entry
   *  is the function named `entry` (GlobalVar name or global_symbol); empty picks the one
   *  marked "tessera.is_entry", or the only function. */
  std::string Generate(const IRModule& mod, const std::string& entry);
  /*! \brief The packed entry point (see CodeGenDSLLauncher), to append to `Generate`'s source. */
  std::string GenerateLauncher(const IRModule& mod, const std::string& entry);

  /*! \brief The C symbol of a function: its "global_symbol", else its GlobalVar name. */
  static std::string SymbolOf(const GlobalVar& gv, const PrimFunc& func);

 protected:
  std::string TypeName(DataType t, const Span& span) override;
  std::string ScopeQualifier(const std::string& scope) override;
  std::string PrintParam(const Var& param) override;
  std::string FunctionPrefix(const PrimFunc& func, bool prototype) override;
  void PrintFunctionEpilogue(const PrimFunc& func) override;
  std::string AllocationPrefix(const std::string& scope) override;
  std::string WhileCondition(const Expr& cond) override;

  std::string PrintIntImm(const IntImmNode* op) override;
  std::string PrintFloatImm(const FloatImmNode* op) override;
  std::string PrintScalarBinary(const BinaryNode* op) override;
  /*! \brief `i += 1`, as Compass's generated loops step. */
  std::string LoopStep(const std::string& name) override { return name + " += 1"; }
  std::string PrintVectorBinary(const BinaryNode* op) override;
  std::string PrintVectorNot(const NotNode* op) override;
  std::string PrintVectorSelect(const SelectNode* op) override;
  std::string PrintCallOp(const CallNode* op, const OpNode* callee) override;
  std::string CalleeName(const GlobalVarNode* callee) override;
  std::string PrintVectorLoad(const BufferLoadNode* op) override;
  void PrintVectorStore(const BufferStoreNode* op) override;

  std::string VisitExpr_(const CastNode* op) override;
  std::string VisitExpr_(const BroadcastNode* op) override;
  std::string VisitExpr_(const RampNode* op) override;
  std::string VisitExpr_(const ShuffleNode* op) override;
  std::string VisitExpr_(const CallNode* op) override;
  using CodeGenC::VisitExpr_;
  void VisitStmt_(const LetStmtNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;
  using CodeGenC::VisitStmt_;

 private:
  /*! \brief `ALL_TRUE_w` / `_h` / `_b` for a vector of `lanes` lanes. */
  std::string AllTrue(int lanes, const Span& span) const;
  /*! \brief The mask argument of a vector operation: the predicate, or all lanes. */
  std::string MaskArg(const Expr& predicate, int lanes, const Span& span);
  /*! \brief `(__global int8*)(a + base)`: the address of a vector access, typed for dispatch. */
  std::string VectorAddress(const BufferNode* buffer, const Expr& base, DataType vtype,
                            const Span& span);
  /*! \brief `__vmov_w(0x...)` or `ALL_TRUE_w`: the predicate of constant lanes. */
  std::string ConstMask(const std::vector<bool>& lanes, const Span& span) const;
  /*! \brief A call of a "dsl.*" op whose C form is not `name(args)`; empty for the others. */
  std::string PrintDslCall(const CallNode* op, const OpNode* callee);
  /*! \brief Bitwise and shift calls ("tir.bitwise_*", "tir.shift_*") on vectors and masks. */
  std::string PrintVectorBitwise(const CallNode* op, const std::string& mask = "");
  /*! \brief A vector binary operation; `mask` (a printed mask) replaces its all-lanes mask. */
  std::string PrintVectorBinary(const BinaryNode* op, const std::string& mask);
  /*! \brief `op(a, b, mask)` for `x` under `mask` (dsl.undef_inactive); empty if `x` takes none. */
  std::string MaskedIntrinsic(const Expr& x, const Expr& mask);
  /*! \brief File-scope `__constant` tables of S.alloc_const, emitted before the functions. */
  void EmitConstantTables(const std::vector<std::pair<GlobalVar, PrimFunc>>& funcs);
  /*! \brief Entry first, then callees depth-first in call order; rejects recursion. */
  std::vector<std::pair<GlobalVar, PrimFunc>> CollectFunctions(const IRModule& mod,
                                                               const std::string& entry);

  PrimFunc entry_;
  /*! \brief Constant allocations -> the file-scope array holding their data. */
  std::unordered_map<const VarNode*, std::string> constant_tables_;
  /*! \brief GlobalVar name -> C symbol, for calls. */
  std::unordered_map<std::string, std::string> symbols_;
  /*! \brief Read only where a Broadcast and a vector binary operator print: how a splat and a
   *  bfloat16 +, -, * are spelled. */
  bool opencl_spelling_ = false;
  /*! \brief How many calls' arguments are being printed. A splat that is an operand of an
   *  intrinsic keeps `(vtype)__vbcast(x)` in both texts, as Compass broadcasts an intrinsic's
   *  scalar operand through its vbcast call; only a splat outside calls (a vector constructor,
   *  a select's value) is shown as OpenCL C's `(vtype)x`. */
  int call_depth_ = 0;
};

}  // namespace codegen

/*! \brief The OpenCL-C-style source of `mod` with `entry` as the `__kernel`. Throws
 *  tessera::Error (kBuild) for IR the DSL target cannot print.
 *
 *  Two spellings of one text. A scalar broadcast to a vector is OpenCL C's cast `(int8)x`, as
 *  Compass prints it, which GCC's vector extension refuses (clang accepts it only for
 *  ext_vector_type vectors, and tessera/dsl.h uses GCC's vector_size ones). So the compiler
 *  always gets `opencl_spelling = false`, where the same splat is `(int8)__vbcast(x)`
 *  (tessera/dsl.h: every lane set to x, the meaning OpenCL gives the cast); the Executor's
 *  `.c_code` shows `opencl_spelling = true`. Likewise an unmasked bfloat16 vector +, - or * is
 *  the operator `(a + b)` in the shown text, as Compass prints it (its compiler has bfloat16
 *  vector arithmetic), and `__vadd(a, b, ALL_TRUE_h)` in the compiled one: tessera/dsl.h's
 *  bfloat16x16 is a struct, which C has no operators for, and its __vadd computes each lane in
 *  float and rounds once to nearest even, the operator's meaning. Both texts come from the same
 *  generator over the same IR, and the flag is read in two places (the Broadcast printer and the
 *  vector binary printer), so the shown text is the compiled one with each `__vbcast(` and its
 *  closing parenthesis removed and each `__vadd/__vsub/__vmul(x, y, ALL_TRUE_h)` written as
 *  the operator. The DSL pipeline checks that on every build (pipeline_dsl.cc, ShownSpelling);
 *  tests/python/dsl/test_splat_spelling.py builds splat kernels with each C compiler that
 *  compiles tessera/dsl.h and checks them against numpy, and
 *  tests/python/dsl/test_bf16_vector_operators.py the bfloat16 operators. */
std::string CodeGenDSL(const IRModule& mod, const std::string& entry, bool opencl_spelling = false);

/*! \brief Host-only C to append to CodeGenDSL's source: the kernel's packed entry point
 *  `__tessera_packed_<entry>` (a TesseraPackedFunc, tessera/runtime_abi.h), which checks every
 *  argument as MakePackedAPI's entry points do (count, kind, dtype, null, read-only, layout and
 *  the elements the kernel provably accesses; TESSERA_RC_TYPE_ERROR / TESSERA_RC_VALUE_ERROR with
 *  a message naming the parameter), converts the scalars to their C types and runs the kernel on
 *  the 4 TECs; also `__tessera_get_last_error` and the profiling readers. */
std::string CodeGenDSLLauncher(const IRModule& mod, const std::string& entry);

}  // namespace tessera
