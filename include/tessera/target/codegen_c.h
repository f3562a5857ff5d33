// CodeGenC: the shared C source printer that the DSL, host-C and CUDA backends specialise.
#pragma once

#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"

namespace tessera {
namespace codegen {

/*! \brief Prints PrimFuncs as C. Expressions come back as strings with every binary operation
 *  parenthesised (`(a + b)`), so no precedence reasoning is needed; statements go to an
 *  indentation-aware stream. Target dialects override the virtual hooks (type names, address
 *  spaces, signatures, vectors, op calls). Variable names are unique per function. */
class CodeGenC : public ExprFunctor<std::string>, public StmtFunctor<void> {
 public:
  explicit CodeGenC(std::string target_name = "C");
  ~CodeGenC() override = default;

  /*! \brief Reserve a file-level name (a function, a helper) so no local variable takes it. */
  void ReserveGlobalName(const std::string& name);
  /*! \brief The prototype of `func` printed under `name`, with the trailing ';'. */
  std::string PrintPrototype(const std::string& name, const PrimFunc& func);
  /*! \brief Append the definition of `func`, printed under `name`, to the output. */
  void AddFunction(const std::string& name, const PrimFunc& func);
  /*! \brief Append raw text to the output. */
  void Emit(const std::string& text) { stream_ << text; }
  /*! \brief Everything emitted so far. */
  std::string Finish() const { return stream_.str(); }

  /*! \brief The C text of an expression. */
  std::string PrintExpr(const Expr& e) { return VisitExpr(e); }
  /*! \brief Emit the C statements of `s` at the current indentation. */
  void PrintStmt(const Stmt& s) { VisitStmt(s); }

  /*! \brief `name` made a valid C identifier (invalid characters become '_'). */
  static std::string SanitizeName(const std::string& name);
  /*! \brief `text` without one pair of parentheses that encloses all of it, if there is one. */
  static std::string StripOuterParens(const std::string& text);
  /*! \brief The C definition of `name`, the exact integer power `a ** b` of the integer type
   *  `type` (`is_signed`): repeated squaring in 64-bit unsigned arithmetic, so overflow wraps
   *  modulo 2^bits like numpy; a negative exponent gives the truncated 1 / a ** -b (1 for a = 1,
   *  +-1 for a = -1, else 0, also for a = 0). `qualifiers` precede the return type. */
  static std::string IntPowDefinition(const std::string& qualifiers, const std::string& name,
                                      const std::string& type, bool is_signed);

 protected:
  // ---- Hooks for dialects ----
  /*! \brief The C name of a value type ("int", "float"). Vectors are dialect-specific. */
  virtual std::string TypeName(DataType t, const Span& span);
  /*! \brief The qualifier of a memory scope ("__global"), or "" for none. */
  virtual std::string ScopeQualifier(const std::string& scope) { return ""; }
  /*! \brief The C type of a pointer variable ("__global int*"). */
  virtual std::string PointerTypeName(const PointerType& ptr, const Span& span);
  /*! \brief The C type a variable is declared with (pointer-aware). */
  virtual std::string VarTypeName(const VarNode* v);
  /*! \brief Text before the return type: "__kernel ", "inline ", "static ". */
  virtual std::string FunctionPrefix(const PrimFunc& func, bool prototype) { return ""; }
  /*! \brief Emitted before the body of `func`, inside its braces (CUDA's thread indices). */
  virtual void PrintFunctionPrologue(const PrimFunc& func) {}
  /*! \brief Emitted after the body of `func`, inside its braces (the DSL entry's barrier). */
  virtual void PrintFunctionEpilogue(const PrimFunc& func) {}
  /*! \brief The text between `while (` and `)`: the condition without its own outer
   *  parentheses (the DSL keeps them, as Compass prints `while ((i < 10))`). */
  virtual std::string WhileCondition(const Expr& cond);
  /*! \brief The exclusive end of a loop's range as printed: its extent when it starts at 0,
   *  min + extent folded when both are constants, `min + extent` otherwise. */
  std::string LoopEnd(const ForNode* op);
  /*! \brief The step clause of a serial loop over `name`: `++i` (the DSL writes `i += 1`). */
  virtual std::string LoopStep(const std::string& name) { return "++" + name; }
  /*! \brief After the opening brace of a loop over `name` (its loop variable's C name), before
   *  its body. */
  virtual void PrintLoopPrologue(const ForNode* op, const std::string& name) {}
  /*! \brief After the declaration `name` of a LetStmt's variable, before its body. */
  virtual void AfterLetBinding(const LetStmtNode* op, const std::string& name) {}
  /*! \brief The declaration of a parameter: `__global int* a`, `int n`. */
  virtual std::string PrintParam(const Var& param);
  /*! \brief Text before a local array's element type ("__lsram ", "__shared__ "). */
  virtual std::string AllocationPrefix(const std::string& scope) { return ""; }

