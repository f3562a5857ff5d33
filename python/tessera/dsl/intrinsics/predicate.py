"""The argument checks of the table's mask intrinsics (table.py): S.const_mask, S.tail_mask,
S.vall, S.vany."""

from ... import _core
from .. import types as T
from ..masks import const_mask_expr, mask_lanes, to_mask
from ..values import is_expr


def _const_mask(p, node, name, x):
    """The const_mask form: a constant mask from a bool list or a mask string (built by
    const_mask_expr, the entry's op)."""
    if isinstance(x, str):
        from ..masks import MaskStringError, parse_mask_string

        try:
            values = parse_mask_string(x)
        except MaskStringError as err:
            raise p.error(node, str(err)) from None
    else:
        values = mask_lanes(p, node, x, len(x) if hasattr(x, "__len__") else 0)
        if values is None:
            raise p.error(node, f"S.{name} expects a bool list or a mask string, got {p.describe(x)}")
    if len(values) < 2:
        raise p.error(node, "a mask has at least 2 lanes")
    return const_mask_expr(p, node, values)


def _tail_mask(p, node, name, op, n, lanes):
    """The tail_mask form: lanes below ``n`` active (constant lanes for a constant ``n``)."""
    lanes = p.static_int(node, lanes, "lanes")
    if lanes < 2:
        raise p.error(node, f'the arg "lanes" must be at least 2, got {lanes}')
    count = p.to_index(node, n)
    if isinstance(count, _core.IntImm):
        c = count.value
        return const_mask_expr(p, node, [i < c for i in range(lanes)])
    return p.call_op(node, f"boolx{lanes}", op, [count])


def _mask_reduce(p, node, name, op, every, mask):
    """The mask_reduce form: whether every (``every``) or any lane of the mask is active; a
    compile-time bool list gives a Python bool."""
    mask = p.load(mask)
    if not is_expr(mask):
        values = mask_lanes(p, node, mask, len(mask) if hasattr(mask, "__len__") else 0)
        if values is None:
            raise p.error(node, f"expects a mask, got {p.describe(mask)}")
        return all(values) if every else any(values)
    m = to_mask(p, node, mask, T.lanes_of(mask.dtype))
    return p.call_op(node, "bool", op, [m])
