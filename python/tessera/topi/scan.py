"""Cumulative sums and products: ``topi.cumsum(x, axis=1, exclusive=True)``.

As TVM's topi does, the scan is a ``te.extern`` whose body (built with ``tir.ir_builder``)
walks the scanned axis once per line, carrying the running value: linear work, the lines
(every index outside the axis) in parallel.

Two rules of the body's form make the host loop over contiguous lines (the last axis, or the
flattened tensor) cheap without changing the order of the operations (so float results are
bit-identical); strided lines, bound by their cache misses, keep the plain form:

- Indices are computed in int64. The host C is compiled with -fwrapv, so an int32 index
  ``line * n + k + 1`` may wrap and GCC recomputes and sign-extends it for every element; in
  int64 the loads and stores walk two pointers (cumsum of 2048 x 2048 int32 rows, one thread:
  2.16 -> 1.37 ms).
- Integer scans take the steps 4 at a time (an unrolled inner loop): their additions have a
  one-cycle latency, so the loop's own overhead was the limit (int32 1.37 -> 1.25 ms; numpy
  1.6-1.7). Float scans are bound by the latency of the chain of additions and keep one step
  per iteration (unrolled, float16 was 1% slower).
"""

# The steps of an integer scan per iteration of its (unrolled) inner loop.
_INT_SCAN_UNROLL = 4

from .. import _core, te
from ..error import TesseraTypeError
from ..tir import expr_ops, ir_builder
from .utils import is_tensor, normalize_axis, prod


def _static(e):
    return int(e.value) if isinstance(e, _core.IntImm) else e


def _scan(data, axis, dtype, exclusive, binop, identity, what):
    if not is_tensor(data):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {data!r}")
    dtype = data.dtype if dtype is None else _core.canonical_dtype(str(dtype))
    shape = [_static(d) for d in data.shape]
    if axis is None:
        # the flattened tensor: one line over every element, read through flat indices
        # (no reshape stage: with int64 indices it was no longer inlined, but copied)
        length, before, after = prod(shape), 1, 1
        out_shape = [prod(data.shape)]
    else:
        ndim = len(data.shape)
        axis = normalize_axis(axis, ndim, f"topi.{what}")
        length = shape[axis]
        before = prod(shape[:axis]) if axis > 0 else 1
        after = prod(shape[axis + 1:]) if axis + 1 < ndim else 1
        out_shape = data.shape

    def body(ins, outs):
        ib = ir_builder.create()
        src, out = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        cast = lambda v: expr_ops.cast(v, dtype)  # noqa: E731
        # int64 indices on contiguous lines (strided lines, bound by their cache misses, measured
        # no clear gain and keep their int32 form)
        contiguous = isinstance(after, int) and after == 1
        wide = (lambda v: expr_ops.cast(v, "int64")) if contiguous else (lambda v: v)  # noqa: E731
        with ib.for_range(0, before * after, name="line", kind="parallel") as line:
            line = wide(line)
            base = (line // after) * length * after + line % after
            # The running value in a one-element local buffer (a register), not read back from
            # the output: a store and a reload per element would put the store-to-load latency
            # into the chain of additions (cumsum of 2048 x 2048 float32 rows, one thread,
            # AVX2: 16.7 -> 4.9 ms; numpy 16.9 ms).
            acc = ib.allocate(dtype, (1,), name="acc", scope="local")
            if exclusive:
                acc[0] = expr_ops.const(identity, dtype)
            else:
                acc[0] = cast(src[base])
            out[base] = acc[0]

            def step(k):  # k: an int64 step number
                at = base + (k + 1) * after
                prev = base + k * after
                acc[0] = binop(acc[0], cast(src[prev] if exclusive else src[at]))
                out[at] = acc[0]

            steps = length - 1
            unroll = _INT_SCAN_UNROLL if "int" in str(dtype) and contiguous else 1
            full = steps // unroll if isinstance(steps, int) and unroll > 1 else 0
            if full:
                with ib.for_range(0, full, name="ko") as ko:
                    with ib.for_range(0, unroll, name="ki", kind="unroll") as ki:
                        step(wide(ko) * unroll + wide(ki))
            with ib.for_range(full * unroll, steps, name="k") as k:
                step(wide(k))
        return ib.get()

    return te.extern([out_shape], [data], body, dtype=[dtype], name=f"T_{what}",
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