  virtual std::string PrintIntImm(const IntImmNode* op);
  virtual std::string PrintFloatImm(const FloatImmNode* op);
  /*! \brief A scalar binary operation; vectors go to PrintVectorBinary. */
  virtual std::string PrintScalarBinary(const BinaryNode* op);
  /*! \brief A scalar binary operation on float8 values, computed in float32. */
  std::string PrintNarrowFloatBinary(const BinaryNode* op);
  virtual std::string PrintVectorBinary(const BinaryNode* op);
  virtual std::string PrintVectorNot(const NotNode* op);
  virtual std::string PrintVectorSelect(const SelectNode* op);
  virtual std::string PrintVectorCast(const CastNode* op);
  /*! \brief A call of an Op that the base does not handle itself. */
  virtual std::string PrintCallOp(const CallNode* op, const OpNode* callee);
  /*! \brief A call of another function of the module. */
  virtual std::string PrintCallFunction(const CallNode* op, const GlobalVarNode* callee);
  /*! \brief The C name a call of a module function uses (the callee's symbol). */
  virtual std::string CalleeName(const GlobalVarNode* callee) { return callee->name_hint; }
  /*! \brief A load whose last index is a vector (Ramp, gather). */
  virtual std::string PrintVectorLoad(const BufferLoadNode* op);
  /*! \brief A store whose last index is a vector; emits the statement. */
  virtual void PrintVectorStore(const BufferStoreNode* op);
  /*! \brief `tir.ret` inside Evaluate. */
  virtual void PrintReturn(const CallNode* ret);

  // ---- Helpers for dialects ----
  /*! \brief Throw tessera::Error (kBuild) "codegen for <what> is not supported on the <target>
   *  target". */
  [[noreturn]] void Unsupported(const std::string& what, const Span& span) const;
  /*! \brief Emit the current indentation. */
  void PrintIndent();
  /*! \brief Open a nested block; pass the result to EndScope. */
  int BeginScope();
  void EndScope(int scope_id);
  /*! \brief Give `v` a C name unique in the current function and return it. */
  std::string AllocVarName(const VarNode* v);
  /*! \brief The name given to `v`; InternalError if it has none. */
  std::string GetVarName(const VarNode* v) const;
  bool HasVarName(const VarNode* v) const { return var_names_.count(v) != 0; }
  /*! \brief The C expression of `buffer`'s base pointer, cast when the buffer's element type
   *  differs from the pointer's. */
  std::string BufferPointer(const BufferNode* buffer, const Span& span);
  /*! \brief The flat element index of an access: the single index plus the buffer's offset. */
  Expr FlatIndex(const BufferNode* buffer, const std::vector<Expr>& indices, const Span& span);
  /*! \brief `ptr` advanced by `offset` elements: `ptr` when the offset is 0, else `(ptr + i)`
   *  (`(ptr + x + c)` for an int32 offset x + c when split_constant_offsets_). */
  std::string OffsetPointer(const std::string& ptr, const Expr& offset);
  /*! \brief The element `index` of `ptr`: `ptr[i]` (`(ptr + x)[c]` for an int32 index x + c
   *  when split_constant_offsets_). */
  std::string IndexedElement(const std::string& ptr, const Expr& index);
  /*!
   * \brief Print an int32 index x + c (c a constant) as a pointer offset by x and then by c.
   *  The C compiler then computes x once for all the accesses at x + c (c in the addressing
   *  mode), where under -fwrapv each int32 sum x + c would be a wrapping add and a sign
   *  extension of its own (a GEMM micro-kernel spent 16 integer instructions per 32 FMAs on
   *  them). The two agree for every index whose x + c and x are within the buffer's int32
   *  range, i.e. every access in bounds of a buffer of fewer than 2^31 - |c| elements.
   */
  bool split_constant_offsets_ = false;
  /*! \brief Whether the target's prelude has the float8 conversions (tessera/runtime.h):
   *  float8 values are then bytes, converted by tessera_narrow_{to,from}_double. */
  bool float8_storage_ = false;
  /*! \brief Whether +, -, *, / and floordiv on integers narrower than 32 bits wrap to their type
   *  (C computes them in int), as TVM's LLVM code and constant folding do. The DSL has its own
   *  rule (Compass wraps 16-bit arithmetic only). */
  bool wrap_narrow_integers_ = true;
  /*! \brief Refuses `t` (located at `span`) when it is a narrow float the target cannot hold. */
  void CheckNarrowFloat(DataType t, const Span& span, const char* what);
  /*! \brief Whether `buffer` is a mutable scalar local (a `tessera.local_var` allocation). */
  bool IsLocalVarBuffer(const BufferNode* buffer) const {
    return local_vars_.count(buffer->data.get()) != 0;
  }
  /*! \brief Forget every per-function name and binding. */
  void ResetFunctionState();

