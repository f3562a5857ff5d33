"""Operator-library benchmark: every tessera.topi operator that numpy has an equivalent for,
built with no schedule (ts.build schedules it automatically), timed beside that numpy
equivalent in the same run. Each result is checked against numpy before it is timed.

    PYTHONPATH=python .venv/bin/python bench/bench_topi.py [--only exp,sum_rows] [--quick]
    BENCH_TIMER=cpu PYTHONPATH=python .venv/bin/python bench/bench_topi.py   # shared machine
    ... bench/bench_topi.py --dtypes float64,int32,int8   # the same cases in other dtypes
    ... bench/bench_topi.py --all   # every operator with a numpy equivalent (see more_cases)

With --dtypes, each case runs in every listed dtype that the operator accepts and numpy computes
in that same dtype (no int exp, whose numpy result is float64; no float16 row sums or products,
which numpy accumulates in float32). Integer sums and cumulative sums
are compared in topi's semantics, which keep the input dtype (wrapping like C): numpy is asked
for ``dtype=`` the input's, where by default it would widen int8..int32 to int64. Integer data
is small (|x| <= 100 for 8 bits, <= 1000 otherwise) so products and sums stay in range.

With BENCH_TIMER=cpu (thread CPU time, for a loaded machine) everything runs on one thread
(OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1, set here; other values are refused, because the calling
thread's CPU time does not count the work of other threads) and tessera and numpy are timed in
turn, so that a phase of contention hits both alike.

Prints a table (ratio > 1: tessera faster) and saves bench/topi.png (bench/topi_dtypes.png with
--dtypes).
"""

import argparse
import os
import sys
import time

if os.environ.get("BENCH_TIMER") == "cpu":
    # Before numpy and tessera start their thread pools.
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        if os.environ.setdefault(_var, "1") != "1":
            sys.exit(f"BENCH_TIMER=cpu times the calling thread only: {_var} must be 1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tessera as ts  # noqa: E402
from tessera import te, topi  # noqa: E402

from bench_cpu import best, cpu_timer, interleaved_min  # noqa: E402


def im2col_conv(x, w):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))  # n c oh ow kh kw
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    return (cols @ w.reshape(f, -1).T).reshape(n, oh, ow, f).transpose(0, 3, 1, 2)


def im2col_conv_strided(x, w, s):
    """im2col + one BLAS product, the windows taken every ``s`` outputs."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // s + 1, (wd - kw) // s + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::s, ::s]
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    return (cols @ w.reshape(f, -1).T).reshape(n, oh, ow, f).transpose(0, 3, 1, 2)


def max_pool(x, k):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


FLOAT = ("float16", "float32", "float64")
INT = ("int8", "int16", "int32", "int64", "uint8")
SIGNED = ("float16", "float32", "float64", "int8", "int16", "int32", "int64")
NUMERIC = FLOAT + INT
ANY = NUMERIC + ("bool",)
# numpy sums float16 rows (pairwise) and float16 products in float32 and rounds once; topi
# accumulates in the output's float16, so these results differ by more than rounding
ACC16 = tuple(t for t in NUMERIC if t != "float16")


def data(rng, shape, dtype):
    """Random input of ``shape`` in ``dtype``: normal floats, small integers, half-true bools."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INT:
        lo, hi = {"int8": (-100, 100), "uint8": (0, 255)}.get(dtype, (-1000, 1000))
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def cases(quick, dtype="float32", every=False, default_run=False):
    """(name, te inputs, te output, numpy inputs, numpy function, rtol) of the operators that
    accept ``dtype`` and whose numpy equivalent computes in it; with ``every`` (--all), every
    operator of tessera.topi and tessera.topi.nn that has a numpy equivalent. ``default_run``:
    no --dtypes, so integer- and bool-only operators run once in a dtype of their own."""
    rng = np.random.default_rng(0)
    big = (1024, 1024) if quick else (2048, 2048)
    m, k, n = (256, 256, 256) if quick else (512, 512, 512)
    out = []
    # float16 rounds every step; the float32 tolerances hold for the wider types
    scale = 10.0 if dtype == "float16" else 1.0

    def add(name, shapes, make, np_fn, rtol=1e-4, kinds=NUMERIC, gen=None, in_dtypes=None,
            fallback=None):
        """``gen``: an input maker ``(rng, shape, dtype)`` (one, or one per input) in place of
        ``data``; ``in_dtypes``: a dtype per input (None: the case's); ``fallback``: the dtype
        the default run (float32 only) uses for an operator that does not take float32."""
        t = dtype
        if t not in kinds:
            if not (fallback and default_run):
                return
            t = fallback
            name = f"{name} {t}"
        dts = [d or t for d in (in_dtypes or [None] * len(shapes))]
        gens = gen if isinstance(gen, (list, tuple)) else [gen] * len(shapes)
        ph = [te.placeholder(s, d, name=f"in{i}") for i, (s, d) in enumerate(zip(shapes, dts))]
        arrays = [(g or data)(rng, s, d) for s, d, g in zip(shapes, dts, gens)]
        try:
            made = make(*ph)
        except Exception as e:  # noqa: BLE001  (reported as a failed row)
            made = e
        out.append((name, ph, made, arrays, np_fn, rtol * (scale if t == dtype else 1.0)))

    # sums in the input's dtype (topi's semantics; numpy widens small integers by default)
    acc = dict(dtype=dtype) if dtype in INT else {}
    add("exp", [big], topi.exp, np.exp, kinds=FLOAT)
    add("tanh", [big], topi.tanh, np.tanh, kinds=FLOAT)
    add("sigmoid", [big], topi.sigmoid, lambda a: 1 / (1 + np.exp(-a)), kinds=FLOAT)
    add("sqrt(abs)", [big], lambda a: topi.sqrt(topi.abs(a)), lambda a: np.sqrt(np.abs(a)), kinds=FLOAT)
    add("add broadcast row", [big, big[1:]], topi.add, np.add)
    add("multiply", [big, big], topi.multiply, np.multiply)
    add("maximum", [big, big], topi.maximum, np.maximum)
    add("relu", [big], topi.nn.relu, lambda a: np.maximum(a, a.dtype.type(0)), kinds=SIGNED)
    add("sum rows", [big], lambda a: topi.sum(a, axis=1), lambda a: a.sum(1, **acc), rtol=1e-3, kinds=ACC16)
    add("sum columns", [big], lambda a: topi.sum(a, axis=0), lambda a: a.sum(0, **acc), rtol=1e-3)
    add("max rows", [big], lambda a: topi.max(a, axis=1), lambda a: a.max(1))
    add("min all", [big], lambda a: topi.min(a), lambda a: np.array(a.min(), a.dtype))
    add("argmax rows", [big], lambda a: topi.argmax(a, axis=1), lambda a: a.argmax(1))
    add("argmin rows", [big], lambda a: topi.argmin(a, axis=1), lambda a: a.argmin(1))
    add("transpose", [big], topi.transpose, lambda a: np.ascontiguousarray(a.T), kinds=ANY)
    # a permutation of 3 axes (rows of the input 256 KB apart) and a layout change
    cube = (32, 128, 128) if quick else (64, 256, 256)
    add("transpose 3d", [cube], lambda a: topi.transpose(a, (1, 2, 0)),
        lambda a: np.ascontiguousarray(a.transpose(1, 2, 0)), kinds=ANY)
    nchw = (2, 64, 56, 56) if quick else (4, 64, 112, 112)
    add("layout NCHW->NHWC", [nchw], lambda a: topi.layout_transform(a, "NCHW", "NHWC"),
        lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1)), kinds=ANY)
    add("concatenate", [big, big], lambda a, b: topi.concatenate([a, b], axis=1),
        lambda a, b: np.concatenate([a, b], axis=1), kinds=ANY)
    add("cumsum rows", [big], lambda a: topi.cumsum(a, axis=1), lambda a: np.cumsum(a, 1, **acc), rtol=1e-2)
    add("softmax", [big], lambda a: topi.nn.softmax(a, axis=-1), softmax, rtol=1e-3, kinds=FLOAT)
    add("layer_norm", [big, big[1:], big[1:]], lambda a, g, b: topi.nn.layer_norm(a, g, b, axis=[-1]),
        layer_norm, rtol=1e-3, kinds=FLOAT)
    add("matmul", [(m, k), (k, n)], topi.nn.matmul, np.matmul, rtol=1e-3, kinds=ACC16)
    add("dense", [(m, k), (n, k)], topi.nn.dense, lambda a, b: a @ b.T, rtol=1e-3, kinds=ACC16)
    add("batch_matmul", [(8, 128, 64), (8, 64, 128)],
        lambda a, b: topi.nn.batch_matmul(a, b, transpose_b=False), np.matmul, rtol=1e-3, kinds=ACC16)
    c = 16 if quick else 32
    add("conv2d 3x3 NCHW", [(1, c, 58, 58), (c, c, 3, 3)],
        lambda x, w: topi.nn.conv2d_nchw(x, w, 1, 0, 1), im2col_conv, rtol=1e-3, kinds=ACC16)
    add("max_pool2d 2x2", [(1, 64, 112, 112)],
        lambda x: topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max"),
        lambda x: max_pool(x, 2))
    if every:
        more_cases(add, quick, dtype, acc)
    return out


