"""Operator-library benchmark: every tessera.topi operator that numpy has an equivalent for,
built with no schedule (ts.build schedules it automatically), timed beside that numpy
equivalent in the same run. Each result is checked against numpy before it is timed.

    PYTHONPATH=python .venv/bin/python bench/bench_topi.py [--only exp,sum_rows] [--quick]
    BENCH_TIMER=cpu PYTHONPATH=python .venv/bin/python bench/bench_topi.py   # shared machine

With BENCH_TIMER=cpu (thread CPU time, for a loaded machine) everything runs on one thread
(OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1, set here; other values are refused, because the calling
thread's CPU time does not count the work of other threads) and tessera and numpy are timed in
turn, so that a phase of contention hits both alike.

Prints a table (ratio > 1: tessera faster) and saves bench/topi.png.
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


def cases(quick):
    """(name, te inputs, te output, numpy inputs, numpy function, rtol)."""
    rng = np.random.default_rng(0)
    big = (1024, 1024) if quick else (2048, 2048)
    m, k, n = (256, 256, 256) if quick else (512, 512, 512)
    f32 = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    out = []

    def add(name, shapes, make, np_fn, rtol=1e-4, data=None):
        ph = [te.placeholder(s, "float32", name=f"in{i}") for i, s in enumerate(shapes)]
        arrays = data or [f32(*s) for s in shapes]
        try:
            made = make(*ph)
        except Exception as e:  # noqa: BLE001  (reported as a failed row)
            made = e
        out.append((name, ph, made, arrays, np_fn, rtol))

    add("exp", [big], topi.exp, np.exp)
    add("tanh", [big], topi.tanh, np.tanh)
    add("sigmoid", [big], topi.sigmoid, lambda a: 1 / (1 + np.exp(-a)))
    add("sqrt(abs)", [big], lambda a: topi.sqrt(topi.abs(a)), lambda a: np.sqrt(np.abs(a)))
    add("add broadcast row", [big, big[1:]], topi.add, np.add)
    add("multiply", [big, big], topi.multiply, np.multiply)
    add("maximum", [big, big], topi.maximum, np.maximum)
    add("relu", [big], topi.nn.relu, lambda a: np.maximum(a, 0))
    add("sum rows", [big], lambda a: topi.sum(a, axis=1), lambda a: a.sum(1), rtol=1e-3)
    add("sum columns", [big], lambda a: topi.sum(a, axis=0), lambda a: a.sum(0), rtol=1e-3)
    add("max rows", [big], lambda a: topi.max(a, axis=1), lambda a: a.max(1))
    add("min all", [big], lambda a: topi.min(a), lambda a: np.array(a.min(), "float32"))
    add("argmax rows", [big], lambda a: topi.argmax(a, axis=1), lambda a: a.argmax(1))
    add("transpose", [big], topi.transpose, lambda a: np.ascontiguousarray(a.T))
    add("concatenate", [big, big], lambda a, b: topi.concatenate([a, b], axis=1),
        lambda a, b: np.concatenate([a, b], axis=1))
    add("cumsum rows", [big], lambda a: topi.cumsum(a, axis=1), lambda a: np.cumsum(a, 1), rtol=1e-2)
    add("softmax", [big], lambda a: topi.nn.softmax(a, axis=-1), softmax, rtol=1e-3)
    add("layer_norm", [big, big[1:], big[1:]], lambda a, g, b: topi.nn.layer_norm(a, g, b, axis=[-1]),
        layer_norm, rtol=1e-3)
    add("matmul", [(m, k), (k, n)], topi.nn.matmul, np.matmul, rtol=1e-3)
    add("dense", [(m, k), (n, k)], topi.nn.dense, lambda a, b: a @ b.T, rtol=1e-3)
    add("batch_matmul", [(8, 128, 64), (8, 64, 128)],
        lambda a, b: topi.nn.batch_matmul(a, b, transpose_b=False), np.matmul, rtol=1e-3)
    c = 16 if quick else 32
    add("conv2d 3x3 NCHW", [(1, c, 58, 58), (c, c, 3, 3)],
        lambda x, w: topi.nn.conv2d_nchw(x, w, 1, 0, 1), im2col_conv, rtol=1e-3)
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
    args = ap.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    load0 = os.getloadavg()[0]
    rows = []
    head = f"{'operator (no schedule)':26} {'tessera ms':>10} {'numpy ms':>9} {'numpy/tessera':>13}"
    print(head)
    print("-" * len(head))
    for case in cases(args.quick):
        if only and case[0] not in only:
            continue
        try:
            ours, ref = run(case)
        except Exception as e:  # noqa: BLE001
            print(f"{case[0]:26} failed: {type(e).__name__}: {str(e).splitlines()[0][:70]}")
            continue
        rows.append((case[0], ours, ref))
        print(f"{case[0]:26} {ours * 1e3:10.3f} {ref * 1e3:9.3f} {ref / ours:13.2f}", flush=True)
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
        path = save_ratio_bars(bars, os.path.join(HERE, "topi.png"),
                               "tessera.topi with no schedule vs numpy",
                               "numpy time / tessera time (> 1: tessera faster)", log=True)
        print(f"plot saved to {path}")
    except Exception as e:  # noqa: BLE001
        print(f"no plot: {e}")


if __name__ == "__main__":
    main()
