// CodeGenHost: C for the host CPU (targets "c" and "llvm"), with SIMD vectors, OpenMP loops and
// packed entry points.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/target/codegen_c.h"

namespace tessera {

/*! \brief What CodeGenHost produces: the C source, the module metadata it embeds and whether
 *  it needs OpenMP. */
/*! \brief One C file of a host library split into several compilation units. */
struct HostUnit {
  std::string code;
  /*! \brief The size in bytes of the largest function the unit defines. */
  size_t largest_function = 0;
};

struct HostSource {
  std::string code;
  /*! \brief JSON: {"entry": ..., "functions": [{"name", "symbol", "ret", "params": [...]}]}. */
  std::string metadata;
  bool uses_openmp = false;
  /*! \brief Empty, or (when the functions of `code` hold more than kHostSplitBytes) the same
   *  program as several C files, compiled each on its own (in parallel) and linked into one
   *  library: every file declares all functions; the private ones are defined once, without
   *  `static` (the library's symbols are hidden), and the last file holds the module's
   *  metadata and source. */
  std::vector<HostUnit> units;
};

/*! \brief Host C whose functions hold more than this many bytes is split into compilation units
 *  of about half that each (a function larger than that is a unit of its own). The PassContext
 *  option "tessera.host_split_bytes" overrides it (0: never split). */
constexpr size_t kHostSplitBytes = 256 * 1024;

namespace codegen {

/*! \brief Prints a lowered host module (after MakePackedAPI and LowerIntrin) as one C file for
 *  `tessera/runtime.h`. Packed functions (attr "calling_conv" = "packed") are exported as
 *  `__tessera_packed_<symbol>`; other functions are static. Vectors use GCC vector extensions
 *  (typedefs and per-type helpers are emitted on demand), `T.parallel` loops become
 *  `#pragma omp parallel for`, and pointer parameters of `tir.noalias` functions are
 *  `restrict`. The file embeds its metadata (`__tessera_module_info`) and its own text
 *  (`__tessera_module_source`) so that an exported library loads back alone. */
class CodeGenHost : public CodeGenC {
 public:
  CodeGenHost();
  /*! \brief The C of `mod`, split into units (HostSource::units) when its functions hold more
   *  than `split_bytes` bytes (units of about max(split_bytes / 2, 1) bytes). */
  HostSource Generate(const IRModule& mod, size_t split_bytes = kHostSplitBytes);

 protected:
  std::string TypeName(DataType t, const Span& span) override;
  std::string VarTypeName(const VarNode* v) override;
  std::string FunctionPrefix(const PrimFunc& func, bool prototype) override;
  std::string CalleeName(const GlobalVarNode* callee) override;

  /*! \brief A scalar int32 / int64 floordiv or floormod of a value that the enclosing loops'
   *  ranges prove non-negative by a positive constant (not a power of two) is C's `/` or `%`. */
  std::string PrintScalarBinary(const BinaryNode* op) override;
  std::string PrintVectorBinary(const BinaryNode* op) override;
  /*! \brief An integer floordiv / floormod of lanes by a positive constant, or "". */
  std::string PrintVectorFloorByConstant(const BinaryNode* op);
  std::string PrintVectorNot(const NotNode* op) override;
  std::string PrintVectorSelect(const SelectNode* op) override;
  std::string PrintVectorCast(const CastNode* op) override;
  std::string PrintCallOp(const CallNode* op, const OpNode* callee) override;
  std::string PrintVectorLoad(const BufferLoadNode* op) override;
  void PrintVectorStore(const BufferStoreNode* op) override;
  // Lane loops of float16 moved as int16 bits (strided accesses, gathers, scatters).
  std::string HalfLanesIn(DataType t, const std::string& at, const Span& span);
  std::string HalfLanesOut(DataType t, const std::string& at, const Span& span);
  // Predicated (masked) vector accesses of a Ramp index.
  const RampNode* PredicatedRamp(const BufferNode* buffer, const std::vector<Expr>& indices,
                                 const char* what, const Span& span, Expr* index);
  std::string PrintPredicatedLoad(const BufferLoadNode* op);
  void PrintPredicatedStore(const BufferStoreNode* op);
  void PrintReturn(const CallNode* ret) override;

