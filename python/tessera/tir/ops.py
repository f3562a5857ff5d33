"""TVM's ``tvm.tir`` expression functions: math intrinsics, integer division, selection, calls.

The same functions are the script's ``T.exp``, ``T.floordiv``, ... (python/tessera/script/tir/
ops.py builds them); this module is their ``tir.*`` / ``te.*`` face, with TVM's signatures::

    >>> from tessera import tir
    >>> tir.exp(x), tir.floordiv(i, 4), tir.if_then_else(i < 4, a, b), tir.max_value("int8")
"""

from .. import _core
from ..error import ExpressionUseError, TesseraTypeError
from . import expr_ops
from ..script.tir import ops as _ops

__all__ = [
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "erf",
    "tanh", "sigmoid", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "floor", "ceil", "round", "trunc", "fabs", "nearbyint", "abs", "isnan",
    "isinf", "isfinite", "popcount", "clz", "likely", "assume", "pow", "power", "atan2", "fmod",
    "hypot", "copysign", "nextafter", "ldexp", "floordiv", "floormod", "truncdiv", "truncmod",
    "indexdiv", "indexmod", "ceildiv", "div", "if_then_else", "min_value", "max_value",
    "infinity", "all", "any", "call_extern", "call_pure_extern", "call_intrin", "reinterpret",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right",
    "ret", "const", "cast", "const_pred", "vscale", "call_llvm_intrin", "call_llvm_pure_intrin", "call_tir",
]

_g = globals()
for _name in _ops._UNARY_MATH + _ops._BINARY_MATH:
    _g[_name] = _ops.MATH[_name]
del _g, _name

power = _ops.MATH["pow"]  # noqa: F821
floordiv, floormod = _ops.floordiv, _ops.floormod
truncdiv, truncmod, ceildiv = _ops.truncdiv, _ops.truncmod, _ops.ceildiv
indexdiv, indexmod = _ops.floordiv, _ops.floormod
if_then_else = _ops.if_then_else
min_value, max_value, infinity = _ops.min_value, _ops.max_value, _ops.infinity
call_intrin = _ops.call_intrin
const_pred = _ops.const_pred


def call_extern(dtype, func_name, *args, span=None):
    """A call of the C function ``func_name`` returning ``dtype`` ("" is void, as in TVM)."""
    return _ops.call_extern("void" if dtype == "" else dtype, func_name, *args, span=span)


def call_tir(global_var, *args, span=None):
    """``tir.call_tir(mod.f, *args)``: a call of the module's function ``f`` (a GlobalVar, or
    ``cls.f`` inside an ``@I.ir_module``), returning the function's type (void without one)."""
    name = getattr(global_var, "name_hint", None) or getattr(global_var, "name", None)
    if not isinstance(name, str):
        raise TesseraTypeError(f"call_tir takes a GlobalVar of the module, got {global_var!r}")
    exprs = [a.data if isinstance(a, _core.Buffer) else expr_ops.convert(a) for a in args]
    return _core.Call(getattr(global_var, "ret_dtype", "void"), _core.GlobalVar(name), exprs, span)


def call_pure_extern(dtype, func_name, *args, span=None):
    """``call_extern`` of a function without side effects."""
    return _ops.call_pure_extern("void" if dtype == "" else dtype, func_name, *args, span=span)


def call_llvm_intrin(dtype, name, *args, span=None):
    """``call_llvm_intrin("int32x4", "llvm.donothing", ...)``: the ``tir.call_llvm_intrin`` call
    (as ``T.call_llvm_intrin``); it parses, prints and round-trips."""
    from ..script import tir as T

    return T.call_llvm_intrin(dtype, name, *args)


def call_llvm_pure_intrin(dtype, name, *args, span=None):
    """``call_llvm_intrin`` of an intrinsic without side effects."""
    from ..script import tir as T

    return T.call_llvm_pure_intrin(dtype, name, *args)