# --- inputs for --all: each operator gets data in its domain -------------------------------


def _ints(dtype):
    return dtype in INT


def positive(rng, shape, dtype):
    """In (0, 10]: for log, rsqrt, power's base."""
    if _ints(dtype):
        return rng.integers(1, 100, shape).astype(dtype)
    return rng.uniform(0.1, 10.0, shape).astype(dtype)


def unit(rng, shape, dtype):
    """|x| < 1: for asin, acos, atanh."""
    return rng.uniform(-0.95, 0.95, shape).astype(dtype)


def above_one(rng, shape, dtype):
    """x > 1: for acosh."""
    return rng.uniform(1.05, 10.0, shape).astype(dtype)


def exponent(rng, shape, dtype):
    """Small exponents for power (|x| <= 3)."""
    return rng.uniform(-3.0, 3.0, shape).astype(dtype)


def near_one(rng, shape, dtype):
    """Products stay in range: ±1 for integers, [0.99, 1.01] for floats."""
    if _ints(dtype):
        return (rng.integers(0, 2, shape) * 2 - 1).astype(dtype)
    return rng.uniform(0.99, 1.01, shape).astype(dtype)


def divisor(rng, shape, dtype):
    """Nonzero, of either sign, |x| in [1, 20] (integers) or [0.5, 4] (floats)."""
    sign = rng.integers(0, 2, shape) * 2 - 1
    if _ints(dtype):
        return (rng.integers(1, 21, shape) * sign).astype(dtype)
    return (rng.uniform(0.5, 4.0, shape) * sign).astype(dtype)


def halves(rng, shape, dtype):
    """Multiples of 0.5 in [-8, 8] and normal values: round's ties are half the data."""
    x = rng.integers(-16, 17, shape) * 0.5
    return np.where(rng.integers(0, 2, shape) == 1, x, rng.standard_normal(shape) * 4).astype(dtype)


def specials(rng, shape, dtype):
    """Normal values with NaN, +inf and -inf sprinkled in (for isnan, isinf, isfinite)."""
    x = rng.standard_normal(shape).astype(dtype)
    pick = rng.integers(0, 8, shape)
    x[pick == 0] = np.nan
    x[pick == 1] = np.inf
    x[pick == 2] = -np.inf
    return x


def nonneg(rng, shape, dtype):
    """0..100 (left shifts of negative values are undefined in C)."""
    return rng.integers(0, 101, shape).astype(dtype)


def shift(rng, shape, dtype):
    """Shift amounts 0..7 (within every integer width)."""
    return rng.integers(0, 8, shape).astype(dtype)


def ones(rng, shape, dtype):
    """Every element true (nonzero): topi.all must read every element."""
    return np.ones(shape, dtype)


def zeros(rng, shape, dtype):
    """Every element false: topi.any must read every element."""
    return np.zeros(shape, dtype)


def index(n):
    """Indices in [0, n)."""
    return lambda rng, shape, dtype: rng.integers(0, n, shape).astype(dtype)


def variance(rng, shape, dtype):
    return rng.uniform(0.5, 2.0, shape).astype(dtype)


# --- numpy equivalents for --all ---------------------------------------------------------


