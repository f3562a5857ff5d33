"""Random vector-DSL kernels as hypothesis strategies, their source and a numpy reference.

A kernel loads one vector from each of ``a`` and ``b`` and stores a list of random vector
expressions to consecutive vectors of ``out``: lane-wise arithmetic (``S.vadd``/``S.vsub``/
``S.vmul``, operators), ``S.max``/``S.min``, ``S.vsel`` under masks (comparisons, mask strings
and lists, ``&``/``|``/``~``), masked arithmetic with ``r=``. Integer arithmetic wraps; float
inputs are small multiples of 1/4, and expressions whose float value is not exact are dropped,
so that results compare exactly.
"""

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

DTYPES = ("int8", "int16", "int32", "float32")


def lanes(dtype):
    return 256 // (np.dtype(dtype).itemsize * 8)


@dataclass(frozen=True)
class V:
    op: str
    args: tuple = ()
    value: object = None


class Invalid(Exception):
    pass


@st.composite
def mask(draw, dtype, depth, literal=True):
    """A mask; lists and mask strings only where a whole mask argument is expected (the DSL
    does not combine them with ``&``/``|``)."""
    n = lanes(dtype)
    kind = draw(st.integers(0, 5))
    if depth > 0 and kind == 0:
        return V(draw(st.sampled_from(["mand", "mor"])), (draw(mask(dtype, depth - 1, False)),
                                                           draw(mask(dtype, depth - 1, False))))
    if depth > 0 and kind == 1:
        return V("mnot", (draw(mask(dtype, depth - 1, False)),))
    if literal and kind == 2:
        return V("mlist", value=tuple(draw(st.lists(st.booleans(), min_size=1, max_size=n))))
    if literal and kind == 3:
        count = draw(st.integers(1, n))
        return V("mstr", value=count)  # f"{count}T": the first `count` lanes
    return V(draw(st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"])),
             (draw(vexpr(dtype, max(depth - 1, 0))), draw(vexpr(dtype, max(depth - 1, 0)))))


@st.composite
def vexpr(draw, dtype, depth=3):
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return V(draw(st.sampled_from(["va", "vb"])))
    ops = ["vadd", "vsub", "max", "min", "vsel", "masked_add", "op_add", "op_sub", "scalar_add"]
    if dtype != "int8":
        ops += ["vmul", "op_mul"]
    op = draw(st.sampled_from(ops))
    sub = lambda: draw(vexpr(dtype, depth - 1))  # noqa: E731
    if op == "vsel":
        return V(op, (sub(), sub(), draw(mask(dtype, 1))))
    if op == "masked_add":
        return V(op, (sub(), sub(), draw(mask(dtype, 1)), sub()))
    if op == "scalar_add":
        c = draw(st.integers(-5, 5))
        return V(op, (sub(),), value=float(c) / 2 if dtype == "float32" else c)
    return V(op, (sub(), sub()))


@st.composite
def kernel(draw, stores=12):
    dtype = draw(st.sampled_from(DTYPES))
    return dtype, tuple(draw(vexpr(dtype)) for _ in range(stores))


def _src(v, dtype):
    op = v.op
    if op in ("va", "vb"):
        return op
    a = [_src(x, dtype) for x in v.args]
    if op in ("vadd", "vsub", "vmul"):
        return f"S.{op}({a[0]}, {a[1]})"
    if op in ("max", "min"):
        return f"S.{op}({a[0]}, {a[1]})"
    if op.startswith("op_"):
        return f"({a[0]} {dict(op_add='+', op_sub='-', op_mul='*')[op]} {a[1]})"
    if op == "scalar_add":
        return f"S.vadd({a[0]}, {v.value!r})"
    if op == "vsel":
        return f"S.vsel({a[0]}, {a[1]}, {a[2]})"
    if op == "masked_add":
        return f"S.vadd({a[0]}, {a[1]}, mask={a[2]}, r={a[3]})"
    if op in _CMP:
        return f"({a[0]} {_CMP[op]} {a[1]})"
    if op == "mand":
        return f"({a[0]} & {a[1]})"
    if op == "mor":
        return f"({a[0]} | {a[1]})"
    if op == "mnot":
        return f"(~{a[0]})"
    if op == "mlist":
        return repr(list(v.value))
    if op == "mstr":
        return repr(f"{v.value}T")
    raise AssertionError(op)


_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def kernel_src(dtype, exprs, name="kern"):
    n = lanes(dtype)
    lines = ["from tessera.dsl import script as S", "", "",
             "@S.prim_func",
             f'def {name}(a: S.ptr("{dtype}", "global"), b: S.ptr("{dtype}", "global"), '
             f'out: S.ptr("{dtype}", "global")):',
             "    va = S.vload(a)",
             "    vb = S.vload(b)"]
    for i, e in enumerate(exprs):
        lines.append(f"    S.vstore({_src(e, dtype)}, out + {i * n})")
    return "\n".join(lines) + "\n"


def _wrap(dtype, x):
    if dtype == "float32":
        if np.any(np.abs(x) > 2.0**20) or not np.array_equal(x.astype("float32").astype("float64"), x):
            raise Invalid
        return x
    bits = np.iinfo(dtype).bits
    m = 1 << bits
    return ((x + (m >> 1)) % m) - (m >> 1)


def _mask_value(v, dtype, env):
    n = lanes(dtype)
    if v.op == "mlist":
        return np.array(list(v.value) + [False] * (n - len(v.value)))
    if v.op == "mstr":
        return np.arange(n) < v.value
    if v.op == "mand":
        return _mask_value(v.args[0], dtype, env) & _mask_value(v.args[1], dtype, env)
    if v.op == "mor":
        return _mask_value(v.args[0], dtype, env) | _mask_value(v.args[1], dtype, env)
    if v.op == "mnot":
        return ~_mask_value(v.args[0], dtype, env)
    x, y = evaluate(v.args[0], dtype, env), evaluate(v.args[1], dtype, env)
    return {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
            "eq": np.equal, "ne": np.not_equal}[v.op](x, y)


def evaluate(v, dtype, env):
    """Exact lane values (int64 wrapped to dtype, or float64) of ``v``."""
    op = v.op
    if op in ("va", "vb"):
        return env[op]
    if op in ("vsel",):
        return np.where(_mask_value(v.args[2], dtype, env), evaluate(v.args[0], dtype, env),
                        evaluate(v.args[1], dtype, env))
    if op == "masked_add":
        s = _wrap(dtype, evaluate(v.args[0], dtype, env) + evaluate(v.args[1], dtype, env))
        return np.where(_mask_value(v.args[2], dtype, env), s, evaluate(v.args[3], dtype, env))
    if op == "scalar_add":
        return _wrap(dtype, evaluate(v.args[0], dtype, env) + v.value)
    x, y = evaluate(v.args[0], dtype, env), evaluate(v.args[1], dtype, env)
    if op in ("vadd", "op_add"):
        return _wrap(dtype, x + y)
    if op in ("vsub", "op_sub"):
        return _wrap(dtype, x - y)
    if op in ("vmul", "op_mul"):
        return _wrap(dtype, x * y)
    if op == "max":
        return np.maximum(x, y)
    if op == "min":
        return np.minimum(x, y)
    raise AssertionError(op)


def random_vector(dtype, rng):
    n = lanes(dtype)
    if dtype == "float32":
        return (rng.integers(-32, 33, size=n) / 4.0).astype("float32")
    info = np.iinfo(dtype)
    # Corner values too: wrapping arithmetic is part of what is compared.
    pool = np.concatenate([rng.integers(-20, 21, size=n), [info.min, info.max, -1, 0, 1]])
    return rng.choice(pool, size=n).astype(dtype)
