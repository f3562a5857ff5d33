"""Operator-library benchmark: every tessera.topi operator that numpy has an equivalent for,
built with no schedule (ts.build schedules it automatically), timed beside that numpy
equivalent in the same run. Each result is checked against numpy before it is timed.

    PYTHONPATH=python .venv/bin/python bench/bench_topi.py [--only exp,sum_rows] [--quick]
    BENCH_TIMER=cpu PYTHONPATH=python .venv/bin/python bench/bench_topi.py   # shared machine
    ... bench/bench_topi.py --dtypes float64,int32,int8   # the same cases in other dtypes

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


def cases(quick, dtype="float32"):
    """(name, te inputs, te output, numpy inputs, numpy function, rtol) of the operators that
    accept ``dtype`` and whose numpy equivalent computes in it."""
    rng = np.random.default_rng(0)
    big = (1024, 1024) if quick else (2048, 2048)
    m, k, n = (256, 256, 256) if quick else (512, 512, 512)
    out = []
    # float16 rounds every step; the float32 tolerances hold for the wider types
    scale = 10.0 if dtype == "float16" else 1.0

    def add(name, shapes, make, np_fn, rtol=1e-4, kinds=NUMERIC):
        if dtype not in kinds:
            return
        ph = [te.placeholder(s, dtype, name=f"in{i}") for i, s in enumerate(shapes)]
        arrays = [data(rng, s, dtype) for s in shapes]
        try:
            made = make(*ph)
        except Exception as e:  # noqa: BLE001  (reported as a failed row)
            made = e
        out.append((name, ph, made, arrays, np_fn, rtol * scale))

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
    return out


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
    np.testing.assert_allclose(results[0], expect, rtol=rtol, atol=rtol)
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
        for case in cases(args.quick, dtype):
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
        png = "topi_dtypes.png" if args.dtypes else "topi.png"
        path = save_ratio_bars(bars, os.path.join(HERE, png),
                               "tessera.topi with no schedule vs numpy",
                               "numpy time / tessera time (> 1: tessera faster)", log=True)
        print(f"plot saved to {path}")
    except Exception as e:  # noqa: BLE001
        print(f"no plot: {e}")


if __name__ == "__main__":
    main()
