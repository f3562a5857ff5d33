"""Random well-typed TensorIR programs as hypothesis strategies, their TVMScript source and a
numpy reference evaluation.

A program is one PrimFunc over inputs ``A``, ``B`` and an output ``C``: an elementwise
statement (optionally an ``if``/``else``), or a sum/max reduction. Expressions mix arithmetic,
``T.max``/``T.min``, integer ``floordiv``/``floormod``/``truncdiv``/``truncmod`` by divisors
that are nonzero by construction, casts, comparisons, ``T.Select``/``T.if_then_else`` and
index arithmetic. The reference evaluates every expression over the whole iteration domain in
numpy with exact (wide) arithmetic and rejects programs whose intermediate values leave the
range of their dtype or are not exact in floating point: such programs have no single right
answer in C (signed overflow), so they are not generated for comparison.
"""

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

INT_DTYPES = ("int8", "int16", "int32", "int64")
FLOAT_DTYPES = ("float32", "float64")
DTYPES = INT_DTYPES + FLOAT_DTYPES
LOOP_KINDS = ("range", "T.serial", "T.parallel", "T.vectorized", "T.unroll")


def is_float(dtype):
    return dtype.startswith("float")


class Invalid(Exception):
    """The program's value is not defined (overflow, inexact floating point)."""


@dataclass(frozen=True)
class E:
    """An expression node: ``op`` with children ``args`` and a constant payload ``value``."""

    op: str
    dtype: str  # "bool" for conditions
    args: tuple = ()
    value: object = None


@dataclass
class Program:
    kind: str  # "elementwise", "conditional", "sum", "max"
    n: int
    k: int  # reduction extent (1 for elementwise)
    dtypes: tuple  # (A, B, C)
    loop: str
    exprs: tuple  # one expression; two for "conditional" (then, else) plus cond
    cond: E = None
    name: str = "f"
    extra: dict = field(default_factory=dict)

    @property
    def shape_in(self):
        return (self.n,) if self.kind in ("elementwise", "conditional") else (self.n, self.k)


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------

def _const(draw, dtype):
    if is_float(dtype):
        return E("const", dtype, value=draw(st.sampled_from([0.0, 0.5, 1.0, -1.5, 2.0, 3.25, -4.0])))
    return E("const", dtype, value=draw(st.integers(-9, 9)))


@st.composite
def _leaf(draw, dtype, ctx):
    choice = draw(st.integers(0, 5))
    if choice <= 2:
        return E("load", dtype, value=(draw(st.sampled_from("AB")), draw(_index(ctx))))
    if choice == 3:
        return E("iv", dtype)
    return _const(draw, dtype)


@st.composite
def _index(draw, ctx):
    """An index expression of a 1-d input (elementwise) or of the (i, k) pair of a reduction."""
    n = ctx["n"]
    if ctx["reduce"]:
        return draw(st.sampled_from(["ik", "i_rk"]))
    form = draw(st.integers(0, 4))
    if form == 0:
        return "i"
    if form == 1:
        return "rev"
    if form == 2:
        return ("mod", draw(st.integers(1, 5)), draw(st.integers(-3, 9)))
    if form == 3:
        return ("div", draw(st.integers(1, 4)))
    return ("const", draw(st.integers(0, n - 1)))


@st.composite
def expr(draw, dtype, ctx, depth=3):
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(_leaf(dtype, ctx))
    ops = ["add", "sub", "mul", "max", "min", "select", "ite", "cast"]
    if not is_float(dtype):
        ops += ["floordiv", "floormod", "truncdiv", "truncmod", "floordiv", "floormod"]
    else:
        ops += ["fdiv"]
    op = draw(st.sampled_from(ops))
    sub = lambda: draw(expr(dtype, ctx, depth - 1))  # noqa: E731
    if op in ("add", "sub", "mul", "max", "min"):
        return E(op, dtype, (sub(), sub()))
    if op in ("select", "ite"):
        return E(op, dtype, (draw(cond(ctx, depth - 1)), sub(), sub()))
    if op == "cast":
        src = draw(st.sampled_from(DTYPES))
        return E("cast", dtype, (draw(expr(src, ctx, depth - 1)),))
    if op == "fdiv":
        return E("fdiv", dtype, (sub(),), value=draw(st.sampled_from([2.0, 4.0, -2.0, 0.5])))
    # Integer division by a divisor that is nonzero by construction.
    dform = draw(st.integers(0, 2))
    if dform == 0:
        divisor = E("const", dtype, value=draw(st.sampled_from([1, 2, 3, 4, 5, 7, -1, -2, -3, -8])))
    elif dform == 1:
        divisor = E("max", dtype, (sub(), E("const", dtype, value=draw(st.integers(1, 4)))))
    else:
        divisor = E("min", dtype, (sub(), E("const", dtype, value=draw(st.integers(-4, -1)))))
    return E(op, dtype, (sub(), divisor))


