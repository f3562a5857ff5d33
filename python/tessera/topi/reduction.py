"""Reductions over axes: ``topi.sum(x, axis=(0, 2), keepdims=True)``, ``topi.argmax(x, 1)``.

``axis`` is None (every axis), an int or a tuple of ints; negative axes count from the end.
With ``keepdims`` the reduced axes stay as dimensions of size 1.
"""

from .. import te
from ..error import TesseraTypeError
from ..tir import expr_ops
from . import _math, tag
from .utils import is_tensor, normalize_axes, ravel_index


def _layout(data, axis, keepdims, what):
    if not is_tensor(data):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {data!r}")
    ndim = len(data.shape)
    axes = normalize_axes(axis, ndim, f"topi.{what}")
    if keepdims:
        shape = [1 if d in axes else data.shape[d] for d in range(ndim)]
    else:
        shape = [data.shape[d] for d in range(ndim) if d not in axes]
    return axes, shape


def _input_index(data, axes, keepdims, out_index, reduce_vars):
    """The input indices for an output position and the reduce variables."""
    idx, it, r = [], iter(out_index), iter(reduce_vars)
    for d in range(len(data.shape)):
        if d in axes:
            if keepdims:
                next(it)
            idx.append(next(r))
        else:
            idx.append(next(it))
    return tuple(idx)


def _reduce(data, axis, keepdims, reducer, what, value=None):
    axes, shape = _layout(data, axis, keepdims, what)

    def fcompute(*out):
        rv = [te.reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]
        v = data[_input_index(data, axes, keepdims, out, rv)]
        if value is not None:
            v = value(v)
        if not rv:
            return v
        return reducer(v, axis=rv)

    return te.compute(shape, fcompute, name=f"{data.name}_red", tag=tag.COMM_REDUCE)


def sum(data, axis=None, keepdims=False):  # noqa: A001
    """The sum over ``axis``.

    >>> s = topi.sum(x, axis=1)
    """
    return _reduce(data, axis, keepdims, te.sum, "sum")


# te.max / te.min whose identity is an infinity (rfactor and the automatic schedule take it as
# they take te.max's): topi.max / topi.min of floats and the first pass of
# argmax / argmin.
_max_from_inf = te.comm_reducer(
    expr_ops.maximum, lambda t: expr_ops.const(float("-inf"), t), name="max"
)
_min_from_inf = te.comm_reducer(
    expr_ops.minimum, lambda t: expr_ops.const(float("inf"), t), name="min"
)


def _is_float(data):
    return str(data.dtype).startswith(("float", "bfloat"))


def max(data, axis=None, keepdims=False):  # noqa: A001
    """The maximum over ``axis``; of floats, from -inf (as numpy: a row of -inf gives -inf,
    where te.max, from the lowest finite value, gives that)."""
    return _reduce(data, axis, keepdims, _max_from_inf if _is_float(data) else te.max, "max")


def min(data, axis=None, keepdims=False):  # noqa: A001
    """The minimum over ``axis``; of floats, from +inf (as numpy)."""
    return _reduce(data, axis, keepdims, _min_from_inf if _is_float(data) else te.min, "min")


_prod = te.comm_reducer(lambda x, y: x * y, lambda t: expr_ops.const(1, t), name="prod")
_all = te.comm_reducer(
    lambda x, y: expr_ops.logical_and(x, y), lambda t: expr_ops.const(True, t), name="all"
)
_any = te.comm_reducer(
    lambda x, y: expr_ops.logical_or(x, y), lambda t: expr_ops.const(False, t), name="any"
)


def prod(data, axis=None, keepdims=False):
    """The product over ``axis``."""
    return _reduce(data, axis, keepdims, _prod, "prod")


def _as_bool(v):
    return v if v.dtype == "bool" else v != expr_ops.const(0, v.dtype)


def all(data, axis=None, keepdims=False):  # noqa: A001
    """Whether every element over ``axis`` is true (nonzero): a bool tensor."""
    return _reduce(data, axis, keepdims, _all, "all", _as_bool)


def any(data, axis=None, keepdims=False):  # noqa: A001
    """Whether some element over ``axis`` is true (nonzero): a bool tensor."""
    return _reduce(data, axis, keepdims, _any, "any", _as_bool)