  using CodeGenC::VisitExpr_;
  using CodeGenC::VisitStmt_;
  std::string VisitExpr_(const RampNode* op) override;
  std::string VisitExpr_(const BroadcastNode* op) override;
  std::string VisitExpr_(const ShuffleNode* op) override;
  std::string VisitExpr_(const CallNode* op) override;
  void AfterLetBinding(const LetStmtNode* op, const std::string& name) override;
  void VisitStmt_(const LetStmtNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;
  void VisitStmt_(const AttrStmtNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;
  /*! \brief `T.evaluate(T.call_packed("name", ...))`: a call of a registered global function
   *  through the runtime (tessera_call_global); buffers travel as DLTensors on the stack. */
  void VisitStmt_(const EvaluateNode* op) override;
  void VisitStmt_(const ForNode* op) override;
  /*! \brief A loop folding contiguous lanes into a scalar by max or min, printed as a tree
   *  (tessera_reduce_max_float32_16 and the like); false (nothing printed) for any other loop.
   *  `first`, when not null, is the statement before the loop: the fold's peeled first step. */
  bool PrintLaneFold(const ForNode* op, const BufferStoreNode* first);
  /*! \brief A serial loop that stores one broadcast value into consecutive vectors (a fill) as
   *  a call of a helper whose stores are aligned; false (nothing printed) for other loops.
   *  `tail`, when not null, is the loop after it: the fill's scalar remainder (the last
   *  elements of a row of no whole number of vectors), printed with it or not at all. */
  bool PrintFillLoop(const ForNode* op, const ForNode* tail = nullptr);
  /*! \brief A loop of S vector stores of stride S at consecutive offsets (a blocked layout's
   *  inner block written transposed): one interleave of the S vectors in registers and
   *  contiguous stores. False (nothing printed) for another loop. */
  bool PrintInterleavedStores(const ForNode* op);
  /*! \brief A nest of serial loops storing consecutive vectors of a caller's array, each a
   *  lane-wise value of loads that follow the store (a copy, a cast, a negation): printed as
   *  one flat loop whose stores are aligned to the vector, with one unaligned vector before
   *  and after; false (nothing printed) for other loops. `tail`, when not null, is the loop
   *  after a copy's serial nest: its scalar remainder (the last elements of a row of no whole
   *  number of vectors), copied with it (the last vector ending at the last element) or the
   *  pair not printed. */
  bool PrintAlignedStoreLoop(const ForNode* op, const ForNode* tail = nullptr);
  /*! \brief Print a parallel loop whose body is a restrict-parameter function (false: not
   *  applicable, nothing printed). */
  bool PrintOutlinedParallelLoop(const ForNode* op);
  /*! \brief The range of the variable of the outermost parallel loop, stated to the compiler
   *  at the top of its body (see ParallelRangeAssumption in codegen_host.cc). */
  void PrintLoopPrologue(const ForNode* op, const std::string& name) override;
  /*! \brief A statement list: a peeled lane fold and its loop print as one tree. */
  void VisitStmt_(const SeqStmtNode* op) override;
  /*! \brief Stack arrays start on a 64-byte boundary (a cache line, an AVX-512 vector). */
  std::string AllocationPrefix(const std::string& scope) override;
  /*! \brief Print the return of a failed check (the message is set): -1 from a packed entry,
   *  tessera_error_pending from a private function. */
  void PrintErrorReturn(const Span& span);

 private:
  /*! \brief The values of the scalar integer LetStmts printed so far (common subexpressions):
   *  what a vector index's divisibility is proved from. */
  VarMap int_lets_;
  /*! \brief The ranges of the loops (constant bounds) around the statement being printed. */
  arith::Analyzer loop_bounds_;
  /*! \brief Variables made while printing (PrintAlignedStoreLoop's), alive while their names
   *  are (names are keyed by the variable's address). */
  std::vector<Var> made_vars_;
  /*! \brief The vector typedef name for `t` (bool vectors are int32 lane masks). */
  std::string VectorType(DataType t, const Span& span);
  /*! \brief Define a helper function once; returns its name. */
  std::string Helper(const std::string& name, const std::string& definition);
  std::string LaneLoopHelper(const std::string& name, DataType result,
                             const std::vector<DataType>& args, const std::string& lane_expr,
                             const Span& span);
  /*! \brief A mask of int32 lanes from a comparison result of `bits`-wide lanes. */
  std::string ToMask32(const std::string& value, int bits, int lanes, const Span& span);
  /*! \brief A mask of `to_bits`-wide lanes from one of `from_bits`-wide lanes (a vector
   *  conversion: -1 stays -1). */
  std::string ToMask(const std::string& value, int from_bits, int to_bits, int lanes,
                     const Span& span);
  /*! \brief The vector condition `cond` printed as a mask of `bits`-wide lanes. */
  std::string PrintMask(const Expr& cond, int bits);
  /*! \brief A comparison of a unit-stride Ramp of signed integers with a lane-uniform value
   *  (a Broadcast), either way round, as a mask of `bits`-wide lanes comparing lane positions
   *  (see its definition); empty where `cmp` is no such comparison. */
  std::string RampCompareMask(const BinaryNode* cmp, int bits);
  /*! \brief A float16 <-> float32 vector conversion by sixteens of lanes with AVX-512F's
   *  instructions, or eights with F16C's, where the compiler targets them (GCC 12 converts a
   *  _Float16 vector lane by lane). */
  std::string HalfConvert(const std::string& value, DataType from, DataType to, const Span& span);
  /*! \brief A vector conversion that changes the width of integer lanes (int8 -> int32, int64 ->
   *  int8), or between integers of 8 or 16 bits and float32/float64 (through int32 lanes), in
   *  a helper that keeps its operand in a register (see its definition). */
  std::string IntWidthConvert(const std::string& value, DataType from, DataType to,
                              const Span& span);
  /*! \brief expf or tanhf (`fname`) of the float32 vector `arg` of type `t` whose result is
   *  rounded to float16: kernels accurate to that rounding (below PrintVectorCast). */
  std::string HalfRoundedMath(const std::string& fname, const std::string& arg, DataType t,
                              const Span& span);
  /*! \brief The division, remainder, floor division or floor remainder of the integer vectors
   *  `a` and `b` (printed operands of `op`) through a float division where that is exact, or ""
   *  when `op` is none of those or its lanes are not such integers. */
  std::string PrintVectorIntDivision(const BinaryNode* op, const std::string& a,
                                     const std::string& b);
  /*! \brief `a op b` of float16 vectors `t` compared as float32 (a mask of int32 lanes). */
  std::string HalfCompare(const std::string& a, const std::string& op, const std::string& b,
                          DataType t, const Span& span);
  std::string Metadata(const IRModule& mod);
  /*! \brief The C argument of a packed call: sets up a DLTensor for `tvm_stack_make_array`. */
  void PrintPackedArg(const Expr& arg, const std::string& slot, const std::string& prefix);
  // tir.trace: tvm_call_trace_packed(action, args...) calls the global function `action` with
  // the arguments before the statement that uses it, and stands for its return value if it
  // returned one, else for the traced (last) argument.
  std::string PrintTracePacked(const CallNode* op);
  void CallGlobalHelper();
  int packed_calls_ = 0;
  int run_once_scopes_ = 0;
  int static_handles_ = 0;   // tir.tvm_static_handle slots  // "coproc_uop_scope" bodies that run once (their static flags)
  /*! \brief Static arrays and the call of a tessera.check_dltensor_table assertion. */
  void PrintCheckTable(const CallNode* op);
  int check_tables_ = 0;

  bool in_packed_ = false;
  bool noalias_ = false;
  bool external_private_ = false;  // private functions without `static` (split units)
  int parallel_depth_ = 0;
  const ForNode* parallel_loop_ = nullptr;  // the outermost parallel loop being printed
  /*! \brief Parallel loop bodies printed as functions in this module (for their names). */
  int parallel_bodies_ = 0;
  int nontemporal_depth_ = 0;  // inside loops annotated "pragma_nontemporal"
  /// printing the loop that fences the streaming stores inside it once (per thread, for a
  /// parallel loop) rather than after each annotated loop
  bool fence_owner_ = false;
  bool fence_in_region_ = false;  // the owner is a parallel loop: its region ends with the fence
  /*! \brief The store fence's call statement (its helper defined once). */
  void PrintStoreFence();
  int fast_math_depth_ = 0;    // inside loops annotated "pragma_fast_math"
  /*! \brief A register tile in a local buffer, accessed in a loop only as whole vectors at
   *  constant offsets (a tiled product's accumulators over its reduction loop): the loop printed
   *  with each vector in a C variable, loaded before it and stored after it. False where the
   *  loop has no such buffer (nothing printed). */
  bool PrintWithPromotedTile(const ForNode* op);
  std::set<const VarNode*> allocated_;  // buffers of Allocate statements printed so far
  /// (buffer, constant element offset) -> the C variable holding that vector of the tile
  std::map<std::pair<const VarNode*, int64_t>, std::string> promoted_;
  int promoted_vars_ = 0;
  bool uses_openmp_ = false;
  std::set<const VarNode*> restrict_vars_;
  /*! \brief The arrays on the stack being printed: their element type, count and the
   *  parallel depth they are declared at (one declared outside a parallel loop is shared). */
  struct StackArray {
    DataType dtype;
    int64_t count = 0;
    int parallel_depth = 0;
  };
  std::map<const VarNode*, StackArray> stack_arrays_;
  /*! \brief A first-lanes access of a stack array whose whole vector lies in it: the name of a
   *  helper that reads or writes the whole vector (the inactive lanes' old values) instead of
   *  masking the memory access; "" otherwise. */
  std::string WholeVectorOfStackArray(const BufferNode* buffer, const RampNode* ramp, DataType t,
                                      bool store);
  std::map<std::string, std::string> symbols_;  // GlobalVar name -> C name
  std::vector<std::string> typedefs_;
  std::set<std::string> typedef_names_;
  std::vector<std::string> helpers_;
  std::set<std::string> helper_names_;
};

}  // namespace codegen

/*! \brief The host C of a module lowered through the "c" stages up to "finalize" (split into
 *  units above `split_bytes` of functions, see CodeGenHost::Generate). */
HostSource CodeGenHost(const IRModule& mod, size_t split_bytes = kHostSplitBytes);

/*! \brief The flags the host C build uses: `include_dir` holds tessera/runtime.h. */
std::vector<std::string> DefaultHostCompileFlags(const std::string& include_dir, bool openmp);
/*! \brief Whether the host C library has vector math variants to link (glibc's libmvec on
 *  x86-64; TESSERA_NO_LIBMVEC=1 turns it off). */
bool HaveLibmvec();

}  // namespace tessera
