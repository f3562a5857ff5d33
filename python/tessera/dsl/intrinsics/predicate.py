"""Mask intrinsics: S.const_mask, S.tail_mask, S.vall, S.vany."""

from ... import _core
from .. import types as T
from ..masks import const_mask_expr, mask_lanes, to_mask
from ..values import is_expr
from ._registry import intrinsic


@intrinsic
def const_mask(p, node, x):
    """A constant mask from a bool list or a mask string; its lanes are the list's (the
    string's expansion)."""
    if isinstance(x, str):
        from ..masks import MaskStringError, parse_mask_string

        try:
            values = parse_mask_string(x)
        except MaskStringError as err:
            raise p.error(node, str(err)) from None
    else:
        values = mask_lanes(p, node, x, len(x) if hasattr(x, "__len__") else 0)
        if values is None:
            raise p.error(node, f"S.const_mask expects a bool list or a mask string, got {p.describe(x)}")
    if len(values) < 2:
        raise p.error(node, "a mask has at least 2 lanes")
    return const_mask_expr(p, node, values)


@intrinsic
def tail_mask(p, node, n, lanes):
    """Lanes below ``n`` are active; ``n`` may be a runtime value."""
    lanes = p.static_int(node, lanes, "lanes")
    if lanes < 2:
        raise p.error(node, f'the arg "lanes" must be at least 2, got {lanes}')
    count = p.to_index(node, n)
    if isinstance(count, _core.IntImm):
        c = count.value
        return const_mask_expr(p, node, [i < c for i in range(lanes)])
    return p.call_op(node, f"boolx{lanes}", "dsl.tail_mask", [count])


def _reduce(p, node, name, mask):
    mask = p.load(mask)
    if not is_expr(mask):
        values = mask_lanes(p, node, mask, len(mask) if hasattr(mask, "__len__") else 0)
        if values is None:
            raise p.error(node, f"expects a mask, got {p.describe(mask)}")
        return all(values) if name == "dsl.vall" else any(values)
    m = to_mask(p, node, mask, T.lanes_of(mask.dtype))
    return p.call_op(node, "bool", name, [m])


@intrinsic
def vall(p, node, mask):
    """Whether every lane of the mask is active (a scalar bool)."""
    return _reduce(p, node, "dsl.vall", mask)


@intrinsic
def vany(p, node, mask):
    """Whether any lane of the mask is active (a scalar bool)."""
    return _reduce(p, node, "dsl.vany", mask)
