"""Tensors and the operations that make them: te.placeholder, te.compute, te.var, te.const."""

import inspect
import types

from .. import _core
from ..error import TesseraTypeError, TesseraValueError, caller_span
from ..tir import expr_ops

_te = _core.te
Tensor = _te.Tensor
Operation = _te.Operation
PlaceholderOp = _te.PlaceholderOp
ComputeOp = _te.ComputeOp
Reduce = _te.Reduce


def var(name="tindex", dtype="int32"):
    """A symbolic scalar, e.g. a dimension that is known only at run time.

    >>> rows = te.var("rows")
    >>> M = te.placeholder((rows, 4), name="M")

    ``dtype`` may also be a type, ``ir.PrimType("int32")`` or ``ir.PointerType(...)`` (a pointer
    variable), as in TVM.
    """
    if isinstance(dtype, (_core.PointerType, _core.PrimType)):
        return _core.Var(name, dtype)
    return _core.Var(name, _core.canonical_dtype(str(dtype)))


def size_var(name="size", dtype="int32"):
    """A symbolic size: like :func:`var`, and known to be non-negative.

    >>> n = te.size_var("n")
    """
    return _core.SizeVar(name, _core.canonical_dtype(str(dtype)))


def const(value, dtype=None):
    """A constant expression; the dtype defaults to int32 for ints and float32 for floats.

    >>> te.const(0, "float32")
    """
    return expr_ops.const(value, None if dtype is None else str(dtype))


def _shape(shape, what):
    if isinstance(shape, (int, _core.PrimExpr)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TesseraTypeError(f"{what}: the shape must be a tuple of sizes, got {shape!r}")
    out = []
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, _core.PrimExpr)) and not hasattr(s, "item"):
            raise TesseraTypeError(f"{what}: shape entries must be ints or integer expressions, got {s!r}")
        out.append(expr_ops.const(int(s), "int32") if not isinstance(s, _core.PrimExpr) else s)
    return out


def placeholder(shape, dtype="float32", name="placeholder"):
    """An input tensor: a parameter of the function made by :func:`create_prim_func`.

    >>> A = te.placeholder((128, 128), "float32", name="A")
    """
    return _te.placeholder(_shape(shape, f"te.placeholder '{name}'"), str(dtype), name)


def _plain_function_positionals(fcompute):
    """The names of the positional parameters without a default of a plain Python function
    (``def`` or ``lambda``, not wrapped, no ``__signature__``), read from its code object as
    inspect.signature would read them; ``...`` when it takes ``*args``; None for any other
    callable. te.compute is called once per output, so this spares programs of thousands of
    computes inspect.signature's cost."""
    if type(fcompute) is not types.FunctionType:
        return None
    d = fcompute.__dict__
    if d and ("__signature__" in d or "__wrapped__" in d):
        return None
    code = fcompute.__code__
    if code.co_flags & inspect.CO_VARARGS:
        return ...
    defaults = fcompute.__defaults__
    return list(code.co_varnames[:code.co_argcount - (len(defaults) if defaults else 0)])


def _axis_names(fcompute, ndim, name):
    positional = _plain_function_positionals(fcompute)
    if positional is ...:
        return [f"i{d}" for d in range(ndim)]
    if positional is None:
        try:
            params = list(inspect.signature(fcompute).parameters.values())
        except (TypeError, ValueError):
            return []
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            return [f"i{d}" for d in range(ndim)]
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                      and p.default is p.empty]
    if len(positional) != ndim:
        raise TesseraValueError(
            f"te.compute '{name}': the function takes {len(positional)} index argument"
            f"{'' if len(positional) == 1 else 's'} but the shape has {ndim} dimension"
            f"{'' if ndim == 1 else 's'}; give it one index per dimension")
    return positional


def _body(value, name):
    if isinstance(value, TensorSlice):
        value = value.asobject()
    if isinstance(value, (Reduce, _core.PrimExpr)):
        return value
    if isinstance(value, Tensor):
        raise TesseraTypeError(
            f"te.compute '{name}': the function returned the tensor {value.name}; return an element "
            f"such as {value.name}[i, j]")
    if isinstance(value, (tuple, list)):
        # A multi-output compute: one tensor per value (reductions cannot be among them).
        values = [_body(v, name) for v in value]
        if any(isinstance(v, Reduce) for v in values):
            raise TesseraTypeError(f"te.compute '{name}': a compute with several outputs takes "
                                   "expressions only, not reductions")
        return values
    try:
        return expr_ops.convert(value)
    except TesseraTypeError:
        raise TesseraTypeError(
            f"te.compute '{name}': the function must return an expression or a reduction, "
            f"got {value!r}") from None


def compute(shape, fcompute, name="compute", tag="", attrs=None):
    """A tensor of ``shape`` whose element at ``(i, j, ...)`` is ``fcompute(i, j, ...)``.

    ``fcompute`` receives one index variable per dimension, named after its parameters. It
    returns an expression, or a reduction (``te.sum``, ``te.max``, ...) as its whole value, or a
    tuple of expressions: then the compute has one output per value and ``compute`` returns the
    list of their tensors.
    ``attrs`` become annotations of the block :func:`create_prim_func` makes.

    >>> B = te.compute((128,), lambda i: A[i] * 2.0, name="B")
    """
    if not tag:
        from .ops import current_tag

        tag = current_tag()
    shape = _shape(shape, f"te.compute '{name}'")
    if not callable(fcompute):
        raise TesseraTypeError(f"te.compute '{name}': fcompute must be a function, got {fcompute!r}")
    names = _axis_names(fcompute, len(shape), name)
    out = _te.compute(shape, lambda indices: _body(fcompute(*indices), name), name, tag,
                      _attrs(attrs, name), names)
    if out.op.num_outputs > 1:
        return [out.op.output(i) for i in range(out.op.num_outputs)]
    return out


