"""Automatic schedule benchmark: operators with no schedule, every figure beside its same-run
references (numpy/OpenBLAS, our hand schedules, memcpy bandwidth, Apache TVM's default
scheduling of the same te computes when the pip package apache-tvm is importable).

    PYTHONPATH=python python bench/bench_auto.py             # table + bench/auto.png
    PYTHONPATH=python python bench/bench_auto.py --quick     # smaller shapes
    PYTHONPATH=python python bench/bench_auto.py --only gemm,softmax --threads 1

Compute benchmarks run in child processes, one per thread count (OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS set, so numpy's BLAS and tessera use the same number of threads). The
OpenMP wait policy is tessera's own (a bounded spin, see tessera/runtime/openmp_policy.h)
unless OMP_WAIT_POLICY is set. Each figure is the best of several repeats; the load average is
printed with the table because the machine may be shared. The te computes come from
tests/python/autoschedule/ops.py (the operator library replaces them once it is merged).
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ALL = ("gemm", "batch_matmul", "conv2d", "softmax", "layer_norm", "column_sum", "elementwise",
       "schedule_time")
# Acceptance targets of the issue: tessera / reference.
TARGETS = {"gemm": 0.8, "batch_matmul": 1.0, "conv2d": 1.0, "softmax": 1.0, "layer_norm": 1.0,
           "elementwise": 0.8}


def row(bench, name, threads, value, unit, ref, ref_value, higher_is_better=True, target=None):
    if ref_value is None or value is None:
        ratio = None
    else:
        ratio = value / ref_value if higher_is_better else ref_value / value
    return {"bench": bench, "name": name, "threads": threads, "value": value, "unit": unit,
            "ref": ref, "ref_value": ref_value, "ratio": ratio, "target": target}


def _setup():
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(ROOT, "tests", "python", "autoschedule"))


def tvm_or_reason():
    try:
        import tvm
        from tvm import te  # noqa: F401
        return tvm, None
    except Exception as e:  # noqa: BLE001
        return None, f"apache-tvm not importable ({type(e).__name__}: {str(e)[:60]})"


def tvm_time(build_te, args, repeat=3):
    """Seconds per call of Apache TVM's build of a te compute with no schedule, or a reason."""
    import numpy as np

    tvm, why = tvm_or_reason()
    if tvm is None:
        return None, why
    try:
        from tvm import te

        tir = getattr(tvm, "tir", None) or tvm.tirx  # renamed tirx in TVM 0.27
        func = te.create_prim_func(build_te(tir, te))
        build = getattr(tvm, "compile", None) or tvm.build
        try:
            lib = build(tvm.IRModule({"main": func}), target="llvm -mcpu=native")
        except ValueError:  # TVM >= 0.27 takes targets as dicts
            lib = build(tvm.IRModule({"main": func}), target={"kind": "llvm", "mcpu": "native"})
        make = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
        targs = [make(np.ascontiguousarray(a)) for a in args]
        fn = lib["main"]
        fn(*targs)
        clock = time.thread_time if os.environ.get("BENCH_TIMER") == "cpu" else time.perf_counter
        ts_ = []
        for _ in range(repeat):
            t0 = clock()
            fn(*targs)
            ts_.append(clock() - t0)
        return min(ts_), None
    except Exception as e:  # noqa: BLE001
        return None, f"TVM build failed ({type(e).__name__}: {str(e).splitlines()[0][:60]})"


def add_refs(rows, bench, name, threads, value, unit, refs, higher_is_better=True):
    """One row per reference: refs is [(name, value or None, reason)]; the first is the
    acceptance reference."""
    for k, (ref, ref_value, why) in enumerate(refs):
        rows.append(row(bench, name, threads, value, unit, ref if ref_value is not None else
                        f"{ref}: {why}", ref_value, higher_is_better,
                        TARGETS.get(bench) if k == 0 else None))


# ----------------------------------------------------------------- compute (in a child process)

