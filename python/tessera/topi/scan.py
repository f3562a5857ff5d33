"""Cumulative sums and products: ``topi.cumsum(x, axis=1, exclusive=True)``.

As TVM's topi does, the scan is a ``te.extern`` whose body (built with ``tir.ir_builder``)
walks the scanned axis once per line, carrying the running value: linear work, the lines
(every index outside the axis) in parallel.
"""

from .. import _core, te
from ..error import TesseraTypeError
from ..tir import expr_ops, ir_builder
from .transform import reshape
from .utils import is_tensor, normalize_axis, prod


def _static(e):
    return int(e.value) if isinstance(e, _core.IntImm) else e


def _scan(data, axis, dtype, exclusive, binop, identity, what):
    if not is_tensor(data):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {data!r}")
    if axis is None:
        data = reshape(data, (prod(data.shape),))
        axis = 0
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, f"topi.{what}")
    dtype = data.dtype if dtype is None else _core.canonical_dtype(str(dtype))
    shape = [_static(d) for d in data.shape]
    length = shape[axis]
    before = prod(shape[:axis]) if axis > 0 else 1
    after = prod(shape[axis + 1:]) if axis + 1 < ndim else 1

    def body(ins, outs):
        ib = ir_builder.create()
        src, out = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        cast = lambda v: expr_ops.cast(v, dtype)  # noqa: E731
        with ib.for_range(0, before * after, name="line", kind="parallel") as line:
            base = (line // after) * length * after + line % after
            if exclusive:
                out[base] = expr_ops.const(identity, dtype)
            else:
                out[base] = cast(src[base])
            with ib.for_range(0, length - 1, name="k") as k:
                at = base + (k + 1) * after
                prev = base + k * after
                out[at] = binop(out[prev], cast(src[prev] if exclusive else src[at]))
        return ib.get()

    return te.extern([data.shape], [data], body, dtype=[dtype], name=f"T_{what}",
                     tag=what)


def cumsum(data, axis=None, dtype=None, exclusive=None):
    """The cumulative sum along ``axis`` (of the flattened tensor when None), as numpy.

    With ``exclusive`` the j-th element sums the first j - 1 elements (the first is 0).
    """
    return _scan(data, axis, dtype, exclusive, lambda x, y: x + y, 0, "cumsum")


def cumprod(data, axis=None, dtype=None, exclusive=None):
    """The cumulative product along ``axis`` (of the flattened tensor when None), as numpy.

    With ``exclusive`` the j-th element multiplies the first j - 1 elements (the first is 1).
    """
    return _scan(data, axis, dtype, exclusive, lambda x, y: x * y, 1, "cumprod")
