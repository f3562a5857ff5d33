"""Masks: the mask-string grammar and the forms a ``mask=`` argument accepts.

A mask is None (all lanes), a list/tuple/1-D array of bool (padded with False), a mask string
(padded with F) or a bool-vector expression of exactly the operation's lanes::

    mask   ::= group ("_"? group)*
    group  ::= count? run           count ::= digit+ (>= 1, default 1)
    run    ::= ("T" | "F")+         (maximal)

Each group's run repeats ``count`` times: ``"4FT"`` is FTFTFTFT, ``"3T_F"`` is TTTF.
"""

import numpy as np

from .. import _core
from .values import LocalVar


class MaskStringError(ValueError):
    """A malformed mask string; the message says where and why."""


def parse_mask_string(text):
    """The lanes of a mask string, lane 0 first: ``parse_mask_string("2FFFT3T")`` is
    ``[F, F, F, T, F, F, F, T, T, T, T]`` (as bools)."""

    def fail(pos, why):
        raise MaskStringError(f'Invalid mask string "{text}": {why} at position {pos}')

    if len(text) < 2:
        raise MaskStringError(f'Invalid mask string "{text}": a mask string has at least 2 characters')
    lanes, pos, n = [], 0, len(text)
    while pos < n:
        start = pos
        while pos < n and text[pos].isdigit():
            pos += 1
        count = int(text[start:pos]) if pos > start else 1
        if pos > start and count == 0:
            fail(start, "a count must be at least 1")
        run_start = pos
        while pos < n and text[pos] in "TF":
            pos += 1
        if pos == run_start:
            got = f"'{text[pos]}'" if pos < n else "the end"
            fail(pos, f"expected T or F, got {got}")
        lanes.extend([c == "T" for c in text[run_start:pos]] * count)
        if pos < n and text[pos] == "_":
            pos += 1
            if pos == n:
                fail(pos - 1, "'_' cannot end a mask string")
    return lanes


def mask_lanes(p, node, mask, lanes, what="mask"):
    """``mask`` as a list of ``lanes`` bools when it is a constant form, else None."""
    if isinstance(mask, str):
        try:
            values = parse_mask_string(mask)
        except MaskStringError as err:
            raise p.error(node, str(err)) from None
    elif isinstance(mask, np.ndarray):
        if mask.ndim != 1 or mask.dtype != np.bool_:
            raise p.error(node, f"a {what} array must be a 1-D bool array, got {mask.dtype} {mask.shape}")
        values = [bool(v) for v in mask]
    elif isinstance(mask, (list, tuple)) and all(isinstance(v, (bool, np.bool_)) for v in mask):
        values = [bool(v) for v in mask]
    else:
        return None
    if len(values) > lanes:
        raise p.error(node, f"the {what} has {len(values)} lanes but the operation has {lanes}")
    return values + [False] * (lanes - len(values))


def const_mask_expr(p, node, values):
    """A constant mask expression of the given lanes."""
    args = [_core.IntImm("bool", int(v)) for v in values]
    return _core.Call(f"boolx{len(values)}", _core.Op.get("dsl.const_mask"), args, p.span(node))


def to_mask(p, node, mask, lanes, what="mask"):
    """The predicate of an operation of ``lanes`` lanes: None when every lane is active, else a
    bool-vector expression."""
    if mask is None:
        return None
    if isinstance(mask, LocalVar):
        mask = p.load(mask)
    values = mask_lanes(p, node, mask, lanes, what)
    if values is not None:
        return None if all(values) else const_mask_expr(p, node, values)
    if isinstance(mask, _core.PrimExpr):
        t = _core.DataType(mask.dtype)
        if str(t.with_lanes(1)) != "bool" or t.lanes == 1:
            raise p.error(node, f"a {what} must be a bool vector, got {mask.dtype}")
        if t.lanes > lanes:
            raise p.error(node, f"the {what} has {t.lanes} lanes but the operation has {lanes}")
        if t.lanes != lanes:
            raise p.error(node, f'the {what} ({mask.dtype}) must have the operation\'s {lanes} lanes')
        return mask
    raise p.error(node, f"a {what} must be None, a bool list, a mask string or a bool vector, "
                        f"got {p.describe(mask)}")
