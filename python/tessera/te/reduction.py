"""Reductions: te.reduce_axis, te.sum / te.max / te.min and custom te.comm_reducer."""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..tir import expr_ops
from .tensor import Reduce, Tensor

_te = _core.te


def reduce_axis(dom, name="rv"):
    """A reduction axis over ``dom = (start, stop)``, to reduce over with te.sum and friends.

    >>> k = te.reduce_axis((0, 128), name="k")
    >>> C = te.compute((128,), lambda i: te.sum(A[i, k], axis=k))
    """
    if isinstance(dom, _core.Range):
        return _te.reduce_axis(dom, name)
    if not isinstance(dom, (tuple, list)) or len(dom) != 2:
        raise TesseraTypeError(f"te.reduce_axis '{name}': dom must be (start, stop), got {dom!r}")
    start, stop = dom
    if isinstance(start, int) and isinstance(stop, _core.PrimExpr):
        start = expr_ops.const(start, stop.dtype)
    start = expr_ops._index(start)
    stop = expr_ops._index(stop) if isinstance(stop, int) else expr_ops.convert(stop, start.dtype)
    extent = expr_ops.convert(expr_ops.extent_between(start, stop), start.dtype)
    return _te.reduce_axis(_core.Range.from_min_extent(start, extent), name)


def _axes(axis, name):
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    for a in axes:
        if not isinstance(a, _core.IterVar):
            raise TesseraTypeError(f"te.{name}: axis must be reduce axes (te.reduce_axis), got {a!r}")
    return axes


def _value(value, name, dtype=None):
    if isinstance(value, Reduce):
        raise TesseraTypeError(f"te.{name}: nested reductions are not supported; reduce in a "
                               "separate te.compute")
    if isinstance(value, Tensor):
        raise TesseraTypeError(f"te.{name}: got the tensor {value.name}; reduce one of its elements "
                               f"such as {value.name}[i, k]")
    return expr_ops.convert(value, dtype)


def _is_axis_argument(axis):
    if isinstance(axis, _core.IterVar):
        return True
    return isinstance(axis, (list, tuple)) and len(axis) > 0 and all(
        isinstance(a, _core.IterVar) for a in axis)


