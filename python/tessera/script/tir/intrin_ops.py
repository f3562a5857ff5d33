"""TVM v0.23's builtin intrinsics as T.* functions: runtime and packed-call builtins
(``T.tvm_access_ptr``, ``T.call_packed``, ``T.tvm_struct_get``, ...), tensor-core fragments
(``T.tvm_fill_fragment``, ``T.tvm_mma_sync``, ...), PTX (``T.ptx_*``, ``T.mma_*``), Metal
simdgroup matrices (``T.simdgroup_*``) and vector helpers (``T.vectorlow``, ...).

Each builds a Call of the ``tir.*`` op of the same name with the dtype TVM gives it, so that
a printed module parses back structurally equal. Ops whose dtype TVM prints (``"first"``:
``T.ptx_mma("float32", ...)``; ``"last"``: ``T.tvm_struct_get(a, 0, 1, "int32")``) also
take it as ``dtype=``. The C host target does not lower the GPU-only ones: building such a
function reports the call with its source location.
"""

from ... import _core
from ...error import TesseraTypeError
from ...tir.expr_ops import convert
from .ops import DType, builtin, call_op, dtype_name

# The result dtype of each builtin: a dtype name, "first"/"last" (given as that argument or as
# dtype=), or ("arg", k): the dtype of argument k.
_RESULT = {
    "tvm_access_ptr": "handle",
    "tvm_throw_last_error": "handle",
    "tvm_stack_alloca": "handle",
    "tvm_stack_make_shape": "handle",
    "tvm_stack_make_array": "handle",
    "tvm_tuple": "handle",
    "handle_add_byte_offset": "handle",
    "tvm_struct_set": "int32",
    "tvm_struct_get": "last",
    "tvm_thread_invariant": ("arg", 0),
    "tvm_call_trace_packed": ("arg", -1),  # tir.trace: the traced (last) value's dtype
    "tvm_call_trace_packed_lowered": ("arg", -1),
    "tvm_check_return": "int32",
    "TVMBackendAllocWorkspace": "handle",
    "TVMBackendFreeWorkspace": "int32",
    "lookup_param": "handle",
    "isnullptr": "bool",
    "undef": "int32",
    "start_profile_intrinsic": "handle",
    "end_profile_intrinsic": "handle",
    "anylist_getitem": "handle",
    "anylist_resetitem": "int32",
    "anylist_setitem_call_packed": "int32",
    "anylist_setitem_call_cpacked": "int32",
    "call_llvm_intrin": "first",
    "call_llvm_pure_intrin": "first",
    "thread_return": "void",
    "ignore_loop_partition": "bool",
    "q_multiply_shift": "int32",
    "q_multiply_shift_per_axis": "int32",
    "vectorlow": "first",
    "vectorhigh": "first",
    "vectorcombine": "first",
    "dp4a": "first",
    "vscale": "int32",
    "get_active_lane_mask": "first",
    "tvm_warp_shuffle_up": ("arg", 1),
    "tvm_warp_activemask": "uint32",
    "tvm_storage_sync": "int32",
    "tvm_context_id": "int32",
    "tvm_load_matrix_sync": "handle",
    "tvm_store_matrix_sync": "handle",
    "tvm_mma_sync": "handle",
    "tvm_bmma_sync": "handle",
    "tvm_fill_fragment": "handle",
    "tvm_thread_allreduce": "handle",
    "ptx_mma": "first",
    "ptx_mma_sp": "first",
    "ptx_ldmatrix": "first",
    "ptx_cp_async": "first",
    "ptx_cp_async_bulk": "first",
    "ptx_commit_group": "void",
    "ptx_wait_group": "void",
    "ptx_cp_async_barrier": "void",
    "ptx_init_barrier_thread_count": "void",
    "ptx_arrive_barrier": "void",
    "ptx_arrive_barrier_expect_tx": "void",
    "ptx_wait_barrier": "void",
    "create_barriers": "void",
    "mma_store": "first",
    "mma_fill": "first",
    "make_filled_simdgroup_matrix": "handle",
    "simdgroup_load": "handle",
    "simdgroup_store": "handle",
    "simdgroup_multiply_accumulate": "handle",
}

