"""Injective transforms: transpose, reshape, concatenate, split, take, strided_slice, ...

All follow numpy's conventions where TVM's topi does (negative axes count from the end).
"""

import math as _pymath

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..te import compute
from ..tir import expr_ops
from . import _math, tag
from .utils import (
    broadcast_index,
    broadcast_shape,
    const_or_none,
    const_shape,
    dim_add,
    dim_mul,
    equal_dims,
    get_const_int,
    is_tensor,
    normalize_axis,
    prod,
    ravel_index,
    unravel_index,
)


def _tensor(x, what):
    if not is_tensor(x):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {x!r}")
    return x


def expand_dims(a, axis, num_newaxis=1):
    """``a`` with ``num_newaxis`` dimensions of size 1 inserted at ``axis``."""
    _tensor(a, "expand_dims")
    ndim = len(a.shape)
    axis = normalize_axis(axis, ndim + 1, "topi.expand_dims")
    shape = list(a.shape[:axis]) + [1] * num_newaxis + list(a.shape[axis:])

    def fcompute(*i):
        return a[tuple(i[:axis]) + tuple(i[axis + num_newaxis :])]

    return compute(shape, fcompute, name="T_expand_dims", tag=tag.BROADCAST)


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed when ``axes`` is None)."""
    _tensor(a, "transpose")
    ndim = len(a.shape)
    if axes is None:
        axes = list(reversed(range(ndim)))
    axes = [normalize_axis(x, ndim, "topi.transpose") for x in axes]
    if sorted(axes) != list(range(ndim)):
        raise TesseraValueError(
            f"topi.transpose: axes {tuple(axes)} are not a permutation of the {ndim} dimensions"
        )
    shape = [a.shape[x] for x in axes]

    def fcompute(*i):
        idx = [None] * ndim
        for out_d, in_d in enumerate(axes):
            idx[in_d] = i[out_d]
        return a[tuple(idx)]

    return compute(shape, fcompute, name="T_transpose", tag=tag.INJECTIVE)


def flip(a, axis=0):
    """``a`` reversed along ``axis``."""
    _tensor(a, "flip")
    axis = normalize_axis(axis, len(a.shape), "topi.flip")

    def fcompute(*i):
        idx = list(i)
        idx[axis] = a.shape[axis] - 1 - i[axis]
        return a[tuple(idx)]

    return compute(a.shape, fcompute, name="T_reverse_sequence", tag=tag.INJECTIVE)


def reshape(a, newshape):
    """``a``'s elements in row-major order with the shape ``newshape`` (one entry may be -1)."""
    _tensor(a, "reshape")
    size = prod(a.shape)
    newshape = list(newshape)
    unknown = [d for d, s in enumerate(newshape) if const_or_none(s) == -1]
    if len(unknown) > 1:
        raise TesseraValueError("topi.reshape: only one dimension of the new shape can be -1")
    csize = const_or_none(size) if not isinstance(size, int) else size
    if unknown:
        rest = prod([s for d, s in enumerate(newshape) if d not in unknown])
        crest = const_or_none(rest) if not isinstance(rest, int) else rest
        if csize is None or crest is None or crest == 0 or csize % crest:
            raise TesseraValueError(
                f"topi.reshape: cannot reshape {tuple(a.shape)} into {tuple(newshape)}"
            )
        newshape[unknown[0]] = csize // crest
    nsize = prod(newshape)
    cnsize = const_or_none(nsize) if not isinstance(nsize, int) else nsize
    if csize is not None and cnsize is not None and csize != cnsize:
        raise TesseraValueError(
            f"topi.reshape: cannot reshape {tuple(a.shape)} ({csize} elements) "
            f"into {tuple(newshape)} ({cnsize} elements)"
        )

    def fcompute(*i):
        return a[tuple(unravel_index(ravel_index(i, newshape), a.shape))]

    return compute(newshape, fcompute, name="T_reshape", tag=tag.INJECTIVE)