class CommReducer:
    """A commutative reducer: ``r(expr, axis, where=None, init=None)`` makes a reduction over
    the reduce axes ``axis``; ``r(a, b, ...)`` with expressions combines them elementwise."""

    def __init__(self, name, fcombine, fidentity=None, builtin=None):
        self.name = name
        self.fcombine = fcombine
        self.fidentity = fidentity
        self._builtin = builtin

    def combiner(self, dtype):
        """The C++ CommReducer for values of ``dtype``."""
        x, y = _core.Var("x", dtype), _core.Var("y", dtype)
        result = expr_ops.convert(self.fcombine(x, y), dtype)
        identity = expr_ops.convert(self.fidentity(dtype), dtype)
        return _te.CommReducer(self.name, x, y, result, identity)

    def tuple_combiner(self, dtypes):
        """The C++ CommReducer of a tuple of values of ``dtypes`` (``fcombine`` takes and returns
        tuples; ``fidentity`` takes one dtype per value)."""
        xs = [_core.Var(f"x{i}", t) for i, t in enumerate(dtypes)]
        ys = [_core.Var(f"y{i}", t) for i, t in enumerate(dtypes)]
        results = self.fcombine(tuple(xs), tuple(ys))
        identities = self.fidentity(*dtypes)
        for what, values in (("fcombine", results), ("fidentity", identities)):
            if not isinstance(values, (tuple, list)) or len(values) != len(dtypes):
                raise TesseraTypeError(
                    f"te.{self.name}: {what} must return {len(dtypes)} values (one per reduced "
                    f"value), got {values!r}")
        results = [expr_ops.convert(r, t) for r, t in zip(results, dtypes)]
        identities = [expr_ops.convert(v, t) for v, t in zip(identities, dtypes)]
        return _te.CommReducer.tuple(self.name, xs, ys, results, identities)

    def _reduce_tuple(self, expr, axis, where, init):
        sources = [_value(v, self.name) for v in expr]
        if not sources:
            raise TesseraValueError(f"te.{self.name}: reduces an empty tuple")
        axes = _axes(axis, self.name)
        condition = None if where is None else _value(where, self.name, "bool")
        inits = []
        if init is not None:
            if not isinstance(init, (tuple, list)) or len(init) != len(sources):
                raise TesseraTypeError(f"te.{self.name}: init= must give {len(sources)} values, "
                                       f"one per reduced value, got {init!r}")
            inits = [_value(v, self.name, s.dtype) for v, s in zip(init, sources)]
        combiner = self.tuple_combiner([s.dtype for s in sources])
        return _te.Reduce.tuple(combiner, sources, axes, condition, inits)

    def __call__(self, expr, axis=None, where=None, init=None, *args):
        if isinstance(expr, (tuple, list)) and _is_axis_argument(axis):
            # A reduction of a tuple (TVM's argmax over (index, value)): the compute has one
            # output per value.
            if args:
                raise TesseraTypeError(f"te.{self.name}: too many arguments for a reduction")
            if self._builtin is not None:
                raise TesseraTypeError(f"te.{self.name} reduces one value, not a tuple; make a "
                                       "te.comm_reducer of tuples")
            return self._reduce_tuple(expr, axis, where, init)
        if _is_axis_argument(axis):
            if args:
                raise TesseraTypeError(f"te.{self.name}: too many arguments for a reduction")
            source = _value(expr, self.name)
            axes = _axes(axis, self.name)
            condition = None if where is None else _value(where, self.name, "bool")
            init_value = None if init is None else _value(init, self.name, source.dtype)
            if self._builtin is not None:
                return self._builtin(source, axes, condition, init_value)
            return _te.Reduce(self.combiner(source.dtype), source, axes, condition, init_value)
        values = [v for v in (expr, axis, where, init, *args) if v is not None]
        if len(values) < 2:
            raise TesseraValueError(
                f"te.{self.name}: give axis= (reduce axes from te.reduce_axis) to reduce, or two or "
                "more expressions to combine elementwise")
        result = _value(values[0], self.name)
        for v in values[1:]:
            result = self.fcombine(result, _value(v, self.name))
        return result

    def __repr__(self):
        return f"<te.comm_reducer {self.name}>"


def comm_reducer(fcombine, fidentity, name="reduce"):
    """A custom commutative reducer from a combination and its identity element.

    ``fcombine(x, y)`` combines two values; ``fidentity(dtype)`` gives the identity.

    >>> product = te.comm_reducer(lambda acc, v: acc * v, lambda dt: te.const(1, dt),
    ...                           name="product")
    >>> row_products = te.compute((16,), lambda i: product(M[i, r], axis=r))
    """
    return CommReducer(name, fcombine, fidentity)


sum = CommReducer("sum", expr_ops.add, lambda t: expr_ops.const(0, t), _te.sum)  # noqa: A001
max = CommReducer("max", expr_ops.maximum, _te.min_value, _te.max)  # noqa: A001
min = CommReducer("min", expr_ops.minimum, _te.max_value, _te.min)  # noqa: A001
sum.__doc__ = "``te.sum(A[i, k], axis=k)``: the sum over reduce axes (identity 0)."
max.__doc__ = ("``te.max(A[i, k], axis=k)``: the maximum over reduce axes (identity: the lowest "
               "value of the type); ``te.max(a, b)`` is the elementwise maximum.")
min.__doc__ = ("``te.min(A[i, k], axis=k)``: the minimum over reduce axes (identity: the highest "
               "value of the type); ``te.min(a, b)`` is the elementwise minimum.")
