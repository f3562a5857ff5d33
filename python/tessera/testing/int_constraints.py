"""Exhaustive checks of integer facts (TVM's ``tvm.testing.check_bool_expr_is_true`` and
``check_int_constraints_trans_consistency``): a bool expression is evaluated with numpy at every
point of its variables' ranges."""

import numpy as np

from .. import _core

_CMP = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
}


def _floordiv(a, b):
    return np.floor_divide(a, np.where(b == 0, 1, b))


def _floormod(a, b):
    return np.mod(a, np.where(b == 0, 1, b))


def _truncdiv(a, b):
    b = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


_ARITH = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "FloorDiv": _floordiv,
    "FloorMod": _floormod, "Div": _truncdiv, "Mod": lambda a, b: a - _truncdiv(a, b) * b,
    "Min": np.minimum, "Max": np.maximum, "And": np.logical_and, "Or": np.logical_or,
}


def evaluate(expr, env):
    """The values of the integer or bool ``expr`` with each variable of ``env`` (a dict Var ->
    numpy array) taking its array's values; raises ValueError on another variable or node."""
    kind = type(expr).__name__
    if isinstance(expr, _core.IntImm):
        return np.int64(expr.value)
    if isinstance(expr, _core.Var):
        if expr not in env:
            raise ValueError(f"evaluate: variable {expr} has no values")
        return env[expr]
    if kind in _ARITH:
        return _ARITH[kind](evaluate(expr.a, env), evaluate(expr.b, env))
    if kind in _CMP:
        return _CMP[kind](evaluate(expr.a, env), evaluate(expr.b, env))
    if kind == "Not":
        return np.logical_not(evaluate(expr.a, env))
    if kind == "Cast":
        value = evaluate(expr.value, env)
        return value != 0 if str(expr.dtype) == "bool" else np.asarray(value, np.int64)
    if kind == "Select":
        return np.where(evaluate(expr.condition, env), evaluate(expr.true_value, env),
                        evaluate(expr.false_value, env))
    raise ValueError(f"evaluate: cannot evaluate {kind} node {expr}")


_BLOCK = 1 << 18  # points evaluated at once


def _axes(vranges):
    axes = []
    for v, r in vranges.items():
        lo, extent = r.min, r.extent
        if not isinstance(lo, _core.IntImm) or not isinstance(extent, _core.IntImm):
            raise ValueError(f"check: the range of {v} must be constant, got {r}")
        axes.append((v, np.arange(lo.value, lo.value + extent.value, dtype=np.int64)))
    return axes


def _blocks(vranges):
    """Environments covering every point of ``vranges``: the last variables as broadcast numpy
    axes (at most _BLOCK points at once), the others one value at a time."""
    import itertools

    axes = _axes(vranges)
    split, size = len(axes), 1
    while split > 0 and size * len(axes[split - 1][1]) <= _BLOCK:
        split -= 1
        size *= len(axes[split][1])
    inner = axes[split:]
    inner_env = {}
    for i, (v, values) in enumerate(inner):
        shape = [1] * len(inner)
        shape[i] = len(values)
        inner_env[v] = values.reshape(shape)
    shape = tuple(len(values) for _, values in inner)
    for outer in itertools.product(*[values for _, values in axes[:split]]):
        env = dict(inner_env)
        env.update({v: np.int64(x) for (v, _), x in zip(axes[:split], outer)})
        yield env, shape


def check_bool_expr_is_true(bool_expr, vranges, cond=None):
    """Assert that ``bool_expr`` holds (where ``cond`` holds) at every point of ``vranges``
    ({Var: Range} with constant ranges)."""
    from .. import arith, tir

    if cond is not None:
        # Folded first, as TVM does: a false condition needs no values of bool_expr's variables.
        bool_expr = arith.Analyzer().simplify(tir.Or(tir.Not(cond), bool_expr))
    for env, shape in _blocks(vranges):
        ok = np.broadcast_to(evaluate(bool_expr, env), shape)
        if not np.all(ok):
            where = tuple(int(i) for i in np.argwhere(np.logical_not(ok))[0])
            point = {str(v): int(np.broadcast_to(g, shape)[where]) for v, g in env.items()}
            raise AssertionError(f"{bool_expr} is false at {point}")


def check_int_constraints_trans_consistency(constraints_trans, vranges=None):
    """Assert that the IntConstraintsTransform maps the solutions of ``src`` one to one onto
    those of ``dst``: at every point of a system's ranges (and of the free variables in
    ``vranges``) where its relations hold, the mapped point satisfies the other system's
    relations and ranges and maps back to itself."""
    from .. import tir
    from ..tir.stmt_functor import substitute

    vranges = dict(vranges or {})

    def all_of(conds):
        out = tir.const(True)
        for c in conds:
            out = tir.And(out, c)
        return out

    def forward(sys1, sys2, varmap, backmap):
        ranges = dict(vranges)
        ranges.update(sys1.ranges)
        conds = []
        for v in sys1.variables:
            if v in varmap:
                conds.append(v == substitute(varmap[v], backmap))
        conds.extend(substitute(r, backmap) for r in sys2.relations)
        for v in sys2.variables:
            if v in sys2.ranges:
                r = sys2.ranges[v]
                conds.append(substitute(tir.And(v >= r.min, v < r.min + r.extent), backmap))
        check_bool_expr_is_true(all_of(conds), ranges, cond=all_of(sys1.relations))

    forward(constraints_trans.src, constraints_trans.dst, constraints_trans.src_to_dst,
            constraints_trans.dst_to_src)
    forward(constraints_trans.dst, constraints_trans.src, constraints_trans.dst_to_src,
            constraints_trans.src_to_dst)
