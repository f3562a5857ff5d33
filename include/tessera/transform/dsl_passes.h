// Passes of the vector DSL's pipeline ("dsl.*"); each also registers itself under its name.
#pragma once

#include "tessera/ir/dsl_target.h"
#include "tessera/transform/pass.h"

namespace tessera {
namespace transform {

/*! \brief Split flexible- and multiple-width vectors into native 256-bit ones (the last part
 *  padded with inactive lanes), and regroup masks into the parts of the data they control. */
Pass AlignVectorWidth();

/*! \brief Replace a name bound once (LetStmt) to a scalar constant, a broadcast constant or a
 *  constant mask by its value and drop the binding (a variable used by a buffer definition keeps
 *  it), as Compass's DSL folds such names before code generation. */
Pass FoldConstant();

/*! \brief Replace the lane masks of a vectorized loop's tail (tir.get_active_lane_mask, put on
 *  its loads and stores by tir.VectorizeLoop) by the DSL's masks: a constant mask where the
 *  count of active lanes is known, else a tail mask of that count. */
Pass LowerActiveLaneMask();

/*! \brief Replace a loop of one iteration (constant extent 1, no annotation, unit step, not
 *  thread-bound or parallel) by its body with the loop variable replaced by the loop's start, as
 *  Compass's build of a scheduled function drops such loops when it lowers the blocks. */
Pass RemoveUnitLoops();

/*! \brief Write a scalar integer floordiv / floormod whose numerator is provably non-negative and
 *  whose divisor is provably positive as the truncating Div / Mod (C's `/` and `%`). */
Pass TruncDivMod();

/*! \brief Name a loop variable of more than 20 characters i, j, k, ... by the depth of the
 *  renamed loops around it, as Compass names such loops in its C (the code generator makes the
 *  names unique: a second `i` prints as `i_1`). */
Pass RenameLoopVar();

/*! \brief Compute a computation done more than once in a statement and the statements under it
 *  once, into a `cse_var_<n>` LetStmt, by the rules of TVM's tir.transform.CommonSubexprElimTIR
 *  (never a call or a buffer load; an `if` or loop shares only what two of its parts do), on
 *  scalar computations (vector operations are intrinsic calls in Compass). Compass
 *  runs that pass in its DSL build before legalizing vector widths; here it opens the legalize
 *  stage. Off with "tir.disable_cse_tir", or when disabled_pass names it or
 *  "tir.CommonSubexprElimTIR" (as Compass's tests disable it). */
Pass CommonSubexprElim();

/*! \brief Fuse DSL operations the target does in one instruction (x & ~y: vbclr, x | ~y: vbset,
 *  ~(x & y): vnand, ~(x | y): vnor, on integer vectors and masks) and reduce integer vector
 *  multiplications by 2^k to shifts and float divisions by 2^k to multiplications by 2^-k; every
 *  rewrite computes the same bits as the original. */
Pass CombineInstructions();

/*! \brief Reject static `lsram` allocations beyond the target's local SRAM per TEC and `shared`
 *  allocations beyond its shared SRAM per core, naming the allocation that overflows. */
Pass VerifyLocalMemory(const DSLTargetDesc& target);

/*! \brief Reject the intrinsic forms only X3 targets have (S.vrpmax/S.vrpmin with
 *  return_idx=True) on other targets, at the call that uses them. */
Pass VerifyTargetFeatures(const DSLTargetDesc& target);

/*! \brief Loops bound to "threadIdx.x" (the TECs of a TensorIR kernel built for a DSL target)
 *  become serial loops, so that the host build runs the TECs one after another; a bound loop
 *  whose body synchronises threads is an error. */
Pass SerializeTecBinding();

}  // namespace transform
}  // namespace tessera