def bench_gemm(threads, quick):
    import cpu_kernels as K
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import best, cpu_timer, interleaved_min, interleaved_wall_min, tessera_time

    n = 512 if quick else 1024
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    auto = ts.build(ops.matmul(n, n, n), target="c")
    hand = ts.build(K.schedule_matmul(n, parallel=threads > 1), target="c")
    t = tessera_time(auto, (a, b, c))
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    th = tessera_time(hand, (a, b, c))
    ref = best(lambda: np.matmul(a, b, out=c))
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, th, ref = interleaved_wall_min([lambda: auto(a, b, c), lambda: hand(a, b, c),
                                           lambda: np.matmul(a, b, out=c)])
    elif cpu_timer():  # interleaved with the reference, thread CPU time
        t, ref = interleaved_min([lambda: auto(a, b, c), lambda: np.matmul(a, b, out=c)])

    def tvm_mm(tir, te):
        A = te.placeholder((n, n), name="A")
        B = te.placeholder((n, n), name="B")
        r = te.reduce_axis((0, n), name="r")
        C = te.compute((n, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
        return [A, B, C]

    tt, why = tvm_time(tvm_mm, (a, b, c), repeat=1) if threads == 1 else (None, "one-thread run only")
    fl = 2.0 * n ** 3
    g = lambda s: fl / s / 1e9 if s else None
    rows = []
    add_refs(rows, "gemm", f"gemm fp32 {n}^3", threads, g(t), "GFLOP/s",
             [("numpy BLAS", g(ref), None), ("hand schedule", g(th), None),
              ("TVM default", g(tt), why)])
    return rows


def bench_batch_matmul(threads, quick):
    import cpu_kernels as K
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import best, cpu_timer, interleaved_min, interleaved_wall_min, tessera_time

    sa, sb = (32, 12, 128, 128), (32, 12, 128, 64)
    rng = np.random.default_rng(0)
    a, b = rng.random(sa, dtype="float32"), rng.random(sb, dtype="float32")
    c = np.zeros(sa[:3] + sb[3:], "float32")
    auto = ts.build(ops.batch_matmul(32, 12, 128, 128, 64), target="c")
    hand = ts.build(K.schedule_batch_matmul(sa, sb, parallel=threads > 1), target="c")
    t = tessera_time(auto, (a, b, c))
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    th = tessera_time(hand, (a, b, c))
    ref = best(lambda: np.matmul(a, b, out=c))
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, th, ref = interleaved_wall_min([lambda: auto(a, b, c), lambda: hand(a, b, c),
                                           lambda: np.matmul(a, b, out=c)])
    elif cpu_timer():  # interleaved with the reference, thread CPU time
        t, ref = interleaved_min([lambda: auto(a, b, c), lambda: np.matmul(a, b, out=c)])

    def tvm_bmm(tir, te):
        A = te.placeholder(sa, name="A")
        B = te.placeholder(sb, name="B")
        r = te.reduce_axis((0, 128), name="r")
        C = te.compute(sa[:3] + sb[3:], lambda p, q, i, j: te.sum(A[p, q, i, r] * B[p, q, r, j],
                                                                   axis=r), name="C")
        return [A, B, C]

    tt, why = tvm_time(tvm_bmm, (a, b, c), repeat=1) if threads == 1 else (None, "one-thread run only")
    fl = 2.0 * 32 * 12 * 128 * 128 * 64
    g = lambda s: fl / s / 1e9 if s else None
    rows = []
    add_refs(rows, "batch_matmul", "batch_matmul (32,12,128,128)x(..,128,64)", threads, g(t),
             "GFLOP/s", [("numpy matmul", g(ref), None), ("hand schedule", g(th), None),
                         ("TVM default", g(tt), why)])
    return rows


def bench_conv2d(threads, quick):
    import cpu_kernels as K
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import best, cpu_timer, interleaved_min, interleaved_wall_min, tessera_time

    rng = np.random.default_rng(0)
    x = rng.random((1, 64, 58, 58), dtype="float32")
    w = rng.random((64, 64, 3, 3), dtype="float32")
    y = np.zeros((1, 64, 56, 56), "float32")
    auto = ts.build(ops.conv2d_nchw(1, 64, 58, 58, 64), target="c")

    def numpy_conv():  # im2col + one BLAS GEMM
        cols = np.stack([x[0, :, ky:ky + 56, kx:kx + 56] for ky in range(3) for kx in range(3)],
                        axis=1).reshape(64 * 9, 56 * 56)
        return (w.reshape(64, 64 * 9) @ cols).reshape(1, 64, 56, 56)

    t = tessera_time(auto, (x, w, y))
    np.testing.assert_allclose(y, numpy_conv(), rtol=1e-3)
    ref = best(numpy_conv)
    if cpu_timer():  # interleaved with the reference, thread CPU time
        t, ref = interleaved_min([lambda: auto(x, w, y), numpy_conv])
    # The hand schedule of bench_cpu.py works on NCHW16c data (same FLOPs).
    xc = rng.random((1, 4, 58, 58, 16), dtype="float32")
    wc = rng.random((4, 4, 3, 3, 16, 16), dtype="float32")
    yc = np.zeros((1, 4, 56, 56, 16), "float32")
    hand = ts.build(K.schedule_conv2d_nchwc((1, 4, 58, 58, 16, 4, 16), parallel=threads > 1),
                    target="c")
    th = tessera_time(hand, (xc, wc, yc))
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, th, ref = interleaved_wall_min([lambda: auto(x, w, y), lambda: hand(xc, wc, yc),
                                           numpy_conv])

    def tvm_conv(tir, te):
        X = te.placeholder((1, 64, 58, 58), name="X")
        W = te.placeholder((64, 64, 3, 3), name="W")
        rc, ry, rx = (te.reduce_axis((0, e), name=nm) for e, nm in ((64, "rc"), (3, "ry"), (3, "rx")))
        Y = te.compute((1, 64, 56, 56), lambda b, o, i, j: te.sum(
            X[b, rc, i + ry, j + rx] * W[o, rc, ry, rx], axis=[rc, ry, rx]), name="Y")
        return [X, W, Y]

    tt, why = tvm_time(tvm_conv, (x, w, y), repeat=1) if threads == 1 else (None, "one-thread run only")
    fl = 2.0 * 56 * 56 * 64 * 64 * 9
    g = lambda s: fl / s / 1e9 if s else None
    rows = []
    add_refs(rows, "conv2d", "conv2d 3x3 NCHW 64->64 56x56", threads, g(t), "GFLOP/s",
             [("numpy im2col+BLAS", g(ref), None), ("hand schedule (NCHW16c)", g(th), None),
              ("TVM default", g(tt), why)])
    return rows


def bench_softmax(threads, quick):
    import cpu_kernels as K
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import best, cpu_timer, interleaved_min, interleaved_wall_min, tessera_time

    rows_, cols = (1024, 1024) if quick else (4096, 1024)
    rng = np.random.default_rng(0)
    x = rng.random((rows_, cols), dtype="float32")
    y = np.empty_like(x)
    auto = ts.build(ops.softmax(rows_, cols), target="c")

    def numpy_softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    t = tessera_time(auto, (x, y))
    np.testing.assert_allclose(y, numpy_softmax(), rtol=1e-5)
    hand = ts.build(K.schedule_softmax(rows_, cols, parallel=threads > 1), target="c")
    th = tessera_time(hand, (x, y))
    ref = best(numpy_softmax)
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, th, ref = interleaved_wall_min([lambda: auto(x, y), lambda: hand(x, y), numpy_softmax])
    elif cpu_timer():  # interleaved with the reference, thread CPU time
        t, ref = interleaved_min([lambda: auto(x, y), numpy_softmax])

    def tvm_softmax(tir, te):
        A = te.placeholder((rows_, cols), name="A")
        k = te.reduce_axis((0, cols), name="k")
        mx = te.compute((rows_,), lambda i: te.max(A[i, k], axis=k), name="max")
        E = te.compute((rows_, cols), lambda i, j: tir.exp(A[i, j] - mx[i]), name="exp")
        k2 = te.reduce_axis((0, cols), name="k2")
        s = te.compute((rows_,), lambda i: te.sum(E[i, k2], axis=k2), name="sum")
        S = te.compute((rows_, cols), lambda i, j: E[i, j] / s[i], name="out")
        return [A, S]

    tt, why = tvm_time(tvm_softmax, (x, y)) if threads == 1 else (None, "one-thread run only")
    ms = lambda s: s * 1e3 if s else None
    rows = []
    add_refs(rows, "softmax", f"softmax rows ({rows_},{cols})", threads, ms(t), "ms",
             [("numpy", ms(ref), None), ("hand schedule", ms(th), None),
              ("TVM default", ms(tt), why)], higher_is_better=False)
    return rows


def bench_column_sum(threads, quick):
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import best, cpu_timer, interleaved_min, interleaved_wall_min, tessera_time

    rows_, cols = (1024, 1024) if quick else (4096, 4096)
    x = np.random.default_rng(0).random((rows_, cols), dtype="float32")
    y = np.empty(cols, "float32")
    auto = ts.build(ops.column_sum(rows_, cols), target="c")
    t = tessera_time(auto, (x, y))
    np.testing.assert_allclose(y, x.sum(0), rtol=1e-4)
    ref = best(lambda: x.sum(axis=0, out=y))
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, ref = interleaved_wall_min([lambda: auto(x, y), lambda: x.sum(axis=0, out=y)])
    elif cpu_timer():  # interleaved with the reference, thread CPU time
        t, ref = interleaved_min([lambda: auto(x, y), lambda: x.sum(axis=0, out=y)])
    ms = lambda s: s * 1e3 if s else None  # noqa: E731
    rows = []
    add_refs(rows, "column_sum", f"column sums ({rows_},{cols})", threads, ms(t), "ms",
             [("numpy", ms(ref), None)], higher_is_better=False)
    return rows


def bench_layer_norm(threads, quick):
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import best, cpu_timer, interleaved_min, interleaved_wall_min, tessera_time

    rows_, cols = (1024, 1024) if quick else (4096, 1024)
    rng = np.random.default_rng(0)
    x = rng.random((rows_, cols), dtype="float32")
    g, b = rng.random(cols, dtype="float32"), rng.random(cols, dtype="float32")
    y = np.empty_like(x)
    auto = ts.build(ops.layer_norm(rows_, cols), target="c")

    def numpy_ln():
        m = x.mean(1, keepdims=True)
        return (x - m) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b

    t = tessera_time(auto, (x, g, b, y))
    np.testing.assert_allclose(y, numpy_ln(), rtol=1e-3, atol=1e-4)
    ref = best(numpy_ln)
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, ref = interleaved_wall_min([lambda: auto(x, g, b, y), numpy_ln])
    elif cpu_timer():  # interleaved with the reference, thread CPU time
        t, ref = interleaved_min([lambda: auto(x, g, b, y), numpy_ln])

    def tvm_ln(tir, te):
        A = te.placeholder((rows_, cols), name="A")
        G = te.placeholder((cols,), name="G")
        Bt = te.placeholder((cols,), name="B")
        k = te.reduce_axis((0, cols), name="k")
        s = te.compute((rows_,), lambda i: te.sum(A[i, k], axis=k), name="sum")
        mean = te.compute((rows_,), lambda i: s[i] / float(cols), name="mean")
        k2 = te.reduce_axis((0, cols), name="k2")
        sq = te.compute((rows_,), lambda i: te.sum((A[i, k2] - mean[i]) * (A[i, k2] - mean[i]),
                                                   axis=k2), name="sq")
        inv = te.compute((rows_,), lambda i: 1.0 / tir.sqrt(sq[i] / float(cols) + 1e-5),
                         name="inv")
        out = te.compute((rows_, cols), lambda i, j: (A[i, j] - mean[i]) * inv[i] * G[j] + Bt[j],
                         name="out")
        return [A, G, Bt, out]

    tt, why = tvm_time(tvm_ln, (x, g, b, y)) if threads == 1 else (None, "one-thread run only")
    ms = lambda s: s * 1e3 if s else None
    rows = []
    add_refs(rows, "layer_norm", f"layer_norm rows ({rows_},{cols})", threads, ms(t), "ms",
             [("numpy", ms(ref), None), ("TVM default", ms(tt), why)], higher_is_better=False)
    return rows


def bench_elementwise(threads, quick):
    import numpy as np
    import ops
    import tessera as ts
    from bench_cpu import aligned, best, interleaved_wall_min, tessera_time

    n = (1 << 22) if quick else (1 << 24)
    rng = np.random.default_rng(0)
    a, b, c = (aligned(n, fill=rng.random(n, dtype="float32")) for _ in range(3))
    d = aligned(n)
    auto = ts.build(ops.elementwise_chain((n,)), target="c")
    t = tessera_time(auto, (a, b, c, d), repeat=7)
    np.testing.assert_allclose(d, np.maximum(a * b + c, 0) * 0.5, rtol=1e-6)
    src, dst = aligned(n, fill=1.0), aligned(n)
    copy = best(lambda: np.copyto(dst, src), repeat=7)

    def numpy_chain():
        np.multiply(a, b, out=d)
        np.add(d, c, out=d)
        np.maximum(d, 0, out=d)
        np.multiply(d, 0.5, out=d)

    ref = best(numpy_chain, repeat=7)
    if threads > 1:  # wall clock, interleaved rounds (see interleaved_wall_min)
        t, ref, copy = interleaved_wall_min([lambda: auto(a, b, c, d), numpy_chain,
                                             lambda: np.copyto(dst, src)])

    def tvm_chain(tir, te):
        A, B, C = (te.placeholder((n,), name=nm) for nm in "ABC")
        T1 = te.compute((n,), lambda i: A[i] * B[i], name="mul")
        T2 = te.compute((n,), lambda i: T1[i] + C[i], name="add")
        T3 = te.compute((n,), lambda i: tir.max(T2[i], 0.0), name="relu")
        D = te.compute((n,), lambda i: T3[i] * 0.5, name="scale")
        return [A, B, C, D]

    tt, why = tvm_time(tvm_chain, (a, b, c, d)) if threads == 1 else (None, "one-thread run only")
    moved = 16.0 * n  # three arrays read, one written
    gbs = lambda s: moved / s / 1e9 if s else None
    rows = []
    add_refs(rows, "elementwise", f"relu(a*b+c)*0.5, {n >> 20}M fp32", threads, gbs(t), "GB/s",
             [("memcpy bandwidth", 8.0 * n / copy / 1e9, None), ("numpy (out=)", gbs(ref), None),
              ("TVM default", gbs(tt), why)])
    return rows


def bench_schedule_time(threads, quick):
    import ops
    import tessera as ts

    f = ops.matmul(1024, 1024, 1024)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        ts.autoschedule(f, target="c")
        times.append(time.perf_counter() - t0)
    return [row("schedule_time", "autoschedule(matmul 1024^3)", threads, min(times) * 1e3, "ms",
                "limit of the issue", 100.0, higher_is_better=False, target=1.0)]


COMPUTE = {"gemm": bench_gemm, "batch_matmul": bench_batch_matmul, "conv2d": bench_conv2d,
           "softmax": bench_softmax, "layer_norm": bench_layer_norm,
           "column_sum": bench_column_sum, "elementwise": bench_elementwise, "schedule_time": bench_schedule_time}


# ------------------------------------------------------------------------------------- driver

def child(names, threads, quick):
    _setup()
    rows = []
    for name in names:
        rows += COMPUTE[name](threads, quick)
    print("ROWS " + json.dumps(rows))


def run_child(names, threads, quick):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, os.path.abspath(__file__), "--child", ",".join(names),
           "--threads", str(threads)] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError("benchmark child failed:\n" + out.stdout + out.stderr)
    for line in out.stdout.splitlines():
        if line.startswith("ROWS "):
            return json.loads(line[5:])
    raise RuntimeError("benchmark child printed no rows:\n" + out.stdout)


def fmt(v):
    return f"{v:>10.2f}" if isinstance(v, (int, float)) else f"{'n/a':>10}"


def print_table(rows, load):
    head = (f"{'benchmark':40} {'thr':>3} {'tessera':>10} {'unit':8} {'reference':40} {'ref':>10} "
            f"{'ratio':>6} {'target':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio = f"{r['ratio']:>6.2f}" if r["ratio"] is not None else f"{'-':>6}"
        target = ""
        if r["target"] is not None and r["ratio"] is not None:
            target = f">={r['target']:.1f} " + ("ok" if r["ratio"] >= r["target"] else "MISS")
        print(f"{r['name'][:40]:40} {r['threads']:>3} {fmt(r['value'])} {r['unit']:8} "
              f"{r['ref'][:40]:40} {fmt(r['ref_value'])} {ratio} {target:>7}")
    print("ratio > 1: tessera (automatic schedule) better than the reference (speed, or 1/time)")
    wait = os.environ.get("OMP_WAIT_POLICY", "tessera's bounded spin")
    if os.environ.get("BENCH_TIMER") == "cpu":
        print("timer: thread CPU time (time.thread_time), best of 15+ repeats, one thread")
    if any(r["threads"] > 1 for r in rows):
        print("more than one thread: wall clock, tessera, the hand schedule and the reference "
              "timed in turn over 15 rounds of 3 calls (bench_cpu.interleaved_wall_min)")
    print(f"load average before / after: {load[0]} / {load[1]}; cpus: {os.cpu_count()}; "
          f"OpenMP wait policy: {wait}")
    _, why = tvm_or_reason()
    if why:
        print(f"Apache TVM: {why}; pip install -r bench/requirements.txt")


def save_plot(rows, path):
    from bench_plot import save_ratio_bars

    save_ratio_bars(rows, path, 'tessera with no schedule: same-run references', 'tessera automatic schedule / reference (higher is better, log scale)', log=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(ALL), help="comma-separated subset of " + ",".join(ALL))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=0, help="0: one thread and all threads")
    ap.add_argument("--plot", default=os.path.join(HERE, "auto.png"))
    ap.add_argument("--json", default="", help="also write the rows to this file")
    ap.add_argument("--timer", choices=("wall", "cpu"), default=os.environ.get("BENCH_TIMER", "wall"),
                    help="cpu: thread CPU time, best of 15+ (stable on a shared machine; one "
                         "thread only)")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child.split(","), args.threads, args.quick)
        return
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in ALL:
            ap.error(f"unknown benchmark '{n}'; known: {', '.join(ALL)}")
    load0 = os.getloadavg()
    rows = []
    os.environ["BENCH_TIMER"] = args.timer  # the children inherit it
    counts = [args.threads] if args.threads else sorted({1, os.cpu_count() or 1})
    if args.timer == "cpu":
        counts = [1]
    for threads in counts:
        todo = [n for n in names if n != "schedule_time" or threads == counts[0]]
        rows += run_child(todo, threads, args.quick)
    print_table(rows, (f"{load0[0]:.2f}", f"{os.getloadavg()[0]:.2f}"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.plot:
        save_plot(rows, args.plot)


if __name__ == "__main__":
    main()