def log_softmax(x):
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def topk_rows(a, k):
    """The k largest of each row, largest first, and their indices: np.argpartition selects
    them in O(n), then only those k are sorted (np.sort of the whole row is slower; ties, of
    which random floats have none, could order differently from topi's lower-index-first)."""
    part = np.argpartition(a, a.shape[-1] - k, axis=-1)[..., -k:]
    vals = np.take_along_axis(a, part, -1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    return np.take_along_axis(vals, order, -1), np.take_along_axis(part, order, -1).astype("int32")


def batch_norm(x, g, b, mean, var, eps=1e-5):
    """Inference: one scale and shift per channel, folded first (as a numpy user would)."""
    scale = g / np.sqrt(var + eps)
    shift_ = b - mean * scale
    return x * scale[:, None, None] + shift_[:, None, None]


def group_norm(x, g, b, groups, eps=1e-5):
    n, c, h, w = x.shape
    xg = x.reshape(n, groups, c // groups * h * w)
    mu = xg.mean(-1, keepdims=True)
    var = xg.var(-1, keepdims=True)
    return ((xg - mu) / np.sqrt(var + eps)).reshape(n, c, h, w) * g[:, None, None] + b[:, None, None]


def rms_norm(x, w, eps=1e-5):
    ms = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[-1]
    return x / np.sqrt(ms + eps) * w


def conv1d_ncw(x, w):
    """im2col + one BLAS product per batch element, written in NCW order directly."""
    n, c, length = x.shape
    f, _, k = w.shape
    cols = np.lib.stride_tricks.sliding_window_view(x, k, axis=2)  # n c ow k
    cols = cols.transpose(0, 1, 3, 2).reshape(n, c * k, length - k + 1)
    return w.reshape(f, c * k) @ cols


def conv2d_nhwc(x, w):
    """im2col + BLAS, NHWC input and HWIO filter."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # n oh ow c kh kw
    cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, kh * kw * c)
    return (cols @ w.reshape(-1, f)).reshape(n, oh, ow, f)


def depthwise_conv(x, w):
    """One multiply-add pass per filter tap: faster in numpy than im2col (9 taps, no GEMM)."""
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    out = x[:, :, :oh, :ow] * w[:, 0, 0, 0][:, None, None]
    for i in range(kh):
        for j in range(kw):
            if i or j:
                out += x[:, :, i:i + oh, j:j + ow] * w[:, 0, i, j][:, None, None]
    return out


def group_conv(x, w, groups):
    """im2col per group and one batched BLAS product over the groups."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))  # n c oh ow kh kw
    cols = cols.reshape(n, groups, cg, oh, ow, kh, kw).transpose(0, 1, 2, 5, 6, 3, 4)
    cols = cols.reshape(n, groups, cg * kh * kw, oh * ow)
    return (w.reshape(groups, f // groups, cg * kh * kw) @ cols).reshape(n, f, oh, ow)


def conv_transpose(x, w, s, p):
    """One BLAS product (every input pixel times every filter tap), then the taps added into
    the strided output (col2im), cropped by the padding."""
    n, ci, h, wd = x.shape
    _, co, kh, kw = w.shape
    y = (w.reshape(ci, co * kh * kw).T @ x.reshape(n, ci, h * wd)).reshape(n, co, kh, kw, h, wd)
    full = np.zeros((n, co, (h - 1) * s + kh, (wd - 1) * s + kw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            full[:, :, i:i + s * h:s, j:j + s * wd:s] += y[:, :, i, j]
    return full[:, :, p:full.shape[2] - p, p:full.shape[3] - p]


def conv1d_nwc(x, w):
    """One BLAS product per filter tap (NWC input, WIO filter): the taps' products added."""
    n, length, c = x.shape
    k, _, f = w.shape
    ow = length - k + 1
    out = x[:, :ow] @ w[0]
    for t in range(1, k):
        out += x[:, t:t + ow] @ w[t]
    return out


def depthwise_conv_nhwc(x, w):
    """One multiply-add pass per filter tap, NHWC input, HWOI filter (multiplier 1)."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    oh, ow = h - kh + 1, wd - kw + 1
    out = x[:, :oh, :ow] * w[0, 0, :, 0]
    for i in range(kh):
        for j in range(kw):
            if i or j:
                out += x[:, i:i + oh, j:j + ow] * w[i, j, :, 0]
    return out


def group_conv1d_ncw(x, w, groups):
    """im2col per group and one batched BLAS product over the groups (NCW, OIW filter)."""
    n, c, length = x.shape
    f, cg, k = w.shape
    ow = length - k + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, k, axis=2)  # n c ow k
    cols = cols.reshape(n, groups, cg, ow, k).transpose(0, 1, 2, 4, 3).reshape(n, groups, cg * k, ow)
    return (w.reshape(groups, f // groups, cg * k) @ cols).reshape(n, f, ow)


def group_conv1d_nwc(x, w, groups):
    """im2col per group and one batched BLAS product over the groups (NWC, WIO filter)."""
    n, length, c = x.shape
    k, cg, f = w.shape
    ow = length - k + 1
    cols = np.lib.stride_tricks.sliding_window_view(x, k, axis=1)  # n ow c k
    cols = cols.reshape(n, ow, groups, cg, k).transpose(0, 2, 1, 4, 3).reshape(n, groups, ow, k * cg)
    wg = w.reshape(k, cg, groups, f // groups).transpose(2, 0, 1, 3).reshape(groups, k * cg, f // groups)
    return (cols @ wg).transpose(0, 2, 1, 3).reshape(n, ow, f)


def group_conv_nhwc(x, w, groups):
    """One batched BLAS product over the groups per filter tap (NHWC, HWIO filter): faster in
    numpy than im2col here (7.8 -> 1.0 ms for the row's shape), whose transposed copy of the
    windows is the cost."""
    n, h, wd, c = x.shape
    kh, kw, cg, f = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    fg = f // groups
    wg = w.reshape(kh, kw, cg, groups, fg).transpose(0, 1, 3, 2, 4)  # kh kw g cg fg
    out = np.zeros((groups, n * oh * ow, fg), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out += x[:, i:i + oh, j:j + ow].reshape(n * oh * ow, groups, cg).transpose(1, 0, 2) @ wg[i, j]
    return out.transpose(1, 0, 2).reshape(n, oh, ow, f)


def group_conv_transpose(x, w, s, p, groups):
    """conv_transpose per group: one batched BLAS product over the groups, then col2im."""
    n, ci, h, wd = x.shape
    _, cog, kh, kw = w.shape
    cig = ci // groups
    wg = w.reshape(groups, cig, cog * kh * kw).transpose(0, 2, 1)  # g (cog kh kw) cig
    y = (wg @ x.reshape(n, groups, cig, h * wd)).reshape(n, groups * cog, kh, kw, h, wd)
    full = np.zeros((n, groups * cog, (h - 1) * s + kh, (wd - 1) * s + kw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            full[:, :, i:i + s * h:s, j:j + s * wd:s] += y[:, :, i, j]
    return full[:, :, p:full.shape[2] - p, p:full.shape[3] - p]


def resize_linear(x, oh, ow):
    """Bilinear resize, half-pixel centres, NCHW, in float32: two row gathers and a lerp, then
    two column gathers and a lerp (topi's formula a * (1 - t) + b * t, edges clamped)."""
    h, w = x.shape[2:]

    def axis(n, m):
        c = (np.arange(m, dtype=np.float32) + np.float32(0.5)) * np.float32(n / m) - np.float32(0.5)
        i0 = np.floor(c)
        t = (c - i0).astype(np.float32)
        i0 = i0.astype(np.int64)
        return np.clip(i0, 0, n - 1), np.clip(i0 + 1, 0, n - 1), t

    y0, y1, ty = axis(h, oh)
    x0, x1, tx = axis(w, ow)
    xf = x.astype(np.float32, copy=False)
    ty = ty[:, None]
    rows = xf[:, :, y0] * (1 - ty) + xf[:, :, y1] * ty
    return (rows[..., x0] * (1 - tx) + rows[..., x1] * tx).astype(x.dtype)


def resize_nearest(x, oh, ow):
    """Nearest-neighbour resize, asymmetric coordinates, NCHW: one gather per axis."""
    h, w = x.shape[2:]
    return x[:, :, np.arange(oh) * h // oh][..., np.arange(ow) * w // ow]


def adaptive_windows(x, axis, m, fn):
    """Adaptive pooling of ``axis`` to ``m`` outputs by per-window slices (windows that do not
    tile: output o covers [floor(o n / m), ceil((o + 1) n / m)))."""
    n = x.shape[axis]
    parts = [fn(x.take(range(o * n // m, -(-(o + 1) * n // m)), axis=axis), axis=axis, keepdims=True)
             for o in range(m)]
    return np.concatenate(parts, axis=axis)


def one_hot(idx, depth):
    out = np.zeros(idx.shape + (depth,), np.float32)
    out[np.arange(idx.shape[0]), idx] = 1
    return out


def more_cases(add, quick, dtype, acc):
    """The --all cases: every other operator with a numpy equivalent. Left out, having none in
    numpy: erf and fast_erf (scipy.special.erf only), image.resize*, shape (a constant),
    reinterpret to other widths, ceil_log2 (an expression helper, not an operator), scan's
    generic form. The NCW/NWC/NHWC aliases of conv1d/conv2d run through their generic form."""
    big = (1024, 1024) if quick else (2048, 2048)
    half = (big[0] // 2, big[1] // 2)
    spatial = 56 if quick else 112
    img = (1, 64, spatial, spatial)
    ints_ok = INT + ("bool",)
    # float math: topi calls the C library function numpy's loop computes (float32 in float32)
    for name, np_fn, gen in [
            ("log", np.log, positive), ("log2", np.log2, positive), ("log10", np.log10, positive),
            ("exp2", np.exp2, None), ("sin", np.sin, None), ("cos", np.cos, None),
            ("tan", np.tan, unit), ("sinh", np.sinh, None), ("cosh", np.cosh, None),
            ("asin", np.arcsin, unit), ("acos", np.arccos, unit), ("atan", np.arctan, None),
            ("asinh", np.arcsinh, None), ("acosh", np.arccosh, above_one),
            ("atanh", np.arctanh, unit),
            ("rsqrt", lambda a: 1 / np.sqrt(a), positive),  # numpy has no rsqrt: one divide more
            ("fast_exp", np.exp, None), ("fast_tanh", np.tanh, None)]:
        add(name, [big], getattr(topi, name), np_fn, kinds=FLOAT, gen=gen)
    # rounding: topi.round rounds half to even like np.round (checked on halves); trunc/floor/
    # ceil as numpy's
    for name, np_fn in [("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
                        ("round", np.round)]:
        add(name, [big], getattr(topi, name), np_fn, kinds=FLOAT, gen=halves)
    add("sign", [big], topi.sign, np.sign, kinds=SIGNED)
    add("negative", [big], topi.negative, np.negative, kinds=SIGNED)
    add("abs", [big], topi.abs, np.abs, kinds=SIGNED)
    add("identity", [big], topi.identity, np.copy, kinds=ANY)
    for name in ("isnan", "isinf", "isfinite"):
        add(name, [big], getattr(topi, name), getattr(np, name), kinds=FLOAT, gen=specials)
    # binary
    add("subtract", [big, big], topi.subtract, np.subtract, kinds=NUMERIC)
    add("minimum", [big, big], topi.minimum, np.minimum, kinds=NUMERIC)
    add("divide", [big, big], topi.divide, np.divide, kinds=FLOAT, gen=[None, divisor])
    add("power", [big, big], topi.power, np.power, kinds=FLOAT, gen=[positive, exponent])
    # floor_divide / floor_mod: numpy's floor_divide / mod (remainder has the divisor's sign);
    # topi computes floats as floor(a / b) and a - floor(a / b) * b, numpy through fmod:
    # equal but for rounding at the boundaries, hence the tolerance
    add("floor_divide", [big, big], topi.floor_divide, np.floor_divide, gen=[None, divisor],
        kinds=("float32", "float64") + INT)
    add("floor_mod", [big, big], topi.floor_mod, np.mod, gen=[None, divisor], rtol=1e-3,
        kinds=("float32", "float64") + INT)
    # mod and trunc_mod: the remainder of the truncating division (C's %, fmod): np.fmod
    add("mod", [big, big], topi.mod, np.fmod, gen=[None, divisor], rtol=1e-3,
        kinds=("float32", "float64") + INT)
    add("trunc_mod", [big, big], topi.trunc_mod, np.fmod, gen=[None, divisor], rtol=1e-3,
        kinds=("float32", "float64") + INT)
    # trunc_divide of floats: np.trunc(a / b); of integers C's division (numpy has none)
    add("trunc_divide", [big, big], topi.trunc_divide, lambda a, b: np.trunc(a / b),
        gen=[None, divisor], kinds=("float32", "float64"))
    add("log_add_exp", [big, big], topi.log_add_exp, np.logaddexp, kinds=FLOAT)
    # the bounds fit the dtype: uint8 clips at [0, 50] (-50 is no uint8, and topi refuses it)
    lo, hi = (-0.5, 0.5) if dtype in FLOAT else ((0, 50) if dtype == "uint8" else (-50, 50))
    add("clip", [big], lambda a: topi.clip(a, lo, hi), lambda a: np.clip(a, lo, hi), kinds=NUMERIC)
    add("where", [big, big, big], topi.where, np.where, kinds=NUMERIC, in_dtypes=["bool", None, None])
    for name, np_fn in [("greater", np.greater), ("less", np.less), ("equal", np.equal),
                        ("not_equal", np.not_equal), ("greater_equal", np.greater_equal),
                        ("less_equal", np.less_equal)]:
        # equal on random floats is all-false: half the pairs made equal
        gen = [None, None]
        if name in ("equal", "not_equal"):
            add(name, [big, big], getattr(topi, name), np_fn, kinds=NUMERIC,
                gen=[index(4), index(4)] if dtype in FLOAT else None)
        else:
            add(name, [big, big], getattr(topi, name), np_fn, kinds=NUMERIC, gen=gen)
    # cast: float to int32 truncates in C and in numpy's astype; integers cast to float32
    to = "int32" if dtype in FLOAT else "float32"
    add(f"cast to {to}", [big], lambda a: topi.cast(a, to), lambda a: a.astype(to), kinds=NUMERIC)
    add("reinterpret", [big], lambda a: topi.reinterpret(a, "int32"), lambda a: a.view(np.int32).copy(),
        kinds=("float32",))
    # integers and bools only: int32 (bool for logical_*) in the default run
    for name, np_fn in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                        ("bitwise_xor", np.bitwise_xor)]:
        add(name, [big, big], getattr(topi, name), np_fn, kinds=INT, fallback="int32")
    add("bitwise_not", [big], topi.bitwise_not, np.invert, kinds=INT, fallback="int32")
    add("left_shift", [big, big], topi.left_shift, np.left_shift, kinds=INT, fallback="int32",
        gen=[nonneg, shift])
    add("right_shift", [big, big], topi.right_shift, np.right_shift, kinds=INT, fallback="int32",
        gen=[None, shift])
    for name, np_fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                        ("logical_xor", np.logical_xor)]:
        add(name, [big, big], getattr(topi, name), np_fn, kinds=("bool",), fallback="bool")
    add("logical_not", [big], topi.logical_not, np.logical_not, kinds=("bool",), fallback="bool")
    add("elemwise_sum 3", [big, big, big], lambda a, b, c: topi.elemwise_sum([a, b, c]),
        lambda a, b, c: a + b + c, kinds=NUMERIC)
    # shape operators: the numpy equivalent materializes its result (a copy, not a view)
    add("flip rows", [big], lambda a: topi.flip(a, 0), lambda a: np.flip(a, 0).copy(), kinds=ANY)
    add("flip columns", [big], lambda a: topi.flip(a, 1), lambda a: np.flip(a, 1).copy(), kinds=ANY)
    add("tile 2x2", [half], lambda a: topi.tile(a, (2, 2)), lambda a: np.tile(a, (2, 2)), kinds=ANY)
    add("repeat 2 columns", [half], lambda a: topi.repeat(a, 2, 1), lambda a: np.repeat(a, 2, 1),
        kinds=ANY)
    add("repeat 2 rows", [half], lambda a: topi.repeat(a, 2, 0), lambda a: np.repeat(a, 2, 0),
        kinds=ANY)
    add("take rows", [big, (big[0],)], lambda a, i: topi.take(a, i, axis=0),
        lambda a, i: np.take(a, i, axis=0), kinds=ANY, in_dtypes=[None, "int32"],
        gen=[None, index(big[0])])
    add("take flat", [big, big], lambda a, i: topi.take(a, i),
        lambda a, i: np.take(a, i), kinds=ANY, in_dtypes=[None, "int32"],
        gen=[None, index(big[0] * big[1])])
    add("gather columns", [big, big], lambda a, i: topi.gather(a, 1, i),
        lambda a, i: np.take_along_axis(a, i, 1), kinds=ANY, in_dtypes=[None, "int32"],
        gen=[None, index(big[1])])
    add("gather_nd", [big, (2, big[0] * 2)], topi.gather_nd, lambda a, i: a[i[0], i[1]],
        kinds=ANY, in_dtypes=[None, "int32"], gen=[None, index(big[0])])
    depth = 1000
    add("one_hot", [(4096,)], lambda i: topi.one_hot(i, 1.0, 0.0, depth, -1, "float32"),
        lambda i: one_hot(i, depth), kinds=("float32",), in_dtypes=["int32"], gen=index(depth))
    n2 = big[0]
    add("eye", [], lambda: topi.eye(n2, dtype=dtype), lambda: np.eye(n2, dtype=dtype), kinds=NUMERIC)
    add("full", [], lambda: topi.full(big, dtype, 3), lambda: np.full(big, 3, dtype), kinds=NUMERIC)
    add("full_like", [big], lambda a: topi.full_like(a, 3), lambda a: np.full_like(a, 3), kinds=NUMERIC)
    nr = big[0] * big[1]
    add("arange", [], lambda: topi.arange(nr, dtype=dtype), lambda: np.arange(nr, dtype=dtype),
        kinds=("float32", "float64", "int32", "int64"))
    add("stack", [big, big], lambda a, b: topi.stack([a, b], 0), lambda a, b: np.stack([a, b]),
        kinds=ANY)
    add("split 2 columns", [big], lambda a: topi.split(a, 2, axis=1),
        lambda a: [p.copy() for p in np.split(a, 2, axis=1)], kinds=ANY)
    add("strided_slice ::2", [big], lambda a: topi.strided_slice(a, [0, 0], list(big), [2, 2]),
        lambda a: a[::2, ::2].copy(), kinds=ANY)
    add("strided_slice rows", [big], lambda a: topi.strided_slice(a, [1, 0], [big[0] - 1, big[1]]),
        lambda a: a[1:-1].copy(), kinds=ANY)
    add("broadcast_to", [big[1:]], lambda a: topi.broadcast_to(a, big),
        lambda a: np.ascontiguousarray(np.broadcast_to(a, big)), kinds=ANY)
    add("broadcast_to column", [(big[0], 1)], lambda a: topi.broadcast_to(a, big),
        lambda a: np.ascontiguousarray(np.broadcast_to(a, big)), kinds=ANY)
    add("reshape", [big], lambda a: topi.reshape(a, (big[0] * 2, big[1] // 2)),
        lambda a: a.reshape(big[0] * 2, big[1] // 2).copy(), kinds=ANY)
    add("expand_dims", [big], lambda a: topi.expand_dims(a, 1), lambda a: a[:, None].copy(), kinds=ANY)
    add("squeeze", [(big[0], 1, big[1])], lambda a: topi.squeeze(a, [1]), lambda a: a[:, 0].copy(),
        kinds=ANY)
    add("flatten", [(8, 64, 28, 56)], topi.nn.flatten, lambda a: a.reshape(8, -1).copy(), kinds=ANY)
    add("layout_transform NCHW8c", [img], lambda a: topi.layout_transform(a, "NCHW", "NCHW8c"),
        lambda a: np.ascontiguousarray(a.reshape(1, 8, 8, spatial, spatial).transpose(0, 1, 3, 4, 2)),
        kinds=ANY)
    add("matmul (topi)", [(512, 512), (512, 512)], topi.matmul, np.matmul, rtol=1e-3, kinds=ACC16)
    # network shapes off the tiles' grid (session 19, s19g): a classifier's dense at batch 1
    # (a dot product per output; packing W cost 12x), columns no vector divides
    add("dense batch 1 768->1000", [(1, 768), (1000, 768)], topi.nn.dense, lambda a, b: a @ b.T,
        rtol=1e-3, kinds=ACC16)
    add("matmul 127x255x129", [(127, 255), (255, 129)], topi.nn.matmul, np.matmul, rtol=1e-3,
        kinds=ACC16)
    # reductions
    add("sum all", [big], lambda a: topi.sum(a), lambda a: np.array(a.sum(**acc), a.dtype), rtol=1e-3,
        kinds=ACC16)
    add("max columns", [big], lambda a: topi.max(a, axis=0), lambda a: a.max(0))
    add("max all", [big], lambda a: topi.max(a), lambda a: np.array(a.max(), a.dtype))
    add("min rows", [big], lambda a: topi.min(a, axis=1), lambda a: a.min(1))
    add("min columns", [big], lambda a: topi.min(a, axis=0), lambda a: a.min(0))
    prod_acc = acc
    add("prod rows", [big], lambda a: topi.prod(a, axis=1), lambda a: a.prod(1, **prod_acc), rtol=1e-3,
        kinds=ACC16, gen=near_one)
    add("prod columns", [big], lambda a: topi.prod(a, axis=0), lambda a: a.prod(0, **prod_acc),
        rtol=1e-3, kinds=ACC16, gen=near_one)
    add("prod all", [half], lambda a: topi.prod(a), lambda a: np.array(a.prod(**prod_acc), a.dtype),
        rtol=1e-2, kinds=ACC16, gen=near_one)
    add("all rows", [big], lambda a: topi.all(a, axis=1), lambda a: a.all(1), kinds=ANY, gen=ones)
    add("all columns", [big], lambda a: topi.all(a, axis=0), lambda a: a.all(0), kinds=ANY, gen=ones)
    add("any rows", [big], lambda a: topi.any(a, axis=1), lambda a: a.any(1), kinds=ANY, gen=zeros)
    add("any all", [big], lambda a: topi.any(a), lambda a: np.array(a.any()), kinds=ANY, gen=zeros)
    add("argmax columns", [big], lambda a: topi.argmax(a, axis=0), lambda a: a.argmax(0))
    add("argmin rows", [big], lambda a: topi.argmin(a, axis=1), lambda a: a.argmin(1))
    add("argmin columns", [big], lambda a: topi.argmin(a, axis=0), lambda a: a.argmin(0))
    add("argmax all", [big], lambda a: topi.argmax(a), lambda a: np.array(a.argmax(), "int32"))
    add("argmin all", [big], lambda a: topi.argmin(a), lambda a: np.array(a.argmin(), "int32"))
    add("cumsum columns", [big], lambda a: topi.cumsum(a, axis=0), lambda a: np.cumsum(a, 0, **acc),
        rtol=1e-2)
    add("cumsum all", [half], lambda a: topi.cumsum(a), lambda a: np.cumsum(a, **acc), rtol=1e-2,
        kinds=("float64",) + INT)  # float32's sequential sum over 1M elements drifts past any rtol
    add("cumprod rows", [big], lambda a: topi.cumprod(a, axis=1), lambda a: np.cumprod(a, 1, **acc),
        rtol=1e-3, gen=near_one, kinds=ACC16)
    add("cumprod columns", [big], lambda a: topi.cumprod(a, axis=0), lambda a: np.cumprod(a, 0, **acc),
        rtol=1e-3, gen=near_one, kinds=ACC16)
    add("cumprod all", [half], lambda a: topi.cumprod(a), lambda a: np.cumprod(a, **acc),
        rtol=1e-2, gen=near_one, kinds=("float64",) + INT)
    # sorting: topi's sort/argsort are stable (lower index first among equals), as numpy's
    # kind="stable"; topk by argpartition + sorting the k (topk_rows)
    rows = (512, 128) if quick else (2048, 128)
    add("sort rows", [rows], lambda a: topi.sort(a, axis=1), lambda a: np.sort(a, 1), kinds=NUMERIC)
    add("argsort rows", [rows], lambda a: topi.argsort(a, axis=1, dtype="int32"),
        lambda a: np.argsort(a, 1, kind="stable"), kinds=NUMERIC)
    add("topk 8 rows", [rows], lambda a: topi.topk(a, 8, axis=1, dtype="int32"),
        lambda a: topk_rows(a, 8), kinds=("float32", "float64"))
    # nn
    nn = topi.nn
    add("log_softmax", [big], lambda a: nn.log_softmax(a, axis=-1), log_softmax, rtol=1e-3, kinds=FLOAT)
    # for 0 < alpha < 1, max(x, alpha * x) is leaky_relu (numpy's fastest form)
    add("leaky_relu", [big], lambda a: nn.leaky_relu(a, 0.1), lambda a: np.maximum(a, a * a.dtype.type(0.1)),
        kinds=FLOAT)
    add("prelu", [img, img[1:2]], lambda a, s: nn.prelu(a, s, 1),
        lambda a, s: np.where(a > 0, a, a * s[:, None, None]), kinds=FLOAT)
    add("pad 1", [img], lambda a: nn.pad(a, [0, 0, 1, 1]),
        lambda a: np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1))), kinds=NUMERIC)
    add("avg_pool2d 2x2", [img], lambda x: nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "avg"),
        lambda x: x.reshape(1, 64, spatial // 2, 2, spatial // 2, 2).mean(axis=(3, 5)), kinds=FLOAT)
    gp = (1, 256, 56, 56)
    add("global_pool avg", [gp], lambda x: nn.global_pool(x, "avg"),
        lambda x: x.mean(axis=(2, 3), keepdims=True), rtol=1e-3, kinds=FLOAT)
    add("global_pool max", [gp], lambda x: nn.global_pool(x, "max"),
        lambda x: x.max(axis=(2, 3), keepdims=True))
    s7 = spatial // 7
    add("adaptive_pool avg 7x7", [img], lambda x: nn.adaptive_pool(x, (7, 7), "avg"),
        lambda x: x.reshape(1, 64, 7, s7, 7, s7).mean(axis=(3, 5)), rtol=1e-3, kinds=FLOAT)
    add("adaptive_pool max 7x7", [img], lambda x: nn.adaptive_pool(x, (7, 7), "max"),
        lambda x: x.reshape(1, 64, 7, s7, 7, s7).max(axis=(3, 5)))
    ch = (64,)
    add("batch_norm inference", [img, ch, ch, ch, ch],
        lambda x, g, b, m, v: nn.batch_norm(x, g, b, m, v)[0], batch_norm, rtol=1e-3, kinds=FLOAT,
        gen=[None, None, None, None, variance])
    nimg = (8, 64, 28, 28) if quick else (8, 64, 56, 56)
    add("instance_norm", [nimg, ch, ch], lambda x, g, b: nn.instance_norm(x, g, b, 1, [2, 3]),
        lambda x, g, b: group_norm(x, g, b, 64), rtol=1e-3, kinds=FLOAT)
    add("group_norm 8", [nimg, ch, ch], lambda x, g, b: nn.group_norm(x, g, b, 8, 1, [2, 3]),
        lambda x, g, b: group_norm(x, g, b, 8), rtol=1e-3, kinds=FLOAT)
    add("rms_norm", [big, big[1:]], lambda a, w: nn.rms_norm(a, w, axis=[-1]), rms_norm, rtol=1e-3,
        kinds=FLOAT)
    c = 16 if quick else 32
    conv = ("float32", "float64")
    add("conv1d 3 NCW", [(8, 64, 1024), (64, 64, 3)], lambda x, w: nn.conv1d(x, w),
        conv1d_ncw, rtol=1e-3, kinds=conv)
    # NCHW at a network's later stages: output rows of 28, 14 and 7 columns; 1x1 and stride 2.
    for cc, hw, k, s in ((128, 30, 3, 1), (256, 16, 3, 1), (512, 9, 3, 1), (256, 14, 1, 1),
                         (256, 16, 3, 2)):
        oc = 2 * cc if s == 2 else cc
        oh = (hw - k) // s + 1
        add(f"conv2d {k}x{k} NCHW {cc}->{oc} {oh}x{oh}" + (f" s{s}" if s > 1 else ""),
            [(1, cc // 4 if quick else cc, hw, hw), (oc // 4 if quick else oc, cc // 4 if quick else cc, k, k)],
            lambda x, w, s=s: nn.conv2d_nchw(x, w, s, 0, 1),
            lambda x, w, s=s: im2col_conv_strided(x, w, s), rtol=1e-3, kinds=conv)
    # Stride 2 at 14x14 and 28x28 outputs (the input read through a copy in phases).
    for cc, hw in ((128, 29), (64, 57)):
        oc, oh = 2 * cc, (hw - 3) // 2 + 1
        q = 4 if quick else 1
        add(f"conv2d 3x3 NCHW {cc}->{oc} {oh}x{oh} s2", [(1, cc // q, hw, hw), (oc // q, cc // q, 3, 3)],
            lambda x, w: nn.conv2d_nchw(x, w, 2, 0, 1),
            lambda x, w: im2col_conv_strided(x, w, 2), rtol=1e-3, kinds=conv)
    # 1x1 at a network's later stages (the output's H * W one column axis of the product):
    # 1024 -> 256 at 14x14, stride 2 from 14x14, 7x7; NHWC (H * W rows).
    for cc, oc, hw, s in ((1024, 256, 14, 1), (256, 512, 14, 2), (512, 2048, 7, 1)):
        oh = (hw - 1) // s + 1
        q = 4 if quick else 1
        add(f"conv2d 1x1 NCHW {cc}->{oc} {oh}x{oh}" + (f" s{s}" if s > 1 else ""),
            [(1, cc // q, hw, hw), (oc // q, cc // q, 1, 1)],
            lambda x, w, s=s: nn.conv2d_nchw(x, w, s, 0, 1),
            lambda x, w, s=s: im2col_conv_strided(x, w, s), rtol=1e-3, kinds=conv)
    add("conv2d 1x1 NHWC 1024->256 14x14", [(1, 14, 14, 1024 // (4 if quick else 1)),
                                            (1, 1, 1024 // (4 if quick else 1), 256)],
        lambda x, w: nn.conv2d_nhwc(x, w, 1, 0, 1, out_dtype=dtype), conv2d_nhwc, rtol=1e-3,
        kinds=conv)
    add("conv2d 3x3 NHWC", [(1, 58, 58, c), (3, 3, c, c)],
        lambda x, w: nn.conv2d_nhwc(x, w, 1, 0, 1, out_dtype=dtype), conv2d_nhwc, rtol=1e-3, kinds=conv)
    add("depthwise_conv2d 3x3", [(1, 64, spatial + 2, spatial + 2), (64, 1, 3, 3)],
        lambda x, w: nn.depthwise_conv2d_nchw(x, w, 1, 0, 1), depthwise_conv, rtol=1e-3, kinds=conv)
    add("group_conv2d 3x3 g4", [(1, 64, 58, 58), (64, 16, 3, 3)],
        lambda x, w: nn.group_conv2d_nchw(x, w, 1, 0, 1, 4), lambda x, w: group_conv(x, w, 4),
        rtol=1e-3, kinds=conv)
    add("conv2d_transpose 4x4 s2", [(1, 32, 28, 28), (32, 32, 4, 4)],
        lambda x, w: nn.conv2d_transpose_nchw(x, w, (2, 2), (1, 1), dtype, (0, 0)),
        lambda x, w: conv_transpose(x, w, 2, 1), rtol=1e-3, kinds=conv)
    # A decoder's upsampling stages (kernel 2 MB / 512 KB / 128 KB at float32), and a 3x3
    # kernel at stride 2 (phases of 2x2 taps, a quarter of them zero).
    for ci, co, hw, k in ((256, 128, 14, 4), (128, 64, 28, 4), (64, 32, 56, 4), (64, 64, 28, 3)):
        ci, co = (ci // 4, co // 4) if quick else (ci, co)
        oh = (hw - 1) * 2 - 2 + k
        add(f"conv2d_transpose {k}x{k} s2 {ci}->{co} {hw}->{oh}", [(1, ci, hw, hw), (ci, co, k, k)],
            lambda x, w: nn.conv2d_transpose_nchw(x, w, (2, 2), (1, 1), dtype, (0, 0)),
            lambda x, w: conv_transpose(x, w, 2, 1), rtol=1e-3, kinds=conv)
    # the layouts and groupings the rows above leave out
    add("conv1d 3 NWC", [(8, 1024, 64), (3, 64, 64)], lambda x, w: nn.conv1d_nwc(x, w),
        conv1d_nwc, rtol=1e-3, kinds=conv)
    add("group_conv1d 3 NCW g4", [(8, 64, 1024), (64, 16, 3)],
        lambda x, w: nn.group_conv1d_ncw(x, w, groups=4), lambda x, w: group_conv1d_ncw(x, w, 4),
        rtol=1e-3, kinds=conv)
    add("group_conv1d 3 NWC g4", [(8, 1024, 64), (3, 16, 64)],
        lambda x, w: nn.group_conv1d_nwc(x, w, groups=4), lambda x, w: group_conv1d_nwc(x, w, 4),
        rtol=1e-3, kinds=conv)
    add("depthwise_conv2d 3x3 NHWC", [(1, spatial + 2, spatial + 2, 64), (3, 3, 64, 1)],
        lambda x, w: nn.depthwise_conv2d_nhwc(x, w, 1, 0, 1), depthwise_conv_nhwc, rtol=1e-3,
        kinds=conv)
    add("group_conv2d 3x3 g4 NHWC", [(1, 58, 58, 64), (3, 3, 16, 64)],
        lambda x, w: nn.group_conv2d_nhwc(x, w, 1, 0, 1, 4), lambda x, w: group_conv_nhwc(x, w, 4),
        rtol=1e-3, kinds=conv)
    add("group_conv2d_transpose 4x4 s2 g4", [(1, 32, 28, 28), (32, 8, 4, 4)],
        lambda x, w: nn.group_conv2d_transpose_nchw(x, w, (2, 2), (1, 1), dtype, (0, 0), 4),
        lambda x, w: group_conv_transpose(x, w, 2, 1, 4), rtol=1e-3, kinds=conv)
    ap1 = (8, 64, 4096) if not quick else (8, 64, 1024)
    add("adaptive_pool1d avg 64", [ap1], lambda x: nn.adaptive_pool1d(x, 64, "avg"),
        lambda x: x.reshape(*ap1[:2], 64, -1).mean(-1), rtol=1e-3, kinds=FLOAT)
    add("adaptive_pool1d max 7", [ap1], lambda x: nn.adaptive_pool1d(x, 7, "max"),
        lambda x: adaptive_windows(x, 2, 7, np.max))
    ap3 = (1, 32, 16, spatial // 2, spatial // 2)
    add("adaptive_pool3d avg 4x7x7", [ap3], lambda x: nn.adaptive_pool3d(x, (4, 7, 7), "avg"),
        lambda x: x.reshape(1, 32, 4, 4, 7, ap3[3] // 7, 7, ap3[4] // 7).mean(axis=(3, 5, 7)),
        rtol=1e-3, kinds=FLOAT)
    add("adaptive_pool3d max 4x7x7", [ap3], lambda x: nn.adaptive_pool3d(x, (4, 7, 7), "max"),
        lambda x: x.reshape(1, 32, 4, 4, 7, ap3[3] // 7, 7, ap3[4] // 7).max(axis=(3, 5, 7)))
    rs = (1, 64, spatial // 2, spatial // 2)
    add("resize2d linear 2x", [rs],
        lambda x: topi.image.resize2d(x, None, (spatial, spatial), method="linear"),
        lambda x: resize_linear(x, spatial, spatial), rtol=1e-4, kinds=("float32",))
    add("resize2d nearest 2x", [rs],
        lambda x: topi.image.resize2d(x, None, (spatial, spatial), method="nearest_neighbor",
                                      coordinate_transformation_mode="asymmetric"),
        lambda x: resize_nearest(x, spatial, spatial), kinds=NUMERIC)


def run(case):
    name, ph, outs, arrays, np_fn, rtol = case
    if isinstance(outs, Exception):
        raise outs
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    func = te.create_prim_func(list(ph) + list(outs))
    lib = ts.build(func, target="c")
    results = [np.empty([int(getattr(s, "value", s)) for s in o.shape], str(o.dtype)) for o in outs]
    lib(*arrays, *results)
    expect = np_fn(*arrays)
    # several outputs (split, topk) when numpy gives several; else the first (batch_norm)
    for got, want in zip(results, expect if isinstance(expect, (list, tuple)) else [expect]):
        want = np.asarray(want)
        if got.shape != want.shape:
            raise AssertionError(f"shape {got.shape}, numpy {want.shape}")
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        else:  # integers and bools: exactly
            np.testing.assert_array_equal(got, want)
    # OpenBLAS's idle threads spin for ~0.1 s after a call: the numpy product of the case before
    # (matmul before dense) would otherwise share the cores with tessera's threads (dense 512^3
    # read 0.64x numpy that way). tessera's own spin is bounded and short.
    time.sleep(0.3)
    if cpu_timer():  # one thread, timed in turn
        ours, ref = interleaved_min([lambda: lib(*arrays, *results), lambda: np_fn(*arrays)])
        return ours, ref
    ours = best(lambda: lib(*arrays, *results), repeat=7, number=3)
    ref = best(lambda: np_fn(*arrays), repeat=7, number=3)
    return ours, ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true", help="smaller shapes")
    ap.add_argument("--all", action="store_true",
                    help="every operator with a numpy equivalent, not only the main ones")
    ap.add_argument("--dtypes", default="", help=f"comma-separated, of {','.join(ANY)} (default float32)")
    args = ap.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    dtypes = [s.strip() for s in args.dtypes.split(",") if s.strip()] or ["float32"]
    unknown = [d for d in dtypes if d not in ANY]
    if unknown:
        ap.error(f"unknown dtype {', '.join(unknown)}: choose among {', '.join(ANY)}")
    label = (lambda name, dtype: name) if not args.dtypes else (lambda name, dtype: f"{name} {dtype}")
    load0 = os.getloadavg()[0]
    rows = []
    head = f"{'operator (no schedule)':34} {'tessera ms':>10} {'numpy ms':>9} {'numpy/tessera':>13}"
    print(head)
    print("-" * len(head))
    for dtype in dtypes:
        for case in cases(args.quick, dtype, every=args.all, default_run=not args.dtypes):
            if only and case[0] not in only:
                continue
            name = label(case[0], dtype)
            try:
                ours, ref = run(case)
            except Exception as e:  # noqa: BLE001
                print(f"{name:34} failed: {type(e).__name__}: {str(e).splitlines()[0][:70]}")
                continue
            rows.append((name, ours, ref))
            print(f"{name:34} {ours * 1e3:10.3f} {ref * 1e3:9.3f} {ref / ours:13.2f}", flush=True)
    slower = [r[0] for r in rows if r[2] / r[1] < 1.0]
    print(f"numpy faster on: {', '.join(slower) if slower else 'none'}")
    how = ("one thread each, thread CPU time, timed in turn" if cpu_timer() else
           "tessera uses every core, numpy's elementwise code one")
    print(f"load average before / after: {load0:.2f} / {os.getloadavg()[0]:.2f}; cpus: {os.cpu_count()}"
          f" ({how})")
    try:
        from bench_plot import save_ratio_bars

        bars = [{"name": r[0], "threads": 1 if cpu_timer() else os.cpu_count(), "ref": "numpy", "ratio": r[2] / r[1]}
                for r in rows]
        png = ("topi_all" if args.all else "topi") + ("_dtypes.png" if args.dtypes else ".png")
        path = save_ratio_bars(bars, os.path.join(HERE, png),
                               "tessera.topi with no schedule vs numpy",
                               "numpy time / tessera time (> 1: tessera faster)", log=True)
        print(f"plot saved to {path}")
    except Exception as e:  # noqa: BLE001
        print(f"no plot: {e}")


if __name__ == "__main__":
    main()
