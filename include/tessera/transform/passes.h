// Factories of the built-in passes; each pass also registers itself under its name.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tessera/transform/pass.h"

namespace tessera {
namespace transform {

/*! \brief Fold constants, canonicalise comparisons (a > b -> b < a), put int32/int64 index
 *  arithmetic in canonical form with the arith::Analyzer (loop ranges and let values known), and
 *  remove branches and asserts whose conditions it decides. */
Pass Simplify();
/*! \brief tir.Simplify without inlining let bindings: the DSL pipeline keeps the variables
 *  its user named, as Compass's generated C does. */
Pass SimplifyKeepingLets();
/*! \brief Reject constant indices outside constant buffer extents (at the access's span). */
Pass VerifyBufferBounds();
/*! \brief TVM's tir.analysis.OOBChecker: a schedule error at the first access provably outside
 *  its buffer (a constant index, or one of loops of constant extents, on every iteration). */
Pass OOBChecker();
/*! \brief Remove statements without effect (Evaluate of constants, empty loops and branches). */
Pass RemoveNoOp();
/*! \brief Drop an `if` where running one branch in the other's place changes nothing (TVM's overcompute). */
Pass ReduceBranchingThroughOvercompute();
/*! \brief Record the target name in each function's "target" attribute. */
Pass BindTarget(const std::string& target);
/*! \brief Schedule every function that carries no schedule with the automatic schedule
 *  (autoschedule::AutoSchedule) for the target in its "target" attribute; the facts can be
 *  overridden with the config record "tir.AutoSchedule" ({"vector_bits": 256, "cores": 4}). */
Pass AutoSchedule();
/*! \brief On a host target, in the functions that carry no schedule: topi's argmax / argmin of
 *  rows (first index, int32 / int64 / float64, the block search of at least 512 elements)
 *  recognized by its structure and made one call a row of the code generator's one-pass search
 *  (tessera/target/arg_extreme.h). The pipeline runs it just before tir.AutoSchedule, only when
 *  that runs. */
Pass ArgExtremeRows();

// ---- TensorIR lowering for the host CPU (tensorir.md §7), in pipeline order ----

/*! \brief Make every loop start at 0 (the old minimum is added to the loop variable's uses). */
Pass CanonicalizeLoop();
/*! \brief On the host, topi.sort / argsort / topk's rank-and-gather blocks over the last axis
 *  of a function that carries no schedule become one call a row of the code generator's row sort
 *  (tessera/target/sort_rows.h); runs before tir.AutoSchedule (src/transform/sort_rows.cc). */
Pass SortRows();
/*! \brief Turn each block's T.init() into an `if` on the reduction iterators being at their
 *  minimum, placed before the block body. */
Pass LowerInitBlock();
/*! \brief TVM's rules: each block allocation goes to the lowest common ancestor of its accesses
 *  (tir.analysis.detect_buffer_access_lca); block reads/writes drop the buffers allocated inside. */
Pass PlanAndUpdateBufferAllocationLocation();
/*! \brief The pipeline's planner: move each block allocation down to the lowest loop or block
 *  enclosing its accesses, entering a loop only when its iterations touch disjoint parts of the
 *  buffer. */
Pass PlanBufferAllocationDown();
/*! \brief Replace block iterators by their bindings; every block becomes opaque. */
Pass ConvertBlocksToOpaque();
/*! \brief Shrink each block allocation to the region its body accesses (loops inside the block
 *  relaxed over their ranges) and shift the accesses accordingly. */
Pass CompactBufferAllocation();
/*! \brief Rewrite accesses to T.match_buffer views as accesses to their source buffers, after
 *  checking that each view fits its region. */
Pass LowerMatchBuffer();
/*! \brief Remove blocks: allocations become Allocate + DeclBuffer, predicates become `if`; unit
 *  loops disappear, thread-bound loops become launch_thread attributes and pragma annotations
 *  attribute statements (TVM's rules). `keep_loops` (tessera's own pipeline) leaves loops as
 *  they are. */
Pass LowerOpaqueBlock(bool keep_loops = false);
/*! \brief Turn multi-dimensional buffer accesses into 1-D ones (row-major or by strides). */
Pass FlattenBuffer();
/*! \brief Turn each T.vectorized loop into one vector of its extent (Ramp/Broadcast code, TVM's
 *  rules); statements that cannot be vectorized keep a serial loop over the lanes. With
 *  `enable_vectorize` false or "tir.disable_vectorize" set, vectorized loops become serial.
 *  `mask_tails` (the vector DSL's pipeline): a body under `if lane + k < limit` becomes its
 *  loads and stores masked by the lanes where the condition holds, whatever their base. */
Pass VectorizeLoop(bool enable_vectorize = true, bool mask_tails = false);
/*! \brief Before VectorizeLoop in a build: split vectorized loops at the target's vector width
 *  (serial loops over vectorized chunks); loops the host cannot vectorize become serial.
 *  `native_vector_bits` > 0 (the vector DSL's targets): chunks of one native vector of the
 *  widest element type, and a body under `if lane + k < limit` stays vectorized (VectorizeLoop
 *  with `mask_tails` masks its accesses). */
Pass SplitVectorizedLoops(int native_vector_bits = 0);
/*! \brief A vector store of a number of lanes that is not a power of two (which the host's
 *  vector types cannot hold) becomes stores of power-of-two pieces. */
Pass LegalizeVectorLanes();
/*! \brief The widest SIMD vector of the host CPU in bits: 512 (AVX-512), 256 (AVX2/AVX) or 128. */
int HostVectorBits();
/*! \brief Prefetch, at the top of loops annotated "pragma_prefetch" = d, the global reads d
 *  iterations ahead (__builtin_prefetch). */
Pass InjectPrefetch();
/*! \brief Allocations marked "double_buffer_scope" inside a loop get two halves: the next
 *  iteration fills one while the current one reads the other. */
Pass InjectDoubleBuffer();
/*! \brief Buffer variables accessed only as aligned N-lane vectors point to N-lane elements. */
Pass PointerValueTypeRewrite();
/*! \brief Test loop-invariant conditions (a loop's whole body) once, outside the loop. */
Pass HoistIfThenElse();
/*! \brief TVM's "basic" variant of HoistIfThenElse: if-statement conditions only. */
Pass HoistIfThenElseBasic();
/*! \brief Loop-invariant conditions and let bindings move out of loops ("tir.HoistExpression"
 * record: hoisted_conditionals, hoisted_let_bindings bit sets). */
Pass HoistExpression();
/*! \brief Split constant loops where an inner `if` stops being provably true (tails). */
Pass LoopPartition();
/*! \brief TVM's common subexpression elimination: a computation done more than once by a
 *  statement and those under it is bound once to a `cse_v<n>` LetStmt, placed as deep as covers
 *  its uses (an `if`'s branch or loop body when only it repeats the computation); calls and buffer
 *  loads are never bound. identify_equiv_terms: equivalent terms are one computation. Nothing
 *  when enable_cse_tir is false. */
Pass CommonSubexprElimTIR(bool enable_cse_tir = true, bool identify_equiv_terms = false);
/*! \brief The host build's elimination: subexpressions (buffer loads included) repeated within
 *  one statement bound just before it (off with "tir.disable_cse_tir", or when disabled_pass
 *  names it or "tir.CommonSubexprElimTIR"). */
Pass StatementCSE();
/*! \brief A vector load read by several stores of a straight-line run, loaded once (host). */
Pass HoistSharedVectorLoads();
/*! \brief Share storage between allocations whose lifetimes do not overlap (unless
 *  "tir.disable_storage_rewrite"). */
Pass StorageRewrite();
/*! \brief Unroll T.unroll loops and small loops chosen by the "tir.UnrollLoop" options. */
Pass UnrollLoop();
/*! \brief Remove user T.Assert statements when "tir.disable_assert" is set. */
Pass SkipAssert();
/*! \brief Drop T.evaluate(T.assume(...)) statements (then tir.RemoveNoOp). */
Pass RemoveAssume();
/*! \brief Drop stores of values that depend on T.undef() (then tir.RemoveNoOp). */
Pass RemoveStoreUndef();
/*! \brief Narrow every int64 index, loop variable, shape and parameter to int32 (a buffer of
 *  int64 elements is an error). */
Pass ForceNarrowIndexToInt32();
/*! \brief Narrow the loop, block and thread variables of a function's body, with the constants
 *  and casts of its indices, to `target_bits`-bit integers where their bounds provably fit. */
Pass NarrowDataType(int target_bits);
/*! \brief Replace each call statement of a private function by the function's body (not:
 *  recursive functions, buffer parameters, block bodies, calls across targets). */
Pass InlinePrivateFunctions();
/*! \brief Give every variable of a module one definition (functions that define a variable
 *  again get new definitions; a thread variable is defined once per function). */
Pass ConvertSSA();
/*! \brief Wrap the device regions of a function whose target has a host in a "target"
 *  attribute of the device target. */
Pass AnnotateDeviceRegions();
/*! \brief Host functions: make each distinct tvm_thread_context(ctx) once per function, thread
 *  launch or parallel loop, in a variable bound before it. */
Pass CombineContextCall();
/*! \brief Parallel loops become serial. */
Pass ConvertForLoopsToSerial();
/*! \brief Wrap a function's body in a "device_scope" attribute. */
Pass DecorateDeviceScope();
/*! \brief A Select whose values read memory or have effects becomes T.if_then_else. */
Pass RewriteUnsafeSelect();
/*! \brief bfloat16 / float8 arithmetic done in float32 (float16 with the F16 variant), and
 *  bfloat16 / float8 memory retyped as uint16 / uint8, unless the CUDA target has the type. */
Pass BF16ComputeLegalize();
Pass BF16StorageLegalize();
Pass FP8ComputeLegalize();
Pass FP8ComputeLegalizeF16();
Pass FP8StorageLegalize();
/*! \brief Give each public function the packed calling convention, with the argument checks of
 *  tensorir.md §10; private functions take raw data pointers. */
Pass MakePackedAPI();
/*! \brief Public functions whose target has a host take their buffers' data pointers, return
 *  an int32 status and run under device_id/device_type attributes; their target becomes the
 *  host (TVM's calling convention for code called directly, without the packed array). */
Pass MakeUnpackedAPI();
/*! \brief Serial loops that break or continue get {"irregular_loop_mark": 1}. */
Pass AnnotateIrregularLoop();
/*! \brief Functions without a "target" get one by where they run: public ones `target`,
 *  private ones called from host code its host, from device code the target without its host
 *  (a function called from both is copied as "<name>_host" for the host calls). `target` is
 *  the attribute form of a target (a Map with "kind", "host", ...). */
Pass BindTarget(ObjectRef target);
/*! \brief The module's only function, or its only public one, gets "tir.is_entry_func". */
Pass AnnotateEntryFunc();
/*! \brief Functions of a GPU target (their "target", else `current_target`, a target Map or
 *  null) get their innermost blocks' data-parallel loops fused and bound to blockIdx.x and
 *  threadIdx.x; every function is marked "tir.is_scheduled". */
Pass DefaultGPUSchedule(ObjectRef current_target);
/*! \brief The facts of a special memory (TVM's MemoryInfo): its unit of addressing in bits
 *  and the address the host sees (null: the host cannot address it). */
struct MemoryInfo {
  int64_t unit_bits = 8;
  Expr head_address;
  int64_t max_simd_bits = 0;  // 0: not known
  int64_t max_num_bits = 0;   // 0: not known
};
/*! \brief The memory info of a storage scope ("global.vtcm"), or nullopt when none is known. */
using MemoryInfoLookup = std::function<std::optional<MemoryInfo>(const std::string& scope)>;
/*! \brief tir.StorageRewrite, with the memory info of special memories (alignment, capacity). */
Pass StorageRewrite(MemoryInfoLookup lookup);
/*! \brief Allocations in tagged storage scopes become `let data = head_address` (or vanish
 *  when the host cannot address the memory); T.tvm_access_ptr becomes T.address_of. */
Pass LowerDeviceStorageAccessInfo(MemoryInfoLookup lookup);
/*! \brief Keep the functions for which `cond` holds. */
Pass Filter(std::function<bool(const PrimFunc&)> cond);
/*! \brief Host functions: runs of statements of a sequence longer than a budget of IR nodes
 *  become private functions, so that the C compiler sees functions of bounded size. */
Pass OutlineLargeBody();
/*! \brief Lower math intrinsics to the C library functions of their type for `target`. */
/*! \brief tir.InstrumentBoundCheckers: with "tir.instrument_bound_checkers", accesses that
 *  cannot be proven in bounds are checked at run time; a failing one is skipped and reported. */
Pass InstrumentBoundCheckers();
Pass LowerIntrin(const std::string& target);

// ---- GPU passes (the "cuda" stages) ----

/*! \brief TVM's tir.UnifyThreadBinding: in each kernel, one variable per thread tag, and all the
 *  kernel's threads launched once at its outermost binding (T.launch_thread included). */
Pass UnifyThreadBinding();
/*! \brief The CUDA pipeline's form: loops bound to one tag share one variable and stay where
 *  they are (no hoisting, no extent check). */
Pass UnifySiblingThreads();
/*! \brief Reject host code that reads or writes a buffer of a "cuda" function outside every
 *  thread-bound loop ("Did you forget to bind?"). */
Pass VerifyMemory();
/*! \brief Insert barriers (tir.tvm_storage_sync) between conflicting accesses to memory of
 *  `scope` ("shared") by different threads. */
Pass ThreadSync(const std::string& scope);
/*! \brief Rewrite each reduction block with a reduction loop bound to threadIdx.* into an
 *  in-thread partial reduction, a tir.tvm_thread_allreduce over the thread-bound loops and a
 *  write-back of the result (Apache TVM's shape); other reductions are left unchanged. */
Pass LowerCrossThreadReduction();
/*! \brief Lower each tir.tvm_thread_allreduce to warp shuffles (plus one exchange through
 *  shared memory when a group spans several warps, or a shared-memory tree for groups that warps
 *  cannot serve), leaving the result in every thread of the group (tessera's variant, run by the
 *  CUDA pipeline). */
Pass LowerBlockAllreduce();
/*! \brief TVM v0.23's tir.InjectVirtualThread: each attr "virtual_thread" ("vthread*", or
 *  "cthread" which shares nothing) is replaced by its body repeated per virtual thread (unrolled,
 *  or a serial loop), the allocations that depend on the thread copied once per thread. */
Pass InjectVirtualThread();
/*! \brief TVM v0.23's tir.LowerThreadAllreduce: under attr(reducer, "reduce_scope"), each
 *  tir.tvm_thread_allreduce becomes a warp-shuffle reduction (two rounds through a "shared"
 *  staging buffer when a group spans several warps) where the function's target (cuda, rocm,
 *  metal) allows it, else a tree over a "shared" buffer; the result buffer's allocation is
 *  replaced by the buffer holding the result. */
Pass LowerThreadAllreduce();
/*! \brief TVM's pass: outline each `T.attr(target, "target", 0)` region into a private kernel
 *  function "<symbol>_kernel" for that target, called by the host function. */
Pass SplitHostDevice();
/*! \brief tessera's CUDA pipeline: outline each outermost thread-bound loop of a "cuda" function
 *  into a device kernel (calling_conv "device_kernel") called by the host function. */
Pass SplitThreadKernels();
/*! \brief TVM's pass: a call of a kernel on another device becomes T.call_packed with its launch
 *  extents; a call to another code generator of the same device becomes T.call_extern. */
Pass LowerDeviceKernelLaunch();
/*! \brief tessera's CUDA pipeline: host calls of device kernels become tessera.launch_kernel with
 *  launch extents. */
Pass LowerKernelLaunchCalls();

/*! \brief Simplify one expression with no variable bound (used by passes and tests). */
Expr SimplifyExpr(const Expr& e);

}  // namespace transform
}  // namespace tessera