def _attr(value):
    if isinstance(value, _core.Object):
        return value
    if isinstance(value, bool):
        return _core.IntImm("bool", int(value))
    if isinstance(value, int):
        return _core.IntImm("int32" if -(2**31) <= value < 2**31 else "int64", value)
    if isinstance(value, float):
        return _core.FloatImm("float32", value)
    if isinstance(value, str):
        return _core.StringImm(value)
    if isinstance(value, (list, tuple)):
        return _core.Array([_attr(v) for v in value])
    raise TesseraTypeError(f"cannot use {value!r} as an attribute value")


def _attrs(attrs, name):
    if attrs is None:
        return {}
    if not isinstance(attrs, dict):
        raise TesseraTypeError(f"te.compute '{name}': attrs must be a dict, got {attrs!r}")
    return {str(k): _attr(v) for k, v in attrs.items()}


class TensorSlice:
    """``A[i]`` of a tensor with more dimensions than indices: index it further (``A[i][j]``)."""

    def __init__(self, tensor, indices):
        self.tensor = tensor
        self.indices = tuple(indices)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        return _tensor_getitem(self.tensor, self.indices + key)

    def asobject(self):
        """The element, when every dimension is indexed (else the error naming the dimensions)."""
        return self.tensor.load([expr_ops._index(k) for k in self.indices])

    @property
    def dtype(self):
        return self.tensor.dtype

    def _operator(name):
        def method(self, *args):
            return getattr(self.asobject(), name)(*args)

        method.__name__ = name
        return method

    for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__lt__",
                "__le__", "__gt__", "__ge__", "__neg__", "astype"):
        locals()[_op] = _operator(_op)
    del _op, _operator

    def __repr__(self):
        return f"TensorSlice({self.tensor.name}, {list(self.indices)})"


def _tensor_getitem(self, key):
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if isinstance(k, slice):
            raise TesseraTypeError(f"tensor {self.name} is indexed one element at a time, not with slices")
    ndim = self.ndim
    if len(key) < ndim:
        return TensorSlice(self, key)
    if len(key) > ndim:
        raise TesseraTypeError(f"tensor {self.name} has {ndim} dimensions but is indexed "
                               f"with {len(key)} indices")
    indices = [expr_ops._index(k) for k in key]
    if any(not _is_integer_index(i) for i in indices):
        # As TVM, a float index is kept in the IR (a comm_reducer combiner may index with its
        # accumulator); ts.build refuses it, pointing at this line.
        return self.load(indices, caller_span())
    return self.load(indices)


def _is_integer_index(index):
    dtype = str(index.dtype)
    return dtype.startswith("int") or dtype.startswith("uint")


def _tensor_call(self, *indices):
    """``A(i, j)``: the element at ``(i, j)``, as ``A[i, j]`` (TVM's Tensor.__call__)."""
    if len(indices) != len(self.shape):
        raise TesseraTypeError(f"tensor {self.name} has {len(self.shape)} dimensions; "
                               f"{self.name}(...) needs one index each, got {len(indices)}")
    return _tensor_getitem(self, tuple(indices))


def _tensor_repr(self):
    shape = ", ".join(str(s) for s in self.shape)
    return f"Tensor(shape=({shape}), dtype={self.dtype}, op={self.op.name})"


def _reject_arithmetic(self, *args):
    raise TesseraTypeError(
        f"{self!r} is a reduction: it can only be the whole value of a te.compute. Compute it in "
        "its own te.compute and use that tensor in further expressions")


def _operation_repr(self):
    return f"{type(self).__name__}(name={self.name})"


_ITERVAR_OPERATORS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__lt__", "__le__",
    "__gt__", "__ge__", "__eq__", "__ne__", "__neg__", "astype")


def _itervar_operator(name):
    def method(self, *args):
        return getattr(self.var, name)(*args)

    method.__name__ = name
    return method


def _install():
    # te axes are IterVars; as in TVM they compute like their variable (`k < i`, `k + 1`).
    for name in _ITERVAR_OPERATORS:
        setattr(_core.IterVar, name, _itervar_operator(name))
    _core.IterVar.dtype = property(lambda self: self.var.dtype)
    Tensor.__getitem__ = _tensor_getitem
    Tensor.__call__ = _tensor_call
    Tensor.__repr__ = _tensor_repr
    Tensor.__str__ = _tensor_repr
    Operation.__repr__ = _operation_repr
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
        setattr(Reduce, f"__{name}__", _reject_arithmetic)
        setattr(Reduce, f"__r{name}__", _reject_arithmetic)
    for name in ("neg", "lt", "le", "gt", "ge", "bool"):
        setattr(Reduce, f"__{name}__", _reject_arithmetic)


_install()