def _arg(data, axis, keepdims, select_last_index, extreme, what):
    """The index of the extreme value: its row-major index over the reduced axes (int32).

    Two computes: the extreme value, then the first (or last) index where it occurs. For a
    float type, as numpy's argmax/argmin, a NaN counts as the extreme: the first pass reads a NaN
    as the infinity of the extreme's side, and the second takes an element no worse than the
    extreme (``not x < best``, true of a NaN), one comparison as before. A row holding that
    infinity before its first NaN gives the infinity's index (numpy: the NaN's); telling the
    two apart in the first pass (integer keys that order NaN above +inf) cost 30% of the
    time, measured by hand in C on AVX-512 (0.36 -> 0.47 ms for 2048 x 2048). The first pass
    of a float starts from the infinity of the other side (te.max starts from the lowest finite
    value, which no element of a row of -inf reaches). Float32/64 and 16- to 64-bit integer rows
    over the last axis of at least _blocks_from(dtype) elements are searched by blocks instead
    (`_arg_by_blocks`), with the same results. Built with no schedule for the host, the pass
    tir.ArgExtremeRows makes a search over every axis (two passes, or a 1-d tensor's blocks) one
    call of a flat one-pass search (numpy's results, its first NaN included).
    """
    axes, shape = _layout(data, axis, keepdims, what)
    is_float = _is_float(data)
    is_max = extreme is te.max
    n = _static(data.shape[-1]) if data.shape else None
    if (
        str(data.dtype) in _BLOCK
        and axes == [len(data.shape) - 1]
        and n is not None
        and n >= _blocks_from(data.dtype)
    ):
        return _arg_by_blocks(data, n, shape, select_last_index, is_max)
    value = None
    if is_float:
        inf = expr_ops.const(float("inf") if is_max else float("-inf"), data.dtype)

        def value(x):
            return _math.select(expr_ops.compare("!=", x, x), inf, x)

        extreme = _max_from_inf if is_max else _min_from_inf
    best = _reduce(data, axis, True, extreme, what, value)
    pick = te.max if select_last_index else te.min
    sizes = [data.shape[d] for d in axes]
    none = expr_ops.const(-1 if select_last_index else 2**31 - 1, "int32")

    def fcompute(*out):
        if not axes:
            return expr_ops.const(0, "int32")
        rv = [te.reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]
        idx = _input_index(data, axes, keepdims, out, rv)
        if keepdims:
            best_idx = tuple(0 if d in axes else out[d] for d in range(len(data.shape)))
        else:
            best_idx = tuple(_expand(out, axes, len(data.shape)))
        flat = expr_ops.cast(ravel_index([v.var for v in rv], sizes), "int32")
        if is_float:
            worse = expr_ops.compare("<" if is_max else ">", data[idx], best[best_idx])
            return pick(_math.select(worse, none, flat), axis=rv)
        hit = expr_ops.compare("==", data[idx], best[best_idx])
        return pick(_math.select(hit, flat, none), axis=rv)

    return te.compute(shape, fcompute, name=f"{data.name}_red", tag=tag.COMM_REDUCE_IDX)


# The rows of a float argmax / argmin over the last axis at least _blocks_from(dtype) long
# are searched by blocks (`_arg_by_blocks`); _BLOCK[dtype] elements a block, each block's
# maximum kept as _LANES[dtype] lane maxima: one vector on AVX-512 in both types. float64
# with 16 lanes (two vectors) took 1.16-1.20 ms for 2048 x 2048, with 8 lanes 1.11-1.13
# (AMD Zen 4, one thread, thread CPU time in turn with numpy: 0.82-0.85); blocks of 128 or
# 64 float64 were no faster than 256 (within 1-4%); float32 blocks of 128 tie with 256, 64
# are slower (0.52 against 0.36).
# Integer rows of 16 to 64 bits too, with one AVX-512 vector of lanes and blocks of 256 (2048 x
# 2048, same conditions, ms against two passes: int16 0.349 / 0.384, int32 0.272 / 0.363, int64
# 0.944 / 1.625; int64 blocks of 128 or 512 took 1.03 and 1.07, int32 of 512 0.30). int8 rows
# stay with two passes: blocks of 256, 512 and 1024 (64 lanes) took 0.90, 0.67 and 0.55 ms
# against 0.40.
_BLOCK = {"float32": 256, "float64": 256}
_LANES = {"float32": 16, "float64": 8}
for _t, _lanes in (("int16", 32), ("int32", 16), ("int64", 8)):
    for _u in (_t, "u" + _t):
        _BLOCK[_u], _LANES[_u] = 256, _lanes
_BLOCKS_FROM = 512  # and at least two blocks


