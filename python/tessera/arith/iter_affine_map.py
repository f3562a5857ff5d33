"""Affine iterator maps (TVM's ``tvm.arith`` iter-map API): index expressions written as sums of
splits of (fused) input iterators, the checks that such a map is surjective or bijective, and
its inverse. The analysis is C++ (src/arith/iter_affine_map.cc); these classes hold its nodes.

>>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
>>> res = detect_iter_map([x * 4 + y], {x: Range(0, 8), y: Range(0, 4)})
>>> res.indices[0].args[0].extent          # one fused iterator over [0, 32)
32

What tessera does not do yet: iterator extents and the bounds in predicates must be constants.
"""

import enum

from .. import _core
from ..error import TesseraTypeError, TesseraValueError

__all__ = [
    "IterMapExpr",
    "IterMark",
    "IterSplitExpr",
    "IterSumExpr",
    "IterMapLevel",
    "IterMapResult",
    "detect_iter_map",
    "iter_map_simplify",
    "normalize_iter_map_to_expr",
    "normalize_to_iter_sum",
    "subspace_divide",
    "inverse_affine_iter_map",
]


class IterMapLevel(enum.IntEnum):
    """What detect_iter_map proves of a map (TVM's values)."""

    Bijective = 0
    Surjective = 1
    NoCheck = 3

    @staticmethod
    def from_str(name):
        """``"bijective"``, ``"surjective"`` or ``"no_check"``."""
        levels = {"bijective": 0, "surjective": 1, "no_check": 3}
        if name not in levels:
            raise TesseraValueError(
                f"unknown iter-map check level {name!r}: expected one of {sorted(levels)}")
        return IterMapLevel(levels[name])


def _level(check_level):
    if isinstance(check_level, str):
        return IterMapLevel.from_str(check_level)
    return IterMapLevel(int(check_level))


def _int(value, what):
    """A constant of an iterator-map node as a Python int."""
    if isinstance(value, bool) or not isinstance(value, (int, _core.IntImm)):
        if isinstance(value, _core.PrimExpr):
            raise TesseraValueError(
                f"{what} must be a constant: tessera's iter-map analysis does not take symbolic "
                f"extents yet (got {value})")
        raise TesseraTypeError(f"{what}: expected an integer, got {type(value).__name__}")
    return int(value.value if isinstance(value, _core.IntImm) else value)


def _const(value, dtype):
    from ..tir import expr_ops

    return expr_ops.const(value, dtype)


def _wrap(node, dtype):
    if isinstance(node, _core._IterSum):
        return IterSumExpr._from_node(node, dtype)
    if isinstance(node, _core._IterSplit):
        return IterSplitExpr._from_node(node, dtype)
    return IterMark._from_node(node, dtype)


class IterMapExpr:
    """Base of the iterator-map nodes; compares with tessera.ir.structural_equal."""

    __slots__ = ("_node", "dtype")

    def _iter_map_equal(self, other):
        return isinstance(other, IterMapExpr) and _core.iter_map_equal(self._node, other._node)

    def __repr__(self):
        return f"{type(self).__name__}({normalize_iter_map_to_expr(self)})"


class IterMark(IterMapExpr):
    """An iterator over [0, extent): ``source`` is an input Var, a fused IterSumExpr, or any
    expression (for marks built by hand)."""

    def __init__(self, source, extent):
        extent = _int(extent, "IterMark extent")
        if isinstance(source, IterSumExpr):
            self._node = _core.iter_mark(None, source._node, None, extent)
            self.dtype = source.dtype
        elif isinstance(source, _core.Var):
            self._node = _core.iter_mark(source, None, None, extent)
            self.dtype = str(source.dtype)
        elif isinstance(source, _core.PrimExpr):
            self._node = _core.iter_mark(None, None, source, extent)
            self.dtype = str(source.dtype)
        else:
            raise TesseraTypeError(
                f"IterMark: expected a Var, an IterSumExpr or an expression as source, "
                f"got {type(source).__name__}")

    @classmethod
    def _from_node(cls, node, dtype):
        self = cls.__new__(cls)
        self._node, self.dtype = node, dtype
        return self

    @property
    def source(self):
        node = self._node
        if node.var is not None:
            return node.var
        if node.sum is not None:
            return IterSumExpr._from_node(node.sum, self.dtype)
        return node.expr

    @property
    def extent(self):
        predicate = getattr(self, "_predicate", None)
        if predicate is not None:
            return predicate
        return _const(self._node.extent, self.dtype)


