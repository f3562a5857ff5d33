"""The argument checks of the table's permutations (table.py): S.vconcat, S.vsplit, S.vzip,
S.vcompt, S.vcompc, S.vrevs, S.vshfl, S.vbcast, S.vsldl, S.vtbl, S.vreplic. Constant
permutations are Shuffle nodes; the ones that depend on runtime values are calls of the entry's
op (dsl.vperm: a two-vector table lookup)."""

from ... import _core
from .. import types as T
from .. import typing as TY
from ..masks import to_mask
from ..values import is_expr
from ._util import call, check_multiple, check_native, imm, mask_expr, vector

_HALF_PARTS = {"low": (0, 1, 2), "high": (1, 1, 2), "even": (0, 2, 1), "odd": (1, 2, 1)}


def _shuffle(p, node, vectors, indices):
    vectors, indices = list(vectors), list(indices)
    if T.is_bool(vectors[0].dtype):
        # Masks: lane by lane (the width pass splits lane lists of masks, not mask shuffles).
        lanes = [(v, i) for v in vectors for i in range(T.lanes_of(v.dtype))]
        items = [p.call_op(node, "bool", "dsl.get_lane", [lanes[k][0], imm(lanes[k][1])])
                 for k in indices]
        return p.call_op(node, f"boolx{len(items)}", "dsl.vmake", items)
    with p.at(node):
        return _core.Shuffle(list(vectors), [imm(i) for i in indices], p.span(node))


def _part(lanes, part):
    """Lane indices of one half of a vector."""
    first, step, div = _HALF_PARTS[part]
    if div == 2:
        half = lanes // 2
        return list(range(first * half, first * half + half))
    return list(range(first, lanes, step))


def _vec_or_mask(p, node, name, x, what="x"):
    x = p.load(x)
    if not is_expr(x) or T.lanes_of(x.dtype) == 1:
        raise p.error(node, f'S.{name}: the arg "{what}" must be a vector or a mask, got {p.describe(x)}')
    return x


def _vconcat(p, node, name, inps, part="all"):
    """Concatenate 2-4 vectors (or masks), or the ``part`` half of each."""
    if not isinstance(inps, (tuple, list)) or not 2 <= len(inps) <= 4:
        raise p.error(node, f"S.{name} expects a tuple of 2 to 4 vectors")
    items = [_vec_or_mask(p, node, name, v, "inps") for v in inps]
    for v in items[1:]:
        if v.dtype != items[0].dtype:
            raise p.error(node, f'S.{name}: Argument type mismatch: "{items[0].dtype}" vs. "{v.dtype}"')
    lanes = T.lanes_of(items[0].dtype)
    if part == "all":
        idx = list(range(lanes * len(items)))
    elif part in _HALF_PARTS:
        idx = [k * lanes + i for k in range(len(items)) for i in _part(lanes, part)]
    else:
        raise p.error(node, f'S.{name}: the arg "part" must be "all", "low", "high", "even" or '
                            f'"odd", got {part!r}')
    return _shuffle(p, node, items, idx)


_COMPARISONS = ("EQ", "NE", "GT", "GE", "LT", "LE")


def _mask_part_lanes(p, e):
    """The native lanes of the data a mask compares, when the expression (or the value of a
    let-bound mask) shows it."""
    kind = type(e).__name__
    if kind in _COMPARISONS:
        return T.native_lanes(T.element_of(e.a.dtype))
    if kind in ("And", "Or"):
        return _mask_part_lanes(p, e.a) or _mask_part_lanes(p, e.b)
    if kind == "Not":
        return _mask_part_lanes(p, e.a)
    if kind == "Select":
        return _mask_part_lanes(p, e.true_value) or _mask_part_lanes(p, e.false_value)
    if kind == "Var":
        bound = getattr(p, "mask_lets", {}).get(id(e))
        if bound is not None and bound[0] is e:
            return _mask_part_lanes(p, bound[1])
    return None