reinterpret = _ops.reinterpret
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = (
    _ops.bitwise_and, _ops.bitwise_or, _ops.bitwise_xor, _ops.bitwise_not)
shift_left, shift_right = _ops.shift_left, _ops.shift_right
ret = _ops.ret


def div(a, b, span=None):
    """``a / b`` as TVM's ``tir.div``: true division on floats, truncating division on ints."""
    return expr_ops.div(a, b, span)


def const(value, dtype=None, span=None):
    """A constant: int32 for ints, float32 for floats, bool for bools unless ``dtype`` is given."""
    return expr_ops.const(value, None if dtype is None else str(dtype), span)


def cast(value, dtype, span=None):
    """``value`` converted to ``dtype``."""
    return expr_ops.cast(value, str(dtype), span)


def _fold(args, combine, what, span):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise ExpressionUseError(f"tir.{what} needs at least one condition")
    exprs = [expr_ops.convert(a) for a in args]
    for e in exprs:
        if not (e.dtype == "bool"):
            raise TesseraTypeError(f"tir.{what}: every argument must be a bool expression, got {e.dtype}")
    out = exprs[0]
    for e in exprs[1:]:
        out = combine(out, e, span)
    return out


def all(*args, span=None):  # noqa: A001 - TVM's tir.all
    """The conjunction of bool expressions: ``tir.all(i < n, j < m)``."""
    return _fold(args, expr_ops.logical_and, "all", span)


def any(*args, span=None):  # noqa: A001 - TVM's tir.any
    """The disjunction of bool expressions: ``tir.any(i < 0, i >= n)``."""
    return _fold(args, expr_ops.logical_or, "any", span)


def vscale(span=None):
    """``tir.vscale()``: the vector-length multiplier of scalable vectors (an int32 call of the
    ``tir.vscale`` intrinsic; only targets with scalable vectors lower it)."""
    from .. import _core

    return _core.Call("int32", _core.Op.get("tir.vscale"), [], span)


# TVM's tir.* intrinsic builders that the script spells the same way (T.tvm_tuple, T.ptx_mma, ...):
# one definition, the script's (python/tessera/script/tir).
_SCRIPT_INTRINSICS = [
    "tvm_tuple", "tvm_struct_get", "tvm_struct_set", "address_of", "lookup_param", "isnullptr",
    "undef", "tvm_thread_allreduce", "type_annotation", "tvm_access_ptr", "tvm_throw_last_error",
    "tvm_load_matrix_sync", "tvm_store_matrix_sync", "tvm_mma_sync", "tvm_bmma_sync",
    "tvm_fill_fragment", "ptx_mma", "ptx_mma_sp", "mma_store", "mma_fill", "ptx_ldmatrix",
    "ptx_cp_async", "ptx_cp_async_bulk", "ptx_commit_group", "ptx_wait_group",
    "ptx_cp_async_barrier", "ptx_init_barrier_thread_count", "ptx_arrive_barrier",
    "ptx_arrive_barrier_expect_tx", "ptx_wait_barrier", "create_barriers", "vectorlow",
    "vectorhigh", "vectorcombine", "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace",
]


def _script_intrinsic(name):
    def forward(*args, **kwargs):
        from ..script import tir as _T

        return getattr(_T, name)(*args, **kwargs)

    forward.__name__ = name
    forward.__doc__ = f"TVM's ``tir.{name}``: the script's ``T.{name}``."
    return forward


for _name in _SCRIPT_INTRINSICS:
    globals()[_name] = _script_intrinsic(_name)
__all__ += _SCRIPT_INTRINSICS
del _name


def dp4a(vec1, vec2, acc=0):
    """``tir.dp4a(a, b, acc)``: ``acc`` plus the four lane products of the int8x4 vectors ``a``
    and ``b``, summed in int32 (the script's ``T.dp4a`` takes the result dtype first)."""
    return call_intrin("int32", "tir.dp4a", vec1, vec2, acc)


__all__.append("dp4a")