class IterSplitExpr(IterMapExpr):
    """``floormod(floordiv(source, lower_factor), extent) * scale``."""

    def __init__(self, source, lower_factor=1, extent=None, scale=1):
        if not isinstance(source, IterMark):
            raise TesseraTypeError(
                f"IterSplitExpr: expected an IterMark as source, got {type(source).__name__}")
        extent = source._node.extent if extent is None else _int(extent, "IterSplitExpr extent")
        self._node = _core.iter_split(source._node, _int(lower_factor, "lower_factor"), extent,
                                      _int(scale, "scale"))
        self.dtype = source.dtype

    @classmethod
    def _from_node(cls, node, dtype):
        self = cls.__new__(cls)
        self._node, self.dtype = node, dtype
        return self

    @property
    def source(self):
        return IterMark._from_node(self._node.source, self.dtype)

    @property
    def lower_factor(self):
        return _const(self._node.lower_factor, self.dtype)

    @property
    def extent(self):
        return _const(self._node.extent, self.dtype)

    @property
    def scale(self):
        return _const(self._node.scale, self.dtype)


class IterSumExpr(IterMapExpr):
    """``sum(args) + base``."""

    def __init__(self, args, base):
        args = list(args)
        for arg in args:
            if not isinstance(arg, IterSplitExpr):
                raise TesseraTypeError(
                    f"IterSumExpr: expected IterSplitExprs as args, got {type(arg).__name__}")
        self.dtype = args[0].dtype if args else "int32"
        if isinstance(base, (int, _core.IntImm)) and not isinstance(base, bool):
            const, free = _int(base, "base"), None
        elif isinstance(base, _core.PrimExpr):
            const, free = 0, base
            self.dtype = str(base.dtype)
        else:
            raise TesseraTypeError(f"IterSumExpr: expected an expression as base, got {base!r}")
        self._node = _core.iter_sum([a._node for a in args], const, free)

    @classmethod
    def _from_node(cls, node, dtype):
        self = cls.__new__(cls)
        self._node, self.dtype = node, dtype
        return self

    @property
    def args(self):
        return [IterSplitExpr._from_node(a, self.dtype) for a in self._node.args]

    @property
    def base(self):
        node = self._node
        if node.free_base is None:
            return _const(node.base, self.dtype)
        from ..tir import expr_ops

        return node.free_base + expr_ops.const(node.base, str(node.free_base.dtype)) \
            if node.base else node.free_base


class IterMapResult:
    """What detect_iter_map found: ``indices`` (empty when it failed), ``errors`` (why),
    ``padding_predicate`` (false: tessera does not pad with a predicate)."""

    def __init__(self, indices, errors, padding_predicate):
        self.indices = indices
        self.errors = errors
        self.padding_predicate = padding_predicate

    def __repr__(self):
        return f"IterMapResult(indices={self.indices}, errors={self.errors})"


def _iters(input_iters):
    """[(var, min, extent)] from TVM's Map[Var, Range], with constant bounds."""
    items = input_iters.items() if hasattr(input_iters, "items") else input_iters
    out = []
    for var, rng in items:
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(f"input_iters: expected Var keys, got {type(var).__name__}")
        if not isinstance(rng, _core.Range):
            raise TesseraTypeError(
                f"input_iters: the domain of {var.name} must be a Range, got {type(rng).__name__}")
        out.append((var, _int(rng.min, f"the min of {var.name}"),
                    _int(rng.extent, f"the extent of {var.name}")))
    return out


def _exprs(values):
    from ..tir import expr_ops

    return [v if isinstance(v, _core.PrimExpr) else expr_ops.const(v) for v in values]


def _is_true(predicate):
    if isinstance(predicate, bool):
        return predicate
    return isinstance(predicate, _core.IntImm) and predicate.value == 1


def _false():
    return _const(False, "bool")