  // ---- Expressions ----
  std::string VisitExpr_(const IntImmNode* op) override;
  std::string VisitExpr_(const FloatImmNode* op) override;
  std::string VisitExpr_(const StringImmNode* op) override;
  std::string VisitExpr_(const VarNode* op) override;
  std::string VisitExpr_(const SizeVarNode* op) override;
  std::string VisitExpr_(const CastNode* op) override;
#define TESSERA_CODEGEN_BINARY_DECL(name) std::string VisitExpr_(const name##Node* op) override;
  TESSERA_BINARY_NODES(TESSERA_CODEGEN_BINARY_DECL)
#undef TESSERA_CODEGEN_BINARY_DECL
  std::string VisitExpr_(const NotNode* op) override;
  std::string VisitExpr_(const SelectNode* op) override;
  std::string VisitExpr_(const RampNode* op) override;
  std::string VisitExpr_(const BroadcastNode* op) override;
  std::string VisitExpr_(const ShuffleNode* op) override;
  std::string VisitExpr_(const LetNode* op) override;
  std::string VisitExpr_(const CallNode* op) override;
  std::string VisitExpr_(const BufferLoadNode* op) override;

  // ---- Statements ----
  void VisitStmt_(const LetStmtNode* op) override;
  void VisitStmt_(const AttrStmtNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;
  void VisitStmt_(const BufferStoreNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;
  void VisitStmt_(const AllocateConstNode* op) override;
  void VisitStmt_(const DeclBufferNode* op) override;
  void VisitStmt_(const ForNode* op) override;
  void VisitStmt_(const WhileNode* op) override;
  void VisitStmt_(const IfThenElseNode* op) override;
  void VisitStmt_(const SeqStmtNode* op) override;
  void VisitStmt_(const EvaluateNode* op) override;
  void VisitStmt_(const BlockNode* op) override;
  void VisitStmt_(const BlockRealizeNode* op) override;
  void VisitStmt_(const BufferRealizeNode* op) override;

  /*! \brief Name of the target in error messages ("DSL", "C", "CUDA"). */
  std::string target_name_;
  std::ostringstream stream_;
  int indent_ = 0;
  /*! \brief The function being printed (for its return type). */
  PrimFunc current_func_;

  /*! \brief The names given so far: a statement printed twice (the two versions of a loop)
   *  takes the same names in each, SaveNames before the first and RestoreNames before the
   *  second. */
  struct Names {
    std::unordered_set<std::string> used;
    std::unordered_map<const VarNode*, std::string> vars;
    std::unordered_set<const VarNode*> local_vars;
    std::unordered_set<const BufferStoreNode*> initial_stores;
  };
  Names SaveNames() const { return {used_names_, var_names_, local_vars_, initial_stores_}; }
  void RestoreNames(Names names) {
    used_names_ = std::move(names.used);
    var_names_ = std::move(names.vars);
    local_vars_ = std::move(names.local_vars);
    initial_stores_ = std::move(names.initial_stores);
  }

 private:
  std::string PrintSignature(const std::string& name, const PrimFunc& func, bool prototype);

  std::unordered_set<std::string> global_names_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  /*! \brief Pointer variables of `tessera.local_var` allocations: accesses print the name. */
  std::unordered_set<const VarNode*> local_vars_;
  /*! \brief Stores printed as the initializer of their local's declaration. */
  std::unordered_set<const BufferStoreNode*> initial_stores_;
  static const BufferStoreNode* InitialStore(const Stmt& body, const VarNode* var);
};

}  // namespace codegen
}  // namespace tessera
