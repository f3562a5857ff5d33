"""``topi.nn.pad``: constant padding of any tensor."""

from ...error import TesseraValueError
from ...te import compute
from ...tir import expr_ops
from .. import _math, tag
from ..utils import const_or_none, dim_add


def pad(data, pad_before, pad_after=None, pad_value=0.0, name="PadInput", attrs=None):
    """``data`` with ``pad_before[d]`` / ``pad_after[d]`` elements of ``pad_value`` around each
    dimension ``d`` (``pad_after`` defaults to ``pad_before``).

    >>> P = topi.nn.pad(A, [0, 0, 1, 1], [0, 0, 2, 2])
    """
    ndim = len(data.shape)
    pad_after = pad_before if pad_after is None else pad_after
    if len(pad_before) != ndim or len(pad_after) != ndim:
        raise TesseraValueError(
            f"topi.nn.pad: give one padding per dimension ({ndim}), got "
            f"{len(pad_before)} before and {len(pad_after)} after"
        )
    for p in list(pad_before) + list(pad_after):
        c = const_or_none(p)
        if c is not None and c < 0:
            raise TesseraValueError(f"topi.nn.pad: paddings cannot be negative, got {p}")
    shape = [dim_add(data.shape[d], pad_before[d], pad_after[d]) for d in range(ndim)]
    value = (
        expr_ops.cast(pad_value, data.dtype)
        if not isinstance(pad_value, (int, float))
        else (
            expr_ops.const(
                pad_value if expr_ops.is_float(data.dtype) else int(pad_value), data.dtype
            )
        )
    )

    def fcompute(*i):
        idx, conds = [], []
        for d in range(ndim):
            before, after = const_or_none(pad_before[d]), const_or_none(pad_after[d])
            if before == 0 and after == 0:
                idx.append(i[d])
                continue
            idx.append(i[d] - pad_before[d])
            if before != 0:
                conds.append(i[d] >= pad_before[d])
            if after != 0:
                conds.append(i[d] < data.shape[d] + pad_before[d])
        if not conds:
            return data[tuple(idx)]
        inside = conds[0]
        for c in conds[1:]:
            inside = expr_ops.logical_and(inside, c)
        return _math.if_then_else(inside, data[tuple(idx)], value)

    return compute(shape, fcompute, name=name, tag=tag.INJECTIVE + ",pad", attrs=attrs)