def squeeze(a, axis=None):
    """``a`` without its dimensions of size 1 (only those in ``axis`` when given)."""
    _tensor(a, "squeeze")
    ndim = len(a.shape)
    if axis is None:
        axes = [d for d in range(ndim) if const_or_none(a.shape[d]) == 1]
    else:
        axes = [
            normalize_axis(x, ndim, "topi.squeeze")
            for x in (axis if isinstance(axis, (list, tuple)) else [axis])
        ]
        for d in axes:
            if const_or_none(a.shape[d]) != 1:
                raise TesseraValueError(f"topi.squeeze: dimension {d} has size {a.shape[d]}, not 1")
    keep = [d for d in range(ndim) if d not in axes]

    def fcompute(*i):
        it = iter(i)
        return a[tuple(0 if d in axes else next(it) for d in range(ndim))]

    return compute([a.shape[d] for d in keep], fcompute, name="T_squeeze", tag=tag.INJECTIVE)


def _same_except(tensors, axis, what):
    ndim = len(tensors[0].shape)
    for t in tensors:
        if len(t.shape) != ndim:
            raise TesseraValueError(
                f"topi.{what}: all tensors need {ndim} dimensions, {t.name} has {len(t.shape)}"
            )
        for d in range(ndim):
            if d != axis and not equal_dims(t.shape[d], tensors[0].shape[d]):
                raise TesseraValueError(
                    f"topi.{what}: shapes {tuple(tensors[0].shape)} and {tuple(t.shape)} differ "
                    f"in dimension {d}"
                )
        if t.dtype != tensors[0].dtype:
            raise TesseraTypeError(f"topi.{what}: dtypes {tensors[0].dtype} and {t.dtype} differ")


def concatenate(a_tuple, axis=0):
    """The tensors joined along the existing ``axis``."""
    tensors = [_tensor(t, "concatenate") for t in a_tuple]
    if not tensors:
        raise TesseraValueError("topi.concatenate needs at least one tensor")
    ndim = len(tensors[0].shape)
    axis = normalize_axis(axis, ndim, "topi.concatenate")
    _same_except(tensors, axis, "concatenate")
    offsets, total = [], 0
    for t in tensors:
        offsets.append(total)
        total = dim_add(total, t.shape[axis])
    shape = list(tensors[0].shape)
    shape[axis] = total

    def fcompute(*i):
        def part(j):
            idx = list(i)
            idx[axis] = i[axis] - offsets[j] if j else i[axis]
            return tensors[j][tuple(idx)]

        value = part(len(tensors) - 1)
        for j in range(len(tensors) - 2, -1, -1):
            value = _math.if_then_else(i[axis] < offsets[j + 1], part(j), value)
        return value

    return compute(shape, fcompute, name="T_concat", tag=tag.INJECTIVE)


def stack(tensors, axis=0):
    """The tensors (of one shape) joined along a new ``axis``."""
    tensors = [_tensor(t, "stack") for t in tensors]
    if not tensors:
        raise TesseraValueError("topi.stack needs at least one tensor")
    ndim = len(tensors[0].shape)
    axis = normalize_axis(axis, ndim + 1, "topi.stack")
    _same_except(tensors, None, "stack")
    shape = list(tensors[0].shape[:axis]) + [len(tensors)] + list(tensors[0].shape[axis:])

    def fcompute(*i):
        idx = tuple(i[:axis]) + tuple(i[axis + 1 :])
        value = tensors[-1][idx]
        for j in range(len(tensors) - 2, -1, -1):
            value = _math.select(expr_ops.compare("==", i[axis], j), tensors[j][idx], value)
        return value

    return compute(shape, fcompute, name="T_stack", tag=tag.INJECTIVE)