def _blocks_from(dtype):
    two = 2 * _BLOCK[str(dtype)]
    return two if two > _BLOCKS_FROM else _BLOCKS_FROM


def _static(extent):
    v = getattr(extent, "value", extent)
    return v if isinstance(v, int) else None


def _arg_by_blocks(data, n, shape, select_last_index, is_max):
    """argmax / argmin of rows (the last axis, ``n`` >= _blocks_from(dtype)) in three steps
    instead of two passes over the row: (1) the extreme of each block of _BLOCK[dtype] elements,
    lane by lane (_LANES[dtype] partial extremes a block: vertical vector operations), a float
    NaN read as the extreme's infinity as in `_arg`; (2) the row's extreme, and the first (last)
    block holding an element no worse than it; (3) the first (last) such element in that block.
    The second look at the row reads one block, not the whole row (2048 x 2048 float32, AMD Zen
    4 AVX-512, one thread, thread CPU time in turn: two passes 0.41 ms, by blocks 0.33, numpy
    0.32-0.34). When the block does not divide n the last block is the row's last block of
    elements, overlapping the block before it; an element of the overlap is in that block too,
    so the first (last) block reaching the extreme holds the first (last) element no worse than
    it, and nothing no worse before (after) it. The same indices as `_arg`'s two passes.
    """
    lead = len(data.shape) - 1
    dtype = data.dtype
    size, width = _BLOCK[str(dtype)], _LANES[str(dtype)]
    blocks = (n + size - 1) // size
    is_float = _is_float(data)
    if is_float:
        inf = expr_ops.const(float("inf") if is_max else float("-inf"), dtype)
        reducer = _max_from_inf if is_max else _min_from_inf
    else:
        reducer = te.max if is_max else te.min
    worse = "<" if is_max else ">"
    pick = te.max if select_last_index else te.min
    none = expr_ops.const(-1 if select_last_index else 2**31 - 1, "int32")

    def start(b):  # the first element of block b (the last block ends at the row's end)
        return expr_ops.minimum(b * size, n - size)

    def value(x):
        return _math.select(expr_ops.compare("!=", x, x), inf, x) if is_float else x

    def lanes(*i):
        *row, b, lane = i
        k = te.reduce_axis((0, size // width), name="k")
        return reducer(value(data[(*row, start(b) + k * width + lane)]), axis=k)

    lead_shape = list(data.shape[:-1])
    part = te.compute(lead_shape + [blocks, width], lanes, name=f"{data.name}_blocks")

    def extreme(*row):
        b = te.reduce_axis((0, blocks), name="b")
        lane = te.reduce_axis((0, width), name="lane")
        return reducer(part[(*row, b, lane)], axis=[b, lane])

    best = te.compute(lead_shape, extreme, name=f"{data.name}_extreme")

    def first_block(*row):
        b = te.reduce_axis((0, blocks), name="b")
        lane = te.reduce_axis((0, width), name="lane")
        bad = expr_ops.compare(worse, part[(*row, b, lane)], best[row])
        return pick(_math.select(bad, none, b), axis=[b, lane])

    where = te.compute(lead_shape, first_block, name=f"{data.name}_block")

    def fcompute(*out):
        row = tuple(out[:lead])
        j = te.reduce_axis((0, size), name="j")
        at = start(where[row]) + j
        bad = expr_ops.compare(worse, data[(*row, at)], best[row])
        return pick(_math.select(bad, none, expr_ops.cast(at, "int32")), axis=j)

    # with keepdims `shape` ends in the kept axis (size 1): fcompute reads only the leading ones
    return te.compute(shape, fcompute, name=f"{data.name}_red", tag=tag.COMM_REDUCE_IDX)


def _expand(out, axes, ndim):
    """Output indices (without kept dims) spread over all ``ndim`` positions (0 at ``axes``)."""
    it = iter(out)
    return [0 if d in axes else next(it) for d in range(ndim)]


def argmax(data, axis=None, keepdims=False, select_last_index=False):
    """The index of the maximum over ``axis`` (int32; the first one unless ``select_last_index``).

    >>> i = topi.argmax(x, axis=1)
    """
    return _arg(data, axis, keepdims, select_last_index, te.max, "argmax")


def argmin(data, axis=None, keepdims=False, select_last_index=False):
    """The index of the minimum over ``axis`` (int32; the first unless ``select_last_index``)."""
    return _arg(data, axis, keepdims, select_last_index, te.min, "argmin")


__all__ = [
    _n
    for _n, _v in list(globals().items())
    if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", None) == __name__
]