def detect_iter_map(indices, input_iters, predicate=True, check_level=IterMapLevel.Surjective,
                    simplify_trivial_iterators=True):
    """Each index as an IterSumExpr over ``input_iters`` ({Var: Range}), checked at
    ``check_level`` ("surjective", "bijective" or "no_check"); ``indices`` is empty and
    ``errors`` says why when they are not such a map.

    >>> detect_iter_map([x // 4, x % 4], {x: Range(0, 16)}, check_level="bijective").indices
    """
    indices = _exprs(indices)
    level = _level(check_level)
    try:
        iters = _iters(input_iters)
    except TesseraValueError as err:
        return IterMapResult([], [str(err)], _false())
    if _is_true(predicate):
        predicate = None
    elif isinstance(predicate, bool) or not isinstance(predicate, _core.PrimExpr):
        return IterMapResult([], [f"the predicate {predicate!r} is false or not an expression"],
                             _false())
    sums, error = _core.detect_iter_map(indices, iters, int(level), simplify_trivial_iterators,
                                        predicate)
    if sums is None:
        return IterMapResult([], [error], _false())
    return IterMapResult([IterSumExpr._from_node(s, str(i.dtype)) for s, i in zip(sums, indices)],
                         [], _false())


def normalize_iter_map_to_expr(expr):
    """The expression an IterSumExpr, IterSplitExpr or IterMark stands for."""
    if not isinstance(expr, IterMapExpr):
        raise TesseraTypeError(
            f"normalize_iter_map_to_expr: expected an iter-map node, got {type(expr).__name__}")
    return _core.iter_map_to_expr(expr._node, expr.dtype)


def iter_map_simplify(indices, input_iters, predicate=True, check_level=IterMapLevel.Surjective,
                      simplify_trivial_iterators=True):
    """The indices rewritten from their iterator map (unchanged when they are not one)."""
    indices = _exprs(indices)
    res = detect_iter_map(indices, input_iters, predicate, check_level,
                          simplify_trivial_iterators)
    if not res.indices:
        return list(indices)
    return [normalize_iter_map_to_expr(s) for s in res.indices]


def normalize_to_iter_sum(index, input_iters):
    """``index`` as one IterSumExpr of unfused splits, largest scale first; terms free of the
    iterators go to the base."""
    (index,) = _exprs([index])
    sum_node, error = _core.normalize_to_iter_sum(index, _iters(input_iters))
    if sum_node is None:
        raise TesseraValueError(f"normalize_to_iter_sum: {index} is not affine: {error}")
    return IterSumExpr._from_node(sum_node, str(index.dtype))


def subspace_divide(bindings, input_iters, sub_iters, predicate=True,
                    check_level=IterMapLevel.Surjective, simplify_trivial_iterators=True):
    """Each binding as ``outer * inner_extent + inner``, where ``inner`` uses only ``sub_iters``
    and ``outer`` none of them: a list of ``[outer, inner]`` IterMarks, one per binding, and a
    last pair whose extents are the predicates on the outer and inner values (true when every
    value is in range). An empty list when the bindings cannot be divided so.

    >>> subspace_divide([x * 4 + y], {x: Range(0, 8), y: Range(0, 4)}, [y])
    """
    bindings = _exprs(bindings)
    res = detect_iter_map(bindings, input_iters, predicate, check_level,
                          simplify_trivial_iterators)
    if not res.indices:
        return []
    dtype = res.indices[0].dtype
    division = _core.subspace_divide([s._node for s in res.indices], list(sub_iters), dtype)
    if division is None:
        return []
    parts, outer_predicate, inner_predicate = division
    out = [[IterMark._from_node(outer, dtype), IterMark._from_node(inner, dtype)]
           for outer, inner in parts]
    last = []
    for pred in (outer_predicate, inner_predicate):
        mark = IterMark(IterSumExpr([], 0), 0)
        mark._predicate = pred
        last.append(mark)
    return out + [last]


def inverse_affine_iter_map(iter_map, outputs):
    """{input Var: expression of ``outputs``}: the inverse of a map from detect_iter_map, where
    ``outputs`` are the values its indices take."""
    iter_map = list(iter_map)
    for s in iter_map:
        if not isinstance(s, IterSumExpr):
            raise TesseraTypeError(
                f"inverse_affine_iter_map: expected IterSumExprs, got {type(s).__name__}")
    outputs = _exprs(outputs)
    if len(outputs) != len(iter_map):
        raise TesseraValueError(
            f"inverse_affine_iter_map: {len(iter_map)} indices but {len(outputs)} outputs")
    pairs = _core.inverse_affine_iter_map([s._node for s in iter_map], outputs)
    if pairs is None:
        raise TesseraValueError(
            "inverse_affine_iter_map: the map is not invertible (a sum is not a fuse pattern)")
    return dict(pairs)