# The builtins whose T.* form drops a dtype= keyword, as TVM v0.23's (its _op_wrapper): the
# result type is the op's own, so `T.tvm_throw_last_error(dtype="int32")` is the handle call
# that TVM builds and prints back as `T.tvm_throw_last_error()`.
_DTYPE_DROPPED = frozenset({
    "tvm_access_ptr", "tvm_throw_last_error", "tvm_stack_alloca", "tvm_stack_make_shape",
    "tvm_stack_make_array", "tvm_tuple", "handle_add_byte_offset", "tvm_struct_set",
    "tvm_thread_invariant", "tvm_load_matrix_sync", "tvm_mma_sync", "tvm_bmma_sync",
    "tvm_fill_fragment", "tvm_store_matrix_sync", "ptx_wait_group", "ptx_commit_group",
    "ptx_cp_async_barrier", "ptx_init_barrier_thread_count", "ptx_arrive_barrier",
    "ptx_arrive_barrier_expect_tx", "ptx_wait_barrier", "make_filled_simdgroup_matrix",
    "simdgroup_load", "simdgroup_store", "simdgroup_multiply_accumulate", "create_barriers",
    "undef", "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "start_profile_intrinsic",
    "end_profile_intrinsic", "anylist_getitem", "anylist_resetitem",
    "anylist_setitem_call_packed", "anylist_setitem_call_cpacked", "vscale",
    "ignore_loop_partition", "isnullptr", "lookup_param", "q_multiply_shift",
    "q_multiply_shift_per_axis", "thread_return", "tvm_thread_allreduce",
})

# T.* names that differ from the op's: T.call_packed is the tir.tvm_call_packed op.
_PACKED = {
    "call_packed": "tvm_call_packed",
    "call_cpacked": "tvm_call_cpacked",
    "call_packed_lowered": "tvm_call_packed_lowered",
    "call_cpacked_lowered": "tvm_call_cpacked_lowered",
}


def _dtype_arg(value):
    if value == "":
        return "void"
    if isinstance(value, (DType, str)):
        return dtype_name(value)
    raise TesseraTypeError(f"expected a dtype such as \"float32\", got {value!r}")


def _intrinsic(name):
    op_name = "tir." + name
    rule = _RESULT[name]

    def fn(*args, dtype=None, span=None):
        args = list(args)
        if name in _DTYPE_DROPPED:
            dtype = None
        if rule == "first":
            if dtype is None:
                if not args:
                    raise TesseraTypeError(f"T.{name} needs the result dtype as its first argument")
                dtype = args.pop(0)
            dtype = _dtype_arg(dtype)
        elif rule == "last":
            if dtype is None:
                if not args:
                    raise TesseraTypeError(f"T.{name} needs the result dtype as its last argument")
                dtype = args.pop()
            dtype = _dtype_arg(dtype)
        elif isinstance(rule, tuple):
            if dtype is None:
                dtype = convert(args[rule[1]]).dtype if -len(args) <= rule[1] < len(args) else "int32"
            else:
                dtype = _dtype_arg(dtype)
        else:
            dtype = rule if dtype is None else _dtype_arg(dtype)
        return call_op(op_name, args, dtype, span=span)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"``T.{name}(...)``: the ``{op_name}`` builtin ({_core.Op.get(op_name).description})"
    return builtin(fn)


def _packed(script_name, op):
    op_name = "tir." + op

    def fn(func_name, *args, span=None):
        from ...tir.buffer import _packed_args

        # Buffers pass as DLTensors (tvm_stack_make_array), as TVM's T.call_packed packs them.
        return _core.Call("int32", _core.Op.get(op_name), _packed_args([func_name, *args], span),
                          span)

    fn.__name__ = script_name
    fn.__qualname__ = script_name
    fn.__doc__ = (f"``T.{script_name}(\"name\", *args)``: a call of a packed function "
                  f"(the ``{op_name}`` builtin); its value is the int32 return code.")
    return builtin(fn)


INTRINSICS = {name: _intrinsic(name) for name in _RESULT}
for _name, _op in _PACKED.items():
    INTRINSICS[_name] = _packed(_name, _op)
    INTRINSICS[_op] = INTRINSICS[_name]


@builtin
def type_annotation(dtype, *, span=None):
    """``T.type_annotation("float32")``: a value standing for a dtype (``tvm_access_ptr``'s
    first argument)."""
    return _core.Call(_dtype_arg(dtype), _core.Op.get("tir.type_annotation"), [], span)


INTRINSICS["type_annotation"] = type_annotation


def _dtype_forward(fn, name):
    """TVM's keyword form: ``T.reinterpret(x, dtype="int32")`` is ``T.reinterpret("int32", x)``."""

    def wrapped(*args, dtype=None, span=None):
        if dtype == "":  # TVM's spelling of void
            dtype = "void"
        if dtype is not None:
            args = (dtype, *args)
        return fn(*args, span=span)

    wrapped.__name__ = name
    wrapped.__qualname__ = name
    wrapped.__doc__ = fn.__doc__
    return builtin(wrapped)


def dtype_forwarding(namespace):
    """The dtype-first builtins of ``namespace`` accepting ``dtype=`` as TVM's do."""
    return {name: _dtype_forward(namespace[name], name)
            for name in ("reinterpret", "call_extern", "call_pure_extern", "call_intrin")
            if name in namespace}
