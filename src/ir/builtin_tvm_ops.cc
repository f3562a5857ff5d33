// Registration of the TVM v0.23 builtins that TVMScript names (`T.tvm_access_ptr`,
// `T.tvm_mma_sync`, `T.ptx_*`, `T.simdgroup_*`, `T.call_packed`, ...). They parse, print and
// survive the passes that do not lower them; a codegen that meets one it cannot lower reports
// it at the call's source location.
//
// Attributes read by the printer and the script parser:
//   "script.name"  - the T.* name when it is not the op name without "tir."
//   "script.dtype" - "first" / "last": the call's dtype is printed as that argument.
#include "tessera/ir/op.h"

namespace tessera {
namespace {

OpRegEntry& Builtin(const char* name, int num_inputs, CallEffect effect, const char* text) {
  auto* entry = new OpRegEntry(std::string("tir.") + name);
  entry->set_num_inputs(num_inputs).set_effect(effect).describe(text);
  return *entry;
}

constexpr CallEffect kOpaque = CallEffect::kOpaque;
constexpr CallEffect kPure = CallEffect::kPure;
constexpr CallEffect kRead = CallEffect::kReadState;

[[maybe_unused]] const bool kRegistered = [] {
  // Runtime and packed-call builtins.
  Builtin("tvm_access_ptr", 5, kOpaque,
          "tvm_access_ptr(type_annotation, data, offset, extent, rw_mask): the address of a "
          "buffer region, with its access mode (1 read, 2 write, 3 both).");
  Builtin("tvm_throw_last_error", 0, kOpaque, "Return the last runtime error to the caller.");
  Builtin("tvm_context_id", 0, kRead,
          "The id of the running context (tir.InjectVirtualThread: the thread of a \"cthread\"; "
          "0 on the host).");
  Builtin("tvm_stack_alloca", 2, kOpaque,
          "tvm_stack_alloca(kind, num): stack space for packed arguments.");
  Builtin("tvm_stack_make_shape", -1, kOpaque, "A shape array on the stack.");
  Builtin("tvm_stack_make_array", 6, kOpaque,
          "tvm_stack_make_array(data, shape, strides, ndim, dtype, elem_offset): a DLTensor on "
          "the stack.");
  Builtin("tvm_call_packed", -1, kOpaque, "Call of a packed function by name.")
      .set_attr("script.name", "call_packed");
  Builtin("tvm_call_cpacked", -1, kOpaque, "Call of a C packed function by name.")
      .set_attr("script.name", "call_cpacked");
  Builtin("tvm_call_trace_packed", -1, kOpaque,
          "tvm_call_trace_packed(name, args..., value): call the packed function `name` with "
          "the arguments (tir.trace); its value is the function's return value, or `value` when "
          "the function returns none.");
  Builtin("tvm_call_trace_packed_lowered", -1, kOpaque,
          "The lowered form of tvm_call_trace_packed.");
  Builtin("tvm_call_packed_lowered", -1, kOpaque, "A packed call with its arguments on the stack.")
      .set_attr("script.name", "call_packed_lowered");
  Builtin("tvm_call_cpacked_lowered", -1, kOpaque,
          "A C packed call with its arguments on the stack.")
      .set_attr("script.name", "call_cpacked_lowered");
  Builtin("tvm_tuple", -1, kPure, "A tuple of values (an argument of other builtins).");
  Builtin("handle_add_byte_offset", 2, kPure, "A handle advanced by a number of bytes.");
  Builtin("tvm_struct_set", 4, kOpaque, "tvm_struct_set(arr, index, field, value).");
  Builtin("tvm_struct_get", 3, kRead, "tvm_struct_get(arr, index, field): a runtime struct field.")
      .set_attr("script.dtype", "last");
  Builtin("tvm_thread_invariant", 1, kPure, "A condition every thread of a block agrees on.");
  Builtin("tvm_thread_context", 1, kOpaque,
          "tvm_thread_context(ctx): a device context, made once per thread (see "
          "tir.CombineContextCall).");
  Builtin("tvm_check_return", 3, kOpaque, "Check a packed call's return code.");
  Builtin("TVMBackendAllocWorkspace", 5, kOpaque, "Allocate runtime workspace memory.");
  Builtin("TVMBackendFreeWorkspace", 3, kOpaque, "Free runtime workspace memory.");
  Builtin("lookup_param", 1, kPure, "The address of a named constant parameter.");
  Builtin("isnullptr", 1, kPure, "Whether a handle is NULL.");
  Builtin("undef", 0, kPure, "An undefined value.");
  Builtin("type_annotation", 0, kPure, "A value standing only for its dtype.")
      .set_attr("script.dtype", "first");
  Builtin("start_profile_intrinsic", 1, kOpaque, "Start of an instrumented region.");
  Builtin("end_profile_intrinsic", 1, kOpaque, "End of an instrumented region.");
  Builtin("anylist_getitem", 2, kRead, "An item of a runtime AnyList.");
  Builtin("anylist_resetitem", 2, kOpaque, "Reset an item of a runtime AnyList.");
  Builtin("anylist_setitem_call_packed", -1, kOpaque,
          "Store a packed call's result in an AnyList.");
  Builtin("anylist_setitem_call_cpacked", -1, kOpaque,
          "Store a C packed call's result in an AnyList.");
  Builtin("call_llvm_intrin", -1, kOpaque, "Call of an LLVM intrinsic by id or name.")
      .set_attr("script.dtype", "first");
  Builtin("call_llvm_pure_intrin", -1, kPure, "Call of a pure LLVM intrinsic by id or name.")
      .set_attr("script.dtype", "first");
  Builtin("thread_return", 0, kOpaque, "Return from a GPU thread.");
  Builtin("ignore_loop_partition", 1, kPure, "A condition loop partitioning leaves alone.");

  // Quantisation and vector helpers.
  Builtin("q_multiply_shift", 4, kPure, "Fixed-point multiply with rounding shift.");
  Builtin("q_multiply_shift_per_axis", 7, kPure, "Per-axis fixed-point multiply with shifts.");
  Builtin("vectorlow", 1, kPure, "The low half of a vector.").set_attr("script.dtype", "first");
  Builtin("vectorhigh", 1, kPure, "The high half of a vector.").set_attr("script.dtype", "first");
  Builtin("vectorcombine", 2, kPure, "Two vectors concatenated.").set_attr("script.dtype", "first");
  Builtin("dp4a", 3, kPure, "Dot product of four int8 lanes, accumulated (CUDA __dp4a).")
      .set_attr("script.dtype", "first");
  Builtin("vscale", 0, kPure, "The vector-length multiplier of scalable vectors.");
  Builtin("get_active_lane_mask", 2, kPure, "get_active_lane_mask(base, limit): lanes < limit.")
      .set_attr("script.dtype", "first");

  // GPU: warps and tensor-core fragments (wmma).
  Builtin("tvm_warp_shuffle_up", 5, kOpaque,
          "The value of the lane `offset` below (__shfl_up_sync).");
  Builtin("tvm_warp_activemask", 0, kOpaque, "The mask of the active lanes (__activemask).");
  Builtin("tvm_load_matrix_sync", 8, kOpaque,
          "tvm_load_matrix_sync(fragment, m, n, k, index, ptr, stride, layout): "
          "wmma::load_matrix_sync.");
  Builtin("tvm_store_matrix_sync", 8, kOpaque,
          "tvm_store_matrix_sync(fragment, m, n, k, index, ptr, stride, layout): "
          "wmma::store_matrix_sync.");
  Builtin("tvm_mma_sync", 8, kOpaque, "tvm_mma_sync(d, id, a, ia, b, ib, c, ic): wmma::mma_sync.");
  Builtin("tvm_bmma_sync", 8, kOpaque,
          "tvm_bmma_sync(d, id, a, ia, b, ib, c, ic): binary wmma::bmma_sync.");
  Builtin("tvm_fill_fragment", 6, kOpaque,
          "tvm_fill_fragment(fragment, m, n, k, index, value): wmma::fill_fragment.");

  // GPU: PTX instructions.
  Builtin("ptx_mma", -1, kOpaque, "PTX mma.sync.").set_attr("script.dtype", "first");
  Builtin("ptx_mma_sp", -1, kOpaque, "PTX mma.sp.sync (sparse).").set_attr("script.dtype", "first");
  Builtin("ptx_ldmatrix", 7, kOpaque, "PTX ldmatrix.").set_attr("script.dtype", "first");
  Builtin("ptx_cp_async", 5, kOpaque, "PTX cp.async.").set_attr("script.dtype", "first");
  Builtin("ptx_cp_async_bulk", 6, kOpaque, "PTX cp.async.bulk.").set_attr("script.dtype", "first");
  Builtin("ptx_commit_group", 0, kOpaque, "PTX cp.async.commit_group.");
  Builtin("ptx_wait_group", 1, kOpaque, "PTX cp.async.wait_group.");
  Builtin("ptx_cp_async_barrier", 1, kOpaque, "PTX cp.async.mbarrier.arrive.");
  Builtin("ptx_init_barrier_thread_count", 2, kOpaque, "PTX mbarrier.init.");
  Builtin("ptx_arrive_barrier", 1, kOpaque, "PTX mbarrier.arrive.");
  Builtin("ptx_arrive_barrier_expect_tx", 2, kOpaque, "PTX mbarrier.arrive.expect_tx.");
  Builtin("ptx_wait_barrier", 1, kOpaque, "PTX mbarrier.try_wait.");
  Builtin("create_barriers", 1, kOpaque, "Declare PTX mbarriers.");
  Builtin("mma_store", 6, kOpaque, "Store an mma accumulator fragment.")
      .set_attr("script.dtype", "first");
  Builtin("mma_fill", 3, kOpaque, "Fill an mma accumulator fragment.")
      .set_attr("script.dtype", "first");

  // Metal: simdgroup matrices.
  Builtin("make_filled_simdgroup_matrix", 5, kOpaque, "A simdgroup matrix filled with a value.");
  Builtin("simdgroup_load", 7, kOpaque, "Load a simdgroup matrix.");
  Builtin("simdgroup_store", 7, kOpaque, "Store a simdgroup matrix.");
  Builtin("simdgroup_multiply_accumulate", 8, kOpaque, "simdgroup matrix multiply-accumulate.");
  return true;
}();

}  // namespace
}  // namespace tessera
