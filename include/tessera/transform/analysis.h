// Analyses over lowered modules used by builds and runtimes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace arith {
class Analyzer;
}  // namespace arith
namespace transform {

/*! \brief For each parameter of `entry`: the number of scalar elements a pointer parameter is
 *  known to be accessed at (highest constant index + 1, through subroutine calls too; a pointer
 *  to vectors counts their lanes, as the array it is given holds them), 0 when it is not
 *  accessed or not a pointer, -1 when an access index is not a constant (nor an affine form of
 *  loops with constant bounds). Only accesses that every call reaches count: one under a
 *  condition, a scalar select, a mask that is not constant, in a loop that may run no
 *  iteration, or after a possible return/break, raises nothing (the checked mode catches it). */
std::vector<int64_t> PointerAccessExtents(const IRModule& mod, const std::string& entry);

/*! \brief For each parameter of `entry`: whether the kernel may write through it. A pointer is
 *  written when it is stored to (in `entry` or a subroutine it is passed to) or used in a way the
 *  analysis does not follow (its address taken, handed to an intrinsic); only a pointer that is
 *  provably just read is false, so a read-only array may be passed for it. */
std::vector<bool> PointerWrites(const IRModule& mod, const std::string& entry);

/*! \brief A well-formedness violation and where it was found (the use site when known). */
struct WellFormedError {
  std::string message;
  Span span;
  /*! \brief For tir.analysis.verify_well_formed: the violation with the locations involved, in
   *  the terms TVM's checker reports it (empty: `message` says it all). */
  std::string detail = "";
};

/*!
 * \brief The well-formedness violations of `func`, in program order: a variable defined twice,
 *  a variable used outside the scope of its definition (block iterators outside their block
 *  included), and, inside a block with iterators, a loop variable of an enclosing loop used
 *  instead of the block's iterators. Variables with no definition are free (symbolic) and allowed.
 *  Also VerifyConstantDivisors. Buffer bounds are not checked here (TVM's parser accepts a
 *  constant index past a buffer's shape); the build checks them (tir.VerifyBufferBounds).
 */
std::vector<WellFormedError> VerifyWellFormed(const PrimFunc& func);

/*! \brief Variables that more than one PrimFunc of `mod` defines (a parameter, let, loop,
 *  allocation, block iterator or thread binding): each function must bind its own. */
std::vector<WellFormedError> VerifyDefinitionsPerFunction(const IRModule& mod);

/*! \brief TVM's tir.analysis.verify_ssa: whether every variable of `func` is bound once (as a
 *  parameter, let, loop, allocation, block iterator or thread), except that one let expression
 *  may appear several times (`z + z` with `z = T.Let(...)`): a let may bind a variable again to
 *  an equal value. */
bool VerifySSA(const PrimFunc& func);

/*! \brief TVM's tir.analysis.detect_buffer_access_lca: for each buffer `func` accesses (its
 *  parameters' and its blocks' buffers), the innermost For or Block that encloses every access,
 *  or null for the function's root. A reduction block's writes are lifted above its reduction
 *  loops, a match_buffer counts as its source accessed at its block, and a buffer in global
 *  memory is accessed no deeper than the loops or launches bound to blockIdx. */
std::vector<std::pair<Buffer, Stmt>> DetectBufferAccessLCA(const PrimFunc& func);

/*! \brief TVM's tir.analysis.calculate_allocated_bytes: per memory scope, the most bytes of
 *  Allocate statements live at once (constant extents; a scope allocated only with symbolic
 *  extents counts 0). */
std::vector<std::pair<std::string, int64_t>> CalculateAllocatedBytes(const PrimFunc& func);

/*! \brief Why `func` is not pure, at the first cause (TVM's tir.analysis.is_pure_function):
 *  a store to a buffer it did not allocate, or a call of an op that may write state or has
 *  unknown effects (call_extern, a call of another function); none for a pure function. */
std::optional<WellFormedError> FindImpurity(const PrimFunc& func);

/*! \brief TVM's tir.analysis.estimate_tir_flops: the arithmetic operations (+ - * / % min max)
 *  a statement executes, each loop multiplying its body by its most iterations (1 when
 *  unbounded), the larger of two branches taken per dtype; comparisons and index arithmetic
 *  are free. A module sums its functions, taking a function's "estimated_flops" attribute as
 *  given. */
double EstimateTIRFlops(const Stmt& stmt);
double EstimateTIRFlops(const IRModule& mod);

/*! \brief What IdentifyMemCpy found: the source and destination regions of a copy, or (both
 *  null) the reason the loop nest is not one. */
struct MemCpyResult {
  BufferRegion source, dest;
  std::string reason;
};

/*!
 * \brief TVM's tir::IdentifyMemCpy: whether the perfect loop nest from `loop` down to its first
 *  non-loop statement is a plain copy `B[dst(iters)] = A[src(iters)]` of one contiguous region of
 *  A into one of B in the same element order: both flat offsets are one-to-one affine maps of
 *  the (constant) loop iterators, each spans exactly as many elements as the loops visit, and
 *  both split the iterators alike. The regions are over the loops of the nest; variables bound
 *  outside it (in `ana`) stay symbolic.
 */
MemCpyResult IdentifyMemCpy(const For& loop, arith::Analyzer& ana);

/*! \brief IdentifyMemCpy at every loop of `stmt`, in pre-order, each loop's enclosing loops
 *  bound (TVM's tir.analysis._identify_memcpy, a testing entry). */
std::vector<MemCpyResult> IdentifyMemCpyLoops(const Stmt& stmt);

/*! \brief Accesses whose constant index (or constant Ramp lanes) lies outside a constant buffer
 *  extent, at the access's span. Pass "tir.VerifyBufferBounds" throws on the first one. */
std::vector<WellFormedError> VerifyConstantBufferBounds(const PrimFunc& func);

/*! \brief Integer divisions and modulos by a constant zero, at their spans (VerifyBufferBounds
 *  reports them too). */
std::vector<WellFormedError> VerifyConstantDivisors(const PrimFunc& func);

/*! \brief Throws a located build error at the first scalable vector in `func` (a value of type
 *  such as float32xvscalex4, a Ramp/Broadcast of T.vscale() * k lanes, a T.vscale() call):
 *  `target` ("c", "cuda", ...) has no scalable vectors (Arm SVE) to lower them to. */
void RefuseScalableVectors(const PrimFunc& func, const std::string& target);
/*! \brief RefuseScalableVectors over every PrimFunc of `mod`. */
void RefuseScalableVectors(const IRModule& mod, const std::string& target);

}  // namespace transform
}  // namespace tessera
