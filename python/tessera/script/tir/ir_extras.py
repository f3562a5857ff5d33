"""T.* names of TVM v0.23 that are aliases or IR-node constructors: ``T.var``, ``T.ptr``,
``T.buffer``/``T.buffer_decl``, ``T.boolean``, ``T.broadcast``/``T.ramp``, ``T.Var``,
``T.IntImm``, ``T.EQ``, ``T.Call``, ..."""

from ... import _core
from ...error import TesseraTypeError
from ...tir import expr_ops
from ...tir.expr_ops import convert
from . import _state
from .ops import DType, builtin, dtype_name


@builtin
def var(dtype, name="v", *, span=None):
    """``x = T.var("int32")``: a scalar variable (``T.int32()`` in TVM's printed form)."""
    return _state.declared(_core.Var(_state.take_name(name), dtype_name(dtype), span))


@builtin
def ptr(dtype, storage_scope="global", is_size_var=False, *, span=None):
    """``p = T.ptr("float32", "shared")``: a pointer variable to typed memory."""
    return _state.declared(_core.Var.pointer(_state.take_name(""), dtype_name(dtype), storage_scope, span))


def _expr_node(cls, name):
    def make(a, b, *, span=None):
        a, b = expr_ops.match_types(a, b, span)
        return cls(a, b, span)

    make.__name__ = name
    make.__doc__ = f"``T.{name}(a, b)``: the {name} comparison node."
    return builtin(make)


@builtin
def IntImm(dtype, value, *, span=None):  # noqa: N802 - TVM's name
    """``T.IntImm("int64", 3)``."""
    return expr_ops.const(int(value), dtype_name(dtype), span)


@builtin
def FloatImm(dtype, value, *, span=None):  # noqa: N802
    """``T.FloatImm("float32", 1.5)``."""
    return expr_ops.const(float(value), dtype_name(dtype), span)


@builtin
def StringImm(value, *, span=None):  # noqa: N802
    """``T.StringImm("text")``."""
    return _core.StringImm(value)


@builtin
def Var(name, dtype, *, span=None):  # noqa: N802
    """``T.Var("n", "int32")``: a variable with an explicit name."""
    if isinstance(dtype, DType):
        dtype = dtype.name
    return _core.Var(name, dtype_name(dtype), span)


@builtin
def SizeVar(name, dtype, *, span=None):  # noqa: N802
    """``T.SizeVar("n", "int32")``: a non-negative variable."""
    return _core.SizeVar(name, dtype_name(dtype), span)


@builtin
def Call(dtype, op, args, *, span=None):  # noqa: N802
    """``T.Call("float32", "tir.exp", [x])``: a Call node of a registered op."""
    if isinstance(op, str):
        op = _core.Op.get(op)
    if not isinstance(op, _core.Op):
        raise TesseraTypeError(f"T.Call takes an op name or Op, got {op!r}")
    args = [_core.StringImm(a) if isinstance(a, str) else convert(a) for a in args]
    return _core.Call(dtype_name(dtype), op, args, span)


@builtin
def Let(*args, where=None, span=None):  # noqa: N802
    """``T.Let(x * x, where={x: a + 1})``: the Let expression, as TVM prints it (the legacy
    ``T.Let(x, a + 1, x * x)`` is accepted too)."""
    if where is None:
        if len(args) != 3:
            raise TesseraTypeError("T.Let takes (body, where={var: value}) or (var, value, body)")
        var, value, body = args
    else:
        if len(args) != 1 or not isinstance(where, dict) or len(where) != 1:
            raise TesseraTypeError("T.Let(body, where={var: value}) binds exactly one variable")
        (body,) = args
        ((var, value),) = where.items()
    if not isinstance(var, _core.Var):
        raise TesseraTypeError(f"T.Let binds a variable, got {var!r}")
    return _core.Let(var, convert(value, var.dtype), convert(body), span)


def comm_reducer(combiner, identity, *, span=None):
    """``T.comm_reducer(lambda a, b: T.max(a, b), [T.float32(-3.4e38)])``: a commutative reducer as an IR
    value, for ``T.attr(reducer, "reduce_scope", ...)`` around ``T.tvm_thread_allreduce``.

    The combiner takes the left values then the right values (``lambda x0, x1, y0, y1: ...``
    for two), named after its parameters and typed as the identities; it returns one value or
    a tuple of them."""
    import inspect

    identity = list(identity) if isinstance(identity, (list, tuple)) else [identity]
    ids = [convert(i, "int32") if isinstance(i, int) and not isinstance(i, bool) else convert(i)
           for i in identity]
    try:
        params = list(inspect.signature(combiner).parameters)
    except (TypeError, ValueError):
        raise TesseraTypeError(f"T.comm_reducer: the combiner must be a function, got {combiner!r}") from None
    if len(params) != 2 * len(ids):
        raise TesseraTypeError(
            f"T.comm_reducer: the combiner takes {len(params)} arguments; with {len(ids)} "
            f"identit{'y' if len(ids) == 1 else 'ies'} it must take {2 * len(ids)} (lhs then rhs)")
    args = [_core.Var(name, i.dtype) for name, i in zip(params, ids + ids)]
    result = combiner(*args)
    result = list(result) if isinstance(result, (tuple, list)) else [result]
    result = [convert(r, i.dtype) for r, i in zip(result, ids)] if len(result) == len(ids) else result
    return _core.CommReducer(args[:len(ids)], args[len(ids):], result, ids, span)


def index_map(mapping, *, inverse_index_map=None, index_dtype="int64"):
    """``T.index_map(lambda i, j: (j, i))``: an IndexMap (``tir.IndexMap.from_func``)."""
    from ...tir.index_map import from_func

    return from_func(mapping, inverse_index_map=inverse_index_map, index_dtype=index_dtype)


def names(namespace):
    """The aliases and constructors to add to the T namespace ``namespace``."""
    out = {
        "var": var,
        "ptr": ptr,
        "buffer": namespace["Buffer"],
        "buffer_decl": namespace["Buffer"],
        "boolean": namespace["bool"],
        "broadcast": namespace["Broadcast"],
        "ramp": namespace["Ramp"],
        "IntImm": IntImm,
        "FloatImm": FloatImm,
        "StringImm": StringImm,
        "Var": Var,
        "SizeVar": SizeVar,
        "Call": Call,
        "Let": Let,
        "IterVar": namespace["iter_var"],
        "BufferLoad": _core.BufferLoad,
        "comm_reducer": comm_reducer,
        "index_map": index_map,
    }
    for name in ("EQ", "NE", "LT", "LE", "GT", "GE"):
        out[name] = _expr_node(getattr(_core, name), name)
    return out