def _vsplit(p, node, name, x):
    """A multiple-width vector as a tuple of native vectors. A mask splits into native masks
    (8, 16 or 32 lanes): those of the data it compares (``x_i16x32 > 0``: two of 16 lanes),
    else as few as possible (parts of 32 lanes, else 16, else 8)."""
    x = p.load(x)
    if is_expr(x) and T.is_bool(x.dtype) and T.lanes_of(x.dtype) > 1:
        lanes = T.lanes_of(x.dtype)
        n = _mask_part_lanes(p, x) or next((c for c in (32, 16, 8) if c < lanes and lanes % c == 0), None)
        if n is None or n >= lanes or lanes % n != 0:
            raise p.error(node, f'S.{name} expects a multiple-width mask (a multiple of its native '
                                f'8, 16 or 32 lanes), got "{x.dtype}"')
        return tuple(_shuffle(p, node, [x], range(j * n, (j + 1) * n)) for j in range(lanes // n))
    x = vector(p, node, name, x)
    check_multiple(p, node, name, x.dtype)
    n = T.native_lanes(T.element_of(x.dtype))
    k = T.lanes_of(x.dtype) // n
    if k < 2:
        raise p.error(node, f'S.{name} expects a multiple-width vector, got "{x.dtype}"')
    return tuple(_shuffle(p, node, [x], range(j * n, (j + 1) * n)) for j in range(k))


def _vzip(p, node, name, x, y, part="all"):
    """Interleave ``x0 y0 x1 y1 ...``; with ``part`` only that half of each input."""
    a, b = _vec_or_mask(p, node, name, x), _vec_or_mask(p, node, name, y, "y")
    if a.dtype != b.dtype:
        raise p.error(node, f'S.{name}: Argument type mismatch: "{a.dtype}" vs. "{b.dtype}"')
    lanes = T.lanes_of(a.dtype)
    if part == "all":
        src = list(range(lanes))
    elif part in _HALF_PARTS:
        # A multiple-width vector zips as one vector: "low" is the low half of all its lanes.
        check_multiple(p, node, name, a.dtype)
        src = _part(lanes, part)
    else:
        raise p.error(node, f'S.{name}: the arg "part" must be "all", "low", "high", "even" or '
                            f'"odd", got {part!r}')
    idx = [j for i in src for j in (i, lanes + i)]
    return _shuffle(p, node, [a, b], idx)


def _vrevs(p, node, name, x):
    """Lane order reversed (vectors or masks)."""
    x = _vec_or_mask(p, node, name, x)
    check_multiple(p, node, name, x.dtype)
    return _shuffle(p, node, [x], range(T.lanes_of(x.dtype) - 1, -1, -1))


def _vreplic(p, node, name, x, index=0):
    """Lane ``index`` of ``x`` broadcast to every lane."""
    x = vector(p, node, name, x)
    check_multiple(p, node, name, x.dtype)
    lanes = T.lanes_of(x.dtype)
    index = p.load(index)
    if is_expr(index) and not T.is_native(x.dtype):
        # As Compass: only a hardware-native vector takes a lane chosen at run time.
        raise p.error(node, f'S.{name} on "{x.dtype}" (wider than a native vector): the arg "index" '
                            f'must be a compile-time integer, got a run-time value')
    if is_expr(index):
        # One call, printed as Compass's `__vreplic(x, index)`: an index outside the lanes fails
        # the compiled call and raises in PySim (Compass's simulator asserts it is a lane).
        return p.call_op(node, x.dtype, "dsl.vreplic", [x, p.to_index(node, index)])
    i = p.static_int(node, index, "index")
    if not 0 <= i < lanes:
        raise p.error(node, f'S.{name}: the arg "index" must be in [0, {lanes}), got {i}')
    return _shuffle(p, node, [x], [i] * lanes)


def _vsldl(p, node, name, x, y, shift):
    """``concat(x[shift:], y[:shift])``; ``shift`` is an immediate."""
    a, b = vector(p, node, name, x), vector(p, node, name, y, "y")
    if a.dtype != b.dtype:
        raise p.error(node, f'S.{name}: Argument type mismatch: "{a.dtype}" vs. "{b.dtype}"')
    check_multiple(p, node, name, a.dtype)
    lanes = T.lanes_of(a.dtype)
    s = p.static_int(node, shift, 'the arg "shift"')
    if not 0 <= s <= lanes:
        raise p.error(node, f'S.{name}: the arg "shift" must be in [0, {lanes}], got {s}')
    return _shuffle(p, node, [a, b], list(range(s, lanes)) + list(range(lanes, lanes + s)))


def _index_type(dtype):
    return T.with_sign(T.with_lanes(f"int{T.bits_of(dtype)}", T.lanes_of(dtype)), False)


def _vshfl(p, node, name, op, x, shift):
    """Rotate lanes toward lane 0: lane i <- x[(i + shift) mod n]; ``shift`` may be runtime.
    A multiple-width vector rotates as one vector (with an immediate ``shift``)."""
    x = vector(p, node, name, x)
    check_multiple(p, node, name, x.dtype)
    lanes = T.lanes_of(x.dtype)
    shift = p.load(shift)
    if not is_expr(shift):
        s = p.static_int(node, shift, 'the arg "shift"') % lanes
        return _shuffle(p, node, [x], [(i + s) % lanes for i in range(lanes)])
    check_native(p, node, name, x.dtype)
    it = _index_type(x.dtype)
    s = p.binop(node, __import__("ast").Mod(), p.to_index(node, shift), lanes)
    s = _core.Cast(T.element_of(it), s, p.span(node))
    ramp = p.call_op(node, it, "dsl.vmake", [_core.IntImm(T.element_of(it), i) for i in range(lanes)])
    idx = p.call_op(node, it, "tir.bitwise_and",
                    [p.binop(node, __import__("ast").Add(), ramp, _core.Broadcast(s, lanes, p.span(node))),
                     TY.as_type(p, node, lanes - 1, it)])
    return call(p, node, x.dtype, op, [x, x, idx])


def _vtbl(p, node, name, op, table, indices):
    """``table`` is 2-4 vectors read as one array; lane i <- table[indices[i]], 0 when the
    index is out of range."""
    if not isinstance(table, (tuple, list)) or not 2 <= len(table) <= 4:
        raise p.error(node, f"S.{name} expects a table of 2 to 4 vectors")
    ts = [vector(p, node, name, t, "table") for t in table]
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            raise p.error(node, f'S.{name}: Argument type mismatch: "{ts[0].dtype}" vs. "{t.dtype}"')
    check_native(p, node, name, ts[0].dtype)
    idx = vector(p, node, name, indices, "indices")
    it = _index_type(ts[0].dtype)
    if T.lanes_of(idx.dtype) != T.lanes_of(it) or not T.is_int(idx.dtype) or \
            T.bits_of(idx.dtype) != T.bits_of(it):
        raise p.error(node, f'S.{name}: Argument type mismatch: the indices must be "{it}" '
                            f'(or its signed form), got "{idx.dtype}"')
    if idx.dtype != it:
        idx = p.call_op(node, it, "tir.reinterpret", [idx])
    n = T.lanes_of(it)
    first = call(p, node, ts[0].dtype, op, [ts[0], ts[1], idx])
    if len(ts) == 2:
        return first
    import ast

    rest = p.binop(node, ast.Sub(), idx, TY.as_type(p, node, 2 * n, it))
    second = call(p, node, ts[0].dtype, op, [ts[2], ts[3] if len(ts) == 4 else ts[2], rest])
    if len(ts) == 3:
        ok = p.compare(node, ast.Lt(), idx, TY.as_type(p, node, 3 * n, it))
        second = _core.Select(ok, second, TY.as_type(p, node, 0, ts[0].dtype) if not T.is_float(ts[0].dtype)
                              else _core.Broadcast(_core.FloatImm(T.element_of(ts[0].dtype), 0.0), n),
                              p.span(node))
    low = p.compare(node, ast.Lt(), idx, TY.as_type(p, node, 2 * n, it))
    return _core.Select(low, first, second, p.span(node))


def _vcompt(p, node, name, op, x, mask):
    """Active lanes packed to the bottom; the rest are zero."""
    x = vector(p, node, name, x)
    check_native(p, node, name, x.dtype)
    return call(p, node, x.dtype, op, [x, mask_expr(p, node, mask, T.lanes_of(x.dtype))])


def _vcompc(p, node, name, op, x, y, mask):
    """Active lanes of ``x`` packed to the bottom, then ``y[0], y[1], ...``."""
    a, b = vector(p, node, name, x), vector(p, node, name, y, "y")
    if a.dtype != b.dtype:
        raise p.error(node, f'S.{name}: Argument type mismatch: "{a.dtype}" vs. "{b.dtype}"')
    check_native(p, node, name, a.dtype)
    return call(p, node, a.dtype, op, [a, b, mask_expr(p, node, mask, T.lanes_of(a.dtype))])


def _vbcast(p, node, name, x, mask=None, lanes=None):
    """The scalar ``x`` in every lane (native lanes of its type unless ``lanes`` is given)."""
    x = p.load(x)
    if not is_expr(x):
        x = p.to_expr(node, x)
    if T.lanes_of(x.dtype) != 1:
        raise p.error(node, f'S.{name} expects a scalar, got "{x.dtype}"')
    n = T.native_lanes(x.dtype) if lanes is None else p.static_int(node, lanes, 'the arg "lanes"')
    if n < 2:
        raise p.error(node, f'the arg "lanes" must be at least 2, got {n}')
    to_mask(p, node, mask, n)
    return _core.Broadcast(x, n, p.span(node))