@st.composite
def cond(draw, ctx, depth=2):
    kind = draw(st.integers(0, 4))
    if depth > 0 and kind == 0:
        return E(draw(st.sampled_from(["and", "or"])), "bool",
                 (draw(cond(ctx, depth - 1)), draw(cond(ctx, depth - 1))))
    if depth > 0 and kind == 1:
        return E("not", "bool", (draw(cond(ctx, depth - 1)),))
    dtype = draw(st.sampled_from(DTYPES))
    return E(draw(st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"])), "bool",
             (draw(expr(dtype, ctx, max(depth - 1, 0))), draw(expr(dtype, ctx, max(depth - 1, 0)))))


@st.composite
def program(draw, max_depth=3):
    kind = draw(st.sampled_from(["elementwise", "elementwise", "conditional", "sum", "max"]))
    n = draw(st.integers(1, 19))
    k = draw(st.integers(1, 9)) if kind in ("sum", "max") else 1
    dtypes = tuple(draw(st.sampled_from(DTYPES)) for _ in range(3))
    ctx = {"n": n, "reduce": kind in ("sum", "max")}
    out = dtypes[2]
    loop = draw(st.sampled_from(LOOP_KINDS)) if not ctx["reduce"] else "grid"
    if kind == "conditional":
        return Program(kind, n, k, dtypes, loop,
                       (draw(expr(out, ctx, max_depth)), draw(expr(out, ctx, max_depth))),
                       cond=draw(cond(ctx, 2)))
    return Program(kind, n, k, dtypes, loop, (draw(expr(out, ctx, max_depth)),))


# --------------------------------------------------------------------------------------------
# TVMScript
# --------------------------------------------------------------------------------------------

def _lit(dtype, value):
    if is_float(dtype):
        return f"T.{dtype}({float(value)!r})"
    return f"T.{dtype}({int(value)})"


def _index_src(idx, p):
    if idx == "ik":
        return "vi, vk"
    if idx == "i_rk":
        return f"vi, {p.k - 1} - vk"
    if idx == "i":
        return "vi"
    if idx == "rev":
        return f"{p.n - 1} - vi"
    if idx[0] == "mod":
        return f"T.floormod(vi * {idx[1]} + {idx[2]}, {p.n})"
    if idx[0] == "div":
        return f"T.floordiv(vi, {idx[1]})"
    return str(idx[1])


_BIN = {"add": "+", "sub": "-", "mul": "*"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def expr_src(e, p):
    op = e.op
    if op == "const":
        return _lit(e.dtype, e.value)
    if op == "load":
        buf, idx = e.value
        dtype = p.dtypes["AB".index(buf)]
        text = f"{buf}[{_index_src(idx, p)}]"
        return text if dtype == e.dtype else f'T.Cast("{e.dtype}", {text})'
    if op == "iv":
        return f'T.Cast("{e.dtype}", vi)'
    a = [expr_src(x, p) for x in e.args]
    if op in _BIN:
        return f"({a[0]} {_BIN[op]} {a[1]})"
    if op in _CMP:
        return f"({a[0]} {_CMP[op]} {a[1]})"
    if op in ("max", "min"):
        return f"T.{op}({a[0]}, {a[1]})"
    if op in ("floordiv", "floormod", "truncdiv", "truncmod"):
        return f"T.{op}({a[0]}, {a[1]})"
    if op == "fdiv":
        return f"({a[0]} / {_lit(e.dtype, e.value)})"
    if op == "select":
        return f"T.Select({a[0]}, {a[1]}, {a[2]})"
    if op == "ite":
        return f"T.if_then_else({a[0]}, {a[1]}, {a[2]})"
    if op == "cast":
        return f'T.Cast("{e.dtype}", {a[0]})'
    if op == "and":
        return f"T.And({a[0]}, {a[1]})"
    if op == "or":
        return f"T.Or({a[0]}, {a[1]})"
    if op == "not":
        return f"T.Not({a[0]})"
    raise AssertionError(op)


def function_src(p, indent="    "):
    da, db, dc = p.dtypes
    shape = repr(p.shape_in)
    lines = [
        "@T.prim_func",
        f'def {p.name}(A: T.Buffer({shape}, "{da}"), B: T.Buffer({shape}, "{db}"), '
        f'C: T.Buffer(({p.n},), "{dc}")):',
    ]
    if p.kind in ("elementwise", "conditional"):
        lines += [f"    for i in {p.loop}({p.n}):",
                  '        with T.block("C"):',
                  f"            vi = T.axis.spatial({p.n}, i)"]
        if p.kind == "elementwise":
            lines.append(f"            C[vi] = {expr_src(p.exprs[0], p)}")
        else:
            lines += [f"            if {expr_src(p.cond, p)}:",
                      f"                C[vi] = {expr_src(p.exprs[0], p)}",
                      "            else:",
                      f"                C[vi] = {expr_src(p.exprs[1], p)}"]
    else:
        init = 0 if p.kind == "sum" else -100
        update = (f"C[vi] + {expr_src(p.exprs[0], p)}" if p.kind == "sum"
                  else f"T.max(C[vi], {expr_src(p.exprs[0], p)})")
        lines += [f"    for i, k in T.grid({p.n}, {p.k}):",
                  '        with T.block("C"):',
                  '            vi, vk = T.axis.remap("SR", [i, k])',
                  "            with T.init():",
                  f"                C[vi] = {_lit(dc, init)}",
                  f"            C[vi] = {update}"]
    return "\n".join(indent + line for line in lines)


def module_src(programs):
    body = "\n".join(function_src(p) for p in programs)
    return "@I.ir_module\nclass Module:\n" + body + "\n"


# --------------------------------------------------------------------------------------------
# Reference evaluation
# --------------------------------------------------------------------------------------------

_RANGE = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for d in INT_DTYPES}
_INT32 = _RANGE["int32"]


def _check(dtype, v):
    """Exact value ``v`` (int64 or float64 array) as the dtype, or Invalid."""
    if dtype == "bool":
        return v
    if is_float(dtype):
        if not np.all(np.isfinite(v)) or np.any(np.abs(v) > 2.0**20):
            raise Invalid
        if not np.array_equal(v.astype(dtype).astype("float64"), v):
            raise Invalid
        return v
    lo, hi = _RANGE[dtype]
    lo, hi = max(lo, _INT32[0]), min(hi, _INT32[1])
    if np.any(v < lo) or np.any(v > hi):
        raise Invalid
    return v


def _wrap(dtype, v):
    bits = np.iinfo(dtype).bits
    v = v.astype("int64")
    if bits == 64:
        return v
    m = 1 << bits
    return ((v + (m >> 1)) % m) - (m >> 1)


class Env:
    def __init__(self, p, a, b):
        self.p, self.a, self.b = p, a, b
        reduce = p.kind in ("sum", "max")
        if reduce:
            self.vi, self.vk = np.meshgrid(np.arange(p.n), np.arange(p.k), indexing="ij")
        else:
            self.vi, self.vk = np.arange(p.n), None


def _load(env, buf, idx):
    arr = env.a if buf == "A" else env.b
    p = env.p
    if idx == "ik":
        v = arr
    elif idx == "i_rk":
        v = arr[:, ::-1]
    elif idx == "i":
        v = arr
    elif idx == "rev":
        v = arr[::-1]
    elif idx[0] == "mod":
        v = arr[np.mod(np.arange(p.n) * idx[1] + idx[2], p.n)]
    elif idx[0] == "div":
        v = arr[np.arange(p.n) // idx[1]]
    else:
        v = np.broadcast_to(arr[idx[1]], (p.n,))
    return v


def _truncdiv(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def evaluate(e, env):
    """The exact value of ``e`` over the iteration domain (int64, float64 or bool array)."""
    op, dt = e.op, e.dtype
    if op == "const":
        v = np.full(env.vi.shape, e.value, dtype="float64" if is_float(dt) else "int64")
        return _check(dt, v)
    if op == "load":
        buf, idx = e.value
        raw = _load(env, buf, idx)
        return _cast(dt, raw.astype("float64") if is_float(str(raw.dtype)) else raw.astype("int64"),
                     str(raw.dtype))
    if op == "iv":
        return _check(dt, env.vi.astype("float64" if is_float(dt) else "int64"))
    if op == "cast":
        src = e.args[0]
        return _cast(dt, evaluate(src, env), src.dtype)
    args = [evaluate(x, env) for x in e.args]
    if op == "add":
        return _check(dt, args[0] + args[1])
    if op == "sub":
        return _check(dt, args[0] - args[1])
    if op == "mul":
        return _check(dt, args[0] * args[1])
    if op == "max":
        return np.maximum(args[0], args[1])
    if op == "min":
        return np.minimum(args[0], args[1])
    if op == "fdiv":
        return _check(dt, args[0] / e.value)
    if op in ("floordiv", "floormod", "truncdiv", "truncmod"):
        a, b = args
        assert np.all(b != 0)
        if op == "floordiv":
            return _check(dt, a // b)
        if op == "floormod":
            return _check(dt, a % b)
        q = _truncdiv(a, b)
        return _check(dt, q if op == "truncdiv" else a - q * b)
    if op in ("select", "ite"):
        return np.where(args[0], args[1], args[2])
    if op in _CMP:
        return {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                "eq": np.equal, "ne": np.not_equal}[op](args[0], args[1])
    if op == "and":
        return args[0] & args[1]
    if op == "or":
        return args[0] | args[1]
    if op == "not":
        return ~args[0]
    raise AssertionError(op)


def _cast(dtype, v, src_dtype):
    if dtype == src_dtype:
        return v
    if is_float(dtype):
        return _check(dtype, v.astype("float64"))
    if is_float(src_dtype):
        t = np.trunc(v)
        lo, hi = _RANGE[dtype]
        if np.any(t < lo) or np.any(t > hi):
            raise Invalid  # undefined in C
        return _check(dtype, t.astype("int64"))
    return _check(dtype, _wrap(dtype, v))


def reference(p, a, b):
    """The expected ``C`` of program ``p`` on inputs ``a``, ``b`` (Invalid if undefined)."""
    env = Env(p, a, b)
    dc = p.dtypes[2]
    if p.kind == "elementwise":
        out = evaluate(p.exprs[0], env)
    elif p.kind == "conditional":
        c = evaluate(p.cond, env)
        out = np.where(c, evaluate(p.exprs[0], env), evaluate(p.exprs[1], env))
    else:
        terms = evaluate(p.exprs[0], env)
        if p.kind == "sum":
            acc = np.zeros(p.n, dtype=terms.dtype)
            for j in range(p.k):
                acc = _check(dc, acc + terms[:, j])
        else:
            acc = np.full(p.n, -100, dtype=terms.dtype)
            for j in range(p.k):
                acc = np.maximum(acc, terms[:, j])
        out = acc
    return np.broadcast_to(out, (p.n,)).astype(dc)


def random_inputs(p, rng):
    """Small exact values: integers in [-20, 20]; floats multiples of 0.25 in [-8, 8]."""
    arrays = []
    for dtype in p.dtypes[:2]:
        if is_float(dtype):
            v = rng.integers(-32, 33, size=p.shape_in) / 4.0
        else:
            lo = -20
            v = rng.integers(lo, 21, size=p.shape_in)
        arrays.append(np.ascontiguousarray(v.astype(dtype)))
    return arrays