def split(ary, indices_or_sections, axis=0):
    """``ary`` cut along ``axis``: into equal sections (an int) or at the given indices.

    >>> a, b, c = topi.split(x, 3, axis=1)
    """
    _tensor(ary, "split")
    ndim = len(ary.shape)
    axis = normalize_axis(axis, ndim, "topi.split")
    n = const_or_none(ary.shape[axis])
    if n is None:
        raise TesseraValueError("topi.split needs a constant size along the split axis")
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        sections = indices_or_sections
        if sections <= 0 or n % sections:
            raise TesseraValueError(
                f"topi.split: {n} elements along axis {axis} cannot be split "
                f"into {sections} equal sections"
            )
        points = [n // sections * k for k in range(1, sections)]
    else:
        points = [get_const_int(p) for p in indices_or_sections]
    bounds = [0] + [builtins_min(builtins_max(p, 0), n) for p in points] + [n]
    outs = []
    for j in range(len(bounds) - 1):
        begin, size = bounds[j], builtins_max(bounds[j + 1] - bounds[j], 0)
        shape = list(ary.shape)
        shape[axis] = size

        def fcompute(*i, begin=begin):
            idx = list(i)
            idx[axis] = i[axis] + begin
            return ary[tuple(idx)]

        outs.append(compute(shape, fcompute, name=f"T_split_{j}", tag=tag.INJECTIVE))
    return outs


builtins_min, builtins_max = min, max


def tile(a, reps):
    """``a`` repeated ``reps[d]`` times along each dimension (numpy's ``np.tile``)."""
    _tensor(a, "tile")
    reps = [get_const_int(r) for r in reps]
    ndim = builtins_max(len(a.shape), len(reps))
    reps = [1] * (ndim - len(reps)) + reps
    in_shape = [1] * (ndim - len(a.shape)) + list(a.shape)
    shape = [dim_mul(s, r) for s, r in zip(in_shape, reps)]
    offset = ndim - len(a.shape)

    def fcompute(*i):
        return a[tuple(i[d + offset] % a.shape[d] for d in range(len(a.shape)))]

    return compute(shape, fcompute, name="T_tile", tag=tag.BROADCAST)


def repeat(a, repeats, axis):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (numpy's ``np.repeat``)."""
    _tensor(a, "repeat")
    repeats = get_const_int(repeats)
    if repeats < 1:
        raise TesseraValueError(f"topi.repeat: repeats must be at least 1, got {repeats}")
    axis = normalize_axis(axis, len(a.shape), "topi.repeat")
    shape = list(a.shape)
    shape[axis] = dim_mul(shape[axis], repeats)

    def fcompute(*i):
        idx = list(i)
        idx[axis] = i[axis] // repeats
        return a[tuple(idx)]

    return compute(shape, fcompute, name="T_repeat", tag=tag.BROADCAST)


def _index_of(indices, what):
    if not expr_ops.is_int(indices.dtype):
        raise TesseraTypeError(f"topi.{what}: indices must be integers, got {indices.dtype}")


def _fix_index(v, n, mode, what):
    """An index of an axis of size ``n`` after ``mode``: clip, wrap, fast (as is) or nan."""
    v = expr_ops.cast(v, "int32") if v.dtype != "int32" and v.dtype not in ("int64",) else v
    n = expr_ops.cast(n, v.dtype) if isinstance(n, _core.PrimExpr) else expr_ops.const(n, v.dtype)
    if mode == "clip":
        return expr_ops.maximum(expr_ops.minimum(v, n - 1), expr_ops.const(0, v.dtype))
    if mode == "wrap":
        return expr_ops.floormod(v, n)
    if mode in ("fast", "nan"):
        return v
    raise TesseraValueError(
        f"topi.{what}: unknown mode '{mode}'; use 'clip', 'wrap', 'fast' or 'nan'"
    )


def take(a, indices, axis=None, batch_dims=0, mode="fast"):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None).

    ``mode``: "clip" clamps indices to the axis, "wrap" wraps them around, "nan" gives NaN for
    indices out of range, "fast" trusts them.

    >>> y = topi.take(x, idx, axis=1, mode="wrap")
    """
    _tensor(a, "take")
    if axis is None:
        a = reshape(a, (prod(a.shape),))
        axis = 0
    ndim = len(a.shape)
    axis = normalize_axis(axis, ndim, "topi.take")
    if isinstance(indices, (int, _core.PrimExpr)) and not isinstance(indices, bool):
        # A scalar index removes the axis.
        shape = list(a.shape[:axis]) + list(a.shape[axis + 1 :])

        def fscalar(*i):
            k = _fix_index(expr_ops.convert(indices), a.shape[axis], mode, "take")
            value = a[tuple(i[:axis]) + (k,) + tuple(i[axis:])]
            return value

        return compute(shape, fscalar, name="T_take", tag=tag.INJECTIVE)
    _tensor(indices, "take")
    _index_of(indices, "take")
    ind_ndim = len(indices.shape)
    if batch_dims < 0:
        batch_dims += ind_ndim
    if not 0 <= batch_dims <= builtins_min(axis, ind_ndim):
        raise TesseraValueError(
            f"topi.take: batch_dims {batch_dims} must be at most the axis "
            f"({axis}) and the indices' dimensions ({ind_ndim})"
        )
    shape = list(a.shape[:axis]) + list(indices.shape[batch_dims:]) + list(a.shape[axis + 1 :])
    n_ind = ind_ndim - batch_dims

    def fcompute(*i):
        ind_idx = tuple(i[:batch_dims]) + tuple(i[axis : axis + n_ind])
        raw = indices[ind_idx]
        k = _fix_index(raw, a.shape[axis], mode, "take")
        value = a[tuple(i[:axis]) + (k,) + tuple(i[axis + n_ind :])]
        if mode == "nan":
            if not expr_ops.is_float(a.dtype):
                raise TesseraTypeError("topi.take: mode 'nan' needs a floating-point tensor")
            n = expr_ops.cast(a.shape[axis], k.dtype)
            inside = expr_ops.logical_and(k >= expr_ops.const(0, k.dtype), k < n)
            return _math.if_then_else(inside, value, expr_ops.const(float("nan"), a.dtype))
        return value

    return compute(shape, fcompute, name="T_take", tag=tag.INJECTIVE)


def gather(data, axis, indices):
    """numpy's ``take_along_axis``: along ``axis``, each output element reads ``data`` at the
    position ``indices`` holds for it (the other coordinates unchanged); the output has the
    shape of ``indices``."""
    _tensor(data, "gather")
    _tensor(indices, "gather")
    _index_of(indices, "gather")
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, "topi.gather")
    if len(indices.shape) != ndim:
        raise TesseraValueError(
            f"topi.gather: indices need {ndim} dimensions like the data, got {len(indices.shape)}"
        )

    def fcompute(*i):
        idx = list(i)
        idx[axis] = indices[i]
        return data[tuple(idx)]

    return compute(indices.shape, fcompute, name="T_gather", tag=tag.INJECTIVE)


def gather_nd(a, indices, batch_dims=0):
    """Elements of ``a`` at the index tuples in the first dimension of ``indices``.

    ``indices`` has the shape ``(M, B..., Y...)`` (``B`` the ``batch_dims`` leading dimensions
    shared with ``a``); the output ``(B..., Y..., a.shape[batch_dims + M:]...)``.
    """
    _tensor(a, "gather_nd")
    _tensor(indices, "gather_nd")
    _index_of(indices, "gather_nd")
    m = const_or_none(indices.shape[0])
    if m is None or m + batch_dims > len(a.shape):
        raise TesseraValueError(
            f"topi.gather_nd: the indices' first dimension ({indices.shape[0]}) "
            f"plus batch_dims ({batch_dims}) exceeds the data's "
            f"{len(a.shape)} dimensions"
        )
    shape = list(indices.shape[1:]) + list(a.shape[batch_dims + m :])
    n_ind = len(indices.shape) - 1

    def fcompute(*i):
        head = tuple(i[:n_ind])
        idx = list(i[:batch_dims])
        idx += [indices[(j,) + head] for j in range(m)]
        idx += list(i[n_ind:])
        return a[tuple(idx)]

    return compute(shape, fcompute, name="T_gather_nd", tag=tag.INJECTIVE)


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """``on_value`` where the new ``axis`` equals the index, ``off_value`` elsewhere; float
    indices are compared as floats, as in TVM.

    >>> y = topi.one_hot(idx, 1.0, 0.0, 10, -1, "float32")
    """
    _tensor(indices, "one_hot")
    float_indices = expr_ops.is_float(indices.dtype)
    if not float_indices:
        _index_of(indices, "one_hot")
    dtype = _core.canonical_dtype(str(dtype))
    ndim = len(indices.shape)
    axis = ndim if axis == -1 else normalize_axis(axis, ndim + 1, "topi.one_hot")
    shape = list(indices.shape[:axis]) + [depth] + list(indices.shape[axis:])
    on = expr_ops.cast(on_value, dtype)
    off = expr_ops.cast(off_value, dtype)

    def fcompute(*i):
        idx = tuple(i[:axis]) + tuple(i[axis + 1 :])
        if float_indices:  # as TVM: compared as floats (1.0 hits position 1, 1.5 none)
            hit = expr_ops.compare("==", indices[idx], expr_ops.cast(i[axis], indices.dtype))
        else:
            hit = expr_ops.compare(
                "==", expr_ops.cast(indices[idx], "int32"), expr_ops.cast(i[axis], "int32")
            )
        return _math.select(hit, on, off)

    return compute(shape, fcompute, name="T_one_hot", tag=tag.INJECTIVE)


def _slice_range(begin, end, stride, n, slice_mode):
    if stride == 0:
        raise TesseraValueError("topi.strided_slice: a stride cannot be 0")
    if slice_mode == "size":
        stride = 1
        b = begin + n if begin < 0 else begin
        end = n if end < 0 else b + end
        return slice(b, end, 1).indices(n)
    return slice(begin, end, stride).indices(n)


def strided_slice(a, begin, end, strides=None, axes=None, slice_mode="end", assume_inbound=True):
    """``a[begin:end:strides]`` per axis, with Python's rules for negative and out-of-range
    bounds; ``axes`` names the sliced axes (all from the first when None).

    ``slice_mode="size"`` reads ``end`` as a size (-1: to the end of the axis).

    >>> y = topi.strided_slice(x, [1, 0], [5, -1], [2, 1])
    """
    _tensor(a, "strided_slice")
    if slice_mode not in ("end", "size"):
        raise TesseraValueError(
            f"topi.strided_slice: slice_mode must be 'end' or 'size', got '{slice_mode}'"
        )
    shape = const_shape(a, "topi.strided_slice")
    ndim = len(shape)
    begin = [get_const_int(b) for b in begin]
    end = [get_const_int(e) for e in end]
    strides = [1] * len(begin) if strides is None else [get_const_int(s) for s in strides]
    if axes is None:
        axes = list(range(len(begin)))
    else:
        axes = [normalize_axis(x, ndim, "topi.strided_slice") for x in axes]
    if not (len(begin) == len(end) == len(axes)) or len(strides) not in (1, len(axes)):
        raise TesseraValueError(
            "topi.strided_slice: begin, end, strides and axes need one entry per sliced axis"
        )
    if len(strides) == 1:
        strides = strides * len(axes)
    if len(axes) > ndim:
        raise TesseraValueError(f"topi.strided_slice: {len(axes)} slices for {ndim} dimensions")
    starts, steps, out_shape = [0] * ndim, [1] * ndim, list(shape)
    for b, e, s, d in zip(begin, end, strides, axes):
        start, stop, step = _slice_range(b, e, s, shape[d], slice_mode)
        starts[d], steps[d] = start, step
        out_shape[d] = len(range(start, stop, step))

    def fcompute(*i):
        return a[
            tuple(
                i[d] * steps[d] + starts[d] if (steps[d], starts[d]) != (1, 0) else i[d]
                for d in range(ndim)
            )
        ]

    return compute(out_shape, fcompute, name="T_strided_slice", tag=tag.INJECTIVE)


def where(condition, x, y):
    """``x`` where ``condition`` holds, else ``y``, broadcasting the three (numpy's ``np.where``).

    ``x`` and ``y`` may be scalars.
    """
    _tensor(condition, "where")
    shapes = [list(condition.shape)] + [list(t.shape) for t in (x, y) if is_tensor(t)]
    shape = broadcast_shape(shapes, "topi.where")

    def value(t, i):
        return broadcast_index(t, i) if is_tensor(t) else t

    def fcompute(*i):
        c = broadcast_index(condition, i)
        if c.dtype != "bool":
            c = c != expr_ops.const(0, c.dtype)
        return _math.select(c, value(x, i), value(y, i))

    return compute(shape, fcompute, name="T_where", tag=tag.BROADCAST)


def arange(start, stop=None, step=1, dtype="float32"):
    """``start, start + step, ...`` below ``stop`` (numpy's ``np.arange``); ``arange(n)`` counts
    from 0."""
    if stop is None:
        start, stop = 0, start
    dtype = _core.canonical_dtype(str(dtype))
    if step == 0:
        raise TesseraValueError("topi.arange: step cannot be 0")
    n = builtins_max(int(_pymath.ceil((stop - start) / step)), 0)

    def fcompute(i):
        if expr_ops.is_float(dtype):
            return expr_ops.const(start, dtype) + expr_ops.cast(i, dtype) * expr_ops.const(
                step, dtype
            )
        return expr_ops.cast(i * int(step) + int(start), dtype)

    return compute((n,), fcompute, name="T_arange", tag=tag.ELEMWISE)


def matmul(a, b, transp_a=False, transp_b=False):
    """The matrix product of 2-D tensors, either of them transposed first."""
    from .nn.dense import matmul as nn_matmul

    return nn_matmul(a, b, transpose_a=transp_a, transpose_b=transp_b)


def shape(array, dtype="int32"):
    """A 1-D tensor holding the shape of ``array``."""
    _tensor(array, "shape")
    dims = list(array.shape)

    def fcompute(i):
        value = expr_ops.const(0, dtype)
        for d in range(len(dims) - 1, -1, -1):
            value = _math.select(expr_ops.compare("==", i, d), expr_ops.cast(dims[d], dtype), value)
        return value

    return compute((len(dims),), fcompute, name="T_shape", tag=tag.ELEMWISE)


def _parse_layout(layout, what):
    """``"NCHW16c"`` -> [("N", None), ("C", None), ("H", None), ("W", None), ("c", 16)]."""
    out, num = [], ""
    for ch in layout:
        if ch.isdigit():
            num += ch
            continue
        if not ch.isalpha():
            raise TesseraValueError(f"{what}: bad layout '{layout}'")
        if ch.islower():
            if not num:
                raise TesseraValueError(
                    f"{what}: the sub-axis '{ch}' of layout '{layout}' needs a size"
                )
            out.append((ch, int(num)))
        else:
            if num:
                raise TesseraValueError(f"{what}: bad layout '{layout}'")
            out.append((ch, None))
        num = ""
    primal = [c for c, n in out if n is None]
    if len(set(primal)) != len(primal):
        raise TesseraValueError(f"{what}: repeated axis in layout '{layout}'")
    for c, n in out:
        if n is not None and c.upper() not in primal:
            raise TesseraValueError(f"{what}: layout '{layout}' splits '{c.upper()}' but lacks it")
    return out


def layout_transform(array, src_layout, dst_layout, schedule_rule="None"):
    """``array`` rearranged from ``src_layout`` to ``dst_layout`` (e.g. "NCHW" to "NCHW8c").

    A primal axis (upper case) may be split by a sub-axis of constant size (``8c``).
    """
    _tensor(array, "layout_transform")
    what = "topi.layout_transform"
    src, dst = _parse_layout(src_layout, what), _parse_layout(dst_layout, what)
    if len(src) != len(array.shape):
        raise TesseraValueError(
            f"{what}: layout '{src_layout}' has {len(src)} axes but the tensor "
            f"has {len(array.shape)} dimensions"
        )
    if sorted(c for c, n in src if n is None) != sorted(c for c, n in dst if n is None):
        raise TesseraValueError(f"{what}: '{src_layout}' and '{dst_layout}' have different axes")
    shape = const_shape(array, what)
    sub_src = {c.upper(): n for c, n in src if n is not None}
    sub_dst = {c.upper(): n for c, n in dst if n is not None}
    full = {}
    for (c, n), s in zip(src, shape):
        if n is None:
            full[c] = full.get(c, 1) * s * sub_src.get(c, 1)
        elif s != n:
            raise TesseraValueError(
                f"{what}: dimension {c} of size {s} does not match '{src_layout}'"
            )
    out_shape = []
    for c, n in dst:
        if n is None:
            if full[c] % sub_dst.get(c, 1):
                raise TesseraValueError(
                    f"{what}: axis {c} of size {full[c]} does not split by {sub_dst[c]}"
                )
            out_shape.append(full[c] // sub_dst.get(c, 1))
        else:
            out_shape.append(n)

    def fcompute(*i):
        value = {}
        for (c, n), v in zip(dst, i):
            if n is None:
                value[c] = value.get(c, 0) + v * sub_dst.get(c, 1)
            else:
                value[c.upper()] = value.get(c.upper(), 0) + v
        idx = []
        for c, n in src:
            if n is None:
                idx.append(value[c] // sub_src[c] if c in sub_src else value[c])
            else:
                idx.append(value[c.upper()] % n)
        return array[tuple(idx)]

    return compute(out_shape, fcompute, name="T_layout_trans", tag=tag.INJECTIVE)


__all__ = [
    _n
    for _n, _v in list(globals().items())
    if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", None) == __name__
]
