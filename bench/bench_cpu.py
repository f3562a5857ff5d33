"""CPU benchmark suite: every tessera figure beside its reference measured in the same run.

    PYTHONPATH=python python bench/bench_cpu.py            # everything, table + bench/cpu.png
    PYTHONPATH=python python bench/bench_cpu.py --quick    # smaller sizes, fewer repeats
    PYTHONPATH=python python bench/bench_cpu.py --only gemm,fma

The thread count of a run is fixed when OpenMP and OpenBLAS start, so the compute benchmarks run
in child processes, one per thread count, with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set
(numpy's BLAS and tessera's OpenMP loops then use the same number of threads). Each figure is
the best of several repeats; the load average is printed with the table because the machine may
be shared. OpenMP threads wait passively (OMP_WAIT_POLICY=passive unless set). The plot needs
matplotlib (pip install -r bench/requirements.txt) and is skipped without it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ALL = ("gemm", "batch_matmul", "fma", "softmax", "conv2d", "build", "import")


def cpu_timer():
    """Whether BENCH_TIMER=cpu asks for thread CPU time instead of wall-clock time: on a shared
    machine, the time the calling thread itself ran (``time.thread_time``) does not count the
    time other processes took the core, so the best of many repeats is stable under load. Only
    meaningful with one thread (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1), where all the work
    runs on the calling thread."""
    return os.environ.get("BENCH_TIMER", "wall") == "cpu"


def best(fn, repeat=5, number=1):
    """The best time per call (seconds) over ``repeat`` runs of ``number`` calls."""
    fn()
    clock = time.thread_time if cpu_timer() else time.perf_counter
    repeat = max(repeat, 15) if cpu_timer() else repeat
    times = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            fn()
        times.append((clock() - t0) / number)
    return min(times)


def interleaved_min(fns, rounds=20):
    """With BENCH_TIMER=cpu: the functions timed in turn, ``rounds`` times, and the least thread
    CPU time of each; a phase of contention on the shared machine then hits every function
    alike instead of the one measured at that moment."""
    for fn in fns:
        fn()
    times = [float("inf")] * len(fns)
    # Every other round in the reverse order: a call runs slower right after another that
    # allocates and writes a fresh output (numpy's), by up to 10-25% on a loaded Zen 4
    # (bench/RESULTS.md, session 16); alternating gives each function both places.
    for r in range(rounds):
        order = list(enumerate(fns)) if r % 2 == 0 else list(enumerate(fns))[::-1]
        for k, fn in order:
            t0 = time.thread_time()
            fn()
            times[k] = min(times[k], time.thread_time() - t0)
    return times


def interleaved_wall_min(fns, rounds=15, calls=3, pause=0.12):
    """Wall-clock seconds per call of multi-thread functions, the least over ``rounds`` rounds in
    which each function runs ``calls`` times in turn: every function is sampled across the whole
    run, so a phase in which another process holds a core hits each alike (the best of one
    function's burst of 15 calls, then the next function's, compared two different moments of
    a shared machine: the automatic conv2d read 43-218 GFLOP/s and the hand schedule 36-131 in
    four runs at load 3). Each round starts after ``pause`` seconds, so that the idle threads of
    an earlier numpy BLAS call have stopped spinning (OpenBLAS's spin for ~0.1 s; a 2-thread
    convolution right after a BLAS call read a median of 10 ms against 2.8); put the functions
    that call BLAS last. The first call of a burst wakes the OpenMP threads: the least of the
    burst is a warm call."""
    for fn in fns:
        fn()
    times = [float("inf")] * len(fns)
    for _ in range(rounds):
        time.sleep(pause)
        for k, fn in enumerate(fns):
            for _ in range(calls):
                t0 = time.perf_counter()
                fn()
                times[k] = min(times[k], time.perf_counter() - t0)
    return times


def tessera_time(lib, args, repeat=5, number=3):
    import tessera as ts

    if cpu_timer():
        f = lib[lib.function_names[0]]
        return best(lambda: f(*args), repeat=repeat * number)
    time.sleep(0.3)  # idle threads of an earlier numpy BLAS call stop spinning first

    timer = lib.time_evaluator(lib.function_names[0], ts.cpu(), number=number, repeat=repeat)
    return min(timer(*args).results)


def aligned(shape, dtype="float32", align=64, fill=None):
    """A numpy array whose data starts on an ``align``-byte boundary (as ts.nd arrays do)."""
    import numpy as np

    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.empty(n * dt.itemsize + align, np.uint8)
    off = (-raw.ctypes.data) % align
    arr = raw[off:off + n * dt.itemsize].view(dt).reshape(shape)
    if fill is not None:
        arr[...] = fill
    return arr


def row(name, threads, value, unit, ref_name, ref_value, higher_is_better=True):
    ratio = value / ref_value if higher_is_better else ref_value / value
    return {"name": name, "threads": threads, "value": value, "unit": unit, "ref": ref_name,
            "ref_value": ref_value, "ratio": ratio}


# ----------------------------------------------------------------- compute (in a child process)

def bench_gemm(threads, quick):
    import numpy as np
    import tessera as ts
    import cpu_kernels as K

    rows = []
    rng = np.random.default_rng(0)
    for n in ((512, 1024) if quick else (512, 1024, 2048)):
        a = rng.random((n, n), dtype="float32")
        b = rng.random((n, n), dtype="float32")
        c = np.zeros((n, n), "float32")
        lib = ts.build(K.schedule_matmul(n, parallel=threads > 1), target="c")
        # tessera is timed before numpy's BLAS first runs: OpenBLAS's idle threads spin for a
        # while after a call and would take the cores from the OpenMP threads.
        rep = 3 if n >= 2048 else 5
        t = tessera_time(lib, (a, b, c), repeat=rep)
        np.testing.assert_allclose(c, a @ b, rtol=1e-3)
        ref = best(lambda: np.matmul(a, b, out=c), repeat=rep)
        flops = 2.0 * n ** 3
        rows.append(row(f"gemm fp32 {n}^3", threads, flops / t / 1e9, "GFLOP/s",
                        "numpy BLAS", flops / ref / 1e9))
    return rows


def bench_batch_matmul(threads, quick):
    import numpy as np
    import tessera as ts
    import cpu_kernels as K

    sa, sb = (32, 12, 128, 128), (32, 12, 128, 64)
    rng = np.random.default_rng(0)
    a, b = rng.random(sa, dtype="float32"), rng.random(sb, dtype="float32")
    c = np.zeros(sa[:3] + sb[3:], "float32")
    lib = ts.build(K.schedule_batch_matmul(sa, sb, parallel=threads > 1), target="c")
    t = tessera_time(lib, (a, b, c))  # before numpy's BLAS runs (see bench_gemm)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    ref = best(lambda: np.matmul(a, b, out=c))
    flops = 2.0 * 32 * 12 * 128 * 128 * 64
    return [row("batch_matmul (32,12,128,128)x(..,128,64)", threads, flops / t / 1e9, "GFLOP/s",
                "numpy matmul", flops / ref / 1e9)]


def bench_fma(threads, quick):
    import numpy as np
    import tessera as ts
    import cpu_kernels as K

    n = (1 << 22) if quick else (1 << 24)
    rng = np.random.default_rng(0)
    a, b, c = (aligned(n, fill=rng.random(n, dtype="float32")) for _ in range(3))
    d = aligned(n)
    lib = ts.build(K.schedule_fma(n, parallel=threads > 1), target="c")
    lib(a, b, c, d)
    np.testing.assert_allclose(d, a * b + c, rtol=1e-6)
    t = tessera_time(lib, (a, b, c, d), repeat=7)
    # numpy without temporaries' allocation (out=): the harder reference.
    ref = best(lambda: np.add(np.multiply(a, b, out=d), c, out=d), repeat=7)
    ref_expr = best(lambda: a * b + c, repeat=7)
    # memcpy bandwidth: bytes read + written per second by a 64 MiB copy.
    src, dst = aligned(n, fill=1.0), aligned(n)
    copy = best(lambda: np.copyto(dst, src), repeat=7)
    moved = 16.0 * n  # three arrays read, one written
    gbs = moved / t / 1e9
    label = f"fused a*b+c, {n >> 20}M fp32"
    return [row(label, threads, gbs, "GB/s", "numpy (out=)", moved / ref / 1e9),
            row(label, threads, gbs, "GB/s", "numpy a*b+c", moved / ref_expr / 1e9),
            row(label, threads, gbs, "GB/s", "memcpy bandwidth", 8.0 * n / copy / 1e9)]


def bench_softmax(threads, quick):
    import numpy as np
    import tessera as ts
    import cpu_kernels as K

    rows_, cols = (1024, 1024) if quick else (4096, 1024)
    rng = np.random.default_rng(0)
    x = rng.random((rows_, cols), dtype="float32")
    y = np.empty_like(x)
    lib = ts.build(K.schedule_softmax(rows_, cols, parallel=threads > 1), target="c")
    lib(x, y)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5)

    def numpy_softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    t = tessera_time(lib, (x, y))
    ref = best(numpy_softmax)
    return [row(f"softmax rows ({rows_},{cols})", threads, t * 1e3, "ms", "numpy", ref * 1e3,
                higher_is_better=False)]


def bench_conv2d(threads, quick):
    import numpy as np
    import tessera as ts
    import cpu_kernels as K

    shape = (1, 4, 58, 58, 16, 4, 16)  # 64 -> 64 channels, 56x56 output
    rng = np.random.default_rng(0)
    x = rng.random((1, 4, 58, 58, 16), dtype="float32")
    w = rng.random((4, 4, 3, 3, 16, 16), dtype="float32")
    y = np.zeros((1, 4, 56, 56, 16), "float32")
    lib = ts.build(K.schedule_conv2d_nchwc(shape, parallel=threads > 1), target="c")
    lib(x, w, y)

    # Reference: im2col + one BLAS GEMM in numpy.
    def numpy_conv():
        cols = np.stack([x[0, :, ky:ky + 56, kx:kx + 56, :] for ky in range(3) for kx in range(3)],
                        axis=1)  # (ic_o, 9, 56, 56, ic_i)
        cols = cols.transpose(2, 3, 0, 1, 4).reshape(56 * 56, 4 * 9 * 16)
        wm = w.reshape(4, 4, 9, 16, 16).transpose(1, 2, 3, 0, 4).reshape(4 * 9 * 16, 64)
        return (cols @ wm).reshape(56, 56, 4, 16).transpose(2, 0, 1, 3)[None]

    t = tessera_time(lib, (x, w, y))  # before numpy's BLAS runs (see bench_gemm)
    np.testing.assert_allclose(y, numpy_conv(), rtol=1e-4)
    ref = best(numpy_conv)
    flops = 2.0 * 56 * 56 * 64 * 64 * 9
    return [row("conv2d 3x3 NCHW16c 64->64 56x56", threads, flops / t / 1e9, "GFLOP/s",
                "numpy im2col+BLAS", flops / ref / 1e9)]


COMPUTE = {"gemm": bench_gemm, "batch_matmul": bench_batch_matmul, "fma": bench_fma,
           "softmax": bench_softmax, "conv2d": bench_conv2d}


# ----------------------------------------------------------- build and import (parent process)

def bench_build(quick):
    import numpy as np
    import tessera as ts
    import cpu_kernels as K

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        def cold():
            os.environ["TESSERA_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
            ts.build(K.schedule_fma(1024, parallel=False), target="c")

        cold_t = best(cold, repeat=3 if quick else 5)
        os.environ["TESSERA_CACHE_DIR"] = os.path.join(tmp, "warm")
        mod = K.schedule_fma(1024, parallel=False)
        ts.build(mod, target="c")
        cached_t = best(lambda: ts.build(mod, target="c"), repeat=20)
        src = os.path.join(tmp, "empty.c")
        with open(src, "w") as f:
            f.write("int tessera_bench_empty(void) { return 0; }\n")
        cc_t = best(lambda: subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", src + ".so"],
                                           check=True), repeat=5)
        schedule_t = best(lambda: K.schedule_fma(1024, parallel=False), repeat=5)
    del np
    rows.append(row("build small kernel, cold", 1, cold_t * 1e3, "ms", "cc -O2 of an empty .so",
                    cc_t * 1e3, higher_is_better=False))
    rows.append(row("build small kernel, cached", 1, cached_t * 1e3, "ms",
                    "parse + schedule (not built)", schedule_t * 1e3, higher_is_better=False))
    return rows


def bench_import(quick):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))

    def run(code):
        return lambda: subprocess.run([sys.executable, "-c", code], check=True, env=env)

    t = best(run("import tessera"), repeat=5)
    bare = best(run("pass"), repeat=5)
    numpy_t = best(run("import numpy"), repeat=5)
    return [row("import tessera (process)", 1, t * 1e3, "ms", "python -c pass", bare * 1e3,
                higher_is_better=False),
            row("import tessera (process)", 1, t * 1e3, "ms", "import numpy", numpy_t * 1e3,
                higher_is_better=False)]


# ------------------------------------------------------------------------------------- driver

def child(names, threads, quick):
    sys.path.insert(0, HERE)
    rows = []
    for name in names:
        rows += COMPUTE[name](threads, quick)
    print("ROWS " + json.dumps(rows))


def run_child(names, threads, quick):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONPATH=os.path.join(ROOT, "python"))
    # libgomp's idle threads spin by default; on a shared (oversubscribed) machine the spinning
    # takes the cores from the threads that work (measured: conv2d 2 threads 21 -> 83 GFLOP/s).
    env.setdefault("OMP_WAIT_POLICY", "passive")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", ",".join(names),
           "--threads", str(threads)] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("ROWS "):
            return json.loads(line[5:])
    raise RuntimeError("benchmark child printed no rows:\n" + out)


def print_table(rows, load):
    head = f"{'benchmark':42} {'thr':>3} {'tessera':>10} {'unit':8} {'reference':30} {'ref':>10} {'ratio':>6}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['name']:42} {r['threads']:>3} {r['value']:>10.2f} {r['unit']:8} {r['ref']:30} "
              f"{r['ref_value']:>10.2f} {r['ratio']:>6.2f}")
    print("ratio > 1: tessera better than the reference (speed, or 1/time for ms rows)")
    print(f"load average before / after: {load[0]} / {load[1]}; cpus: {os.cpu_count()}")


def save_plot(rows, path):
    from bench_plot import save_ratio_bars

    save_ratio_bars(rows, path, 'tessera CPU benchmarks (same-run references)', 'tessera / reference (higher is better)', log=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(ALL), help="comma-separated subset of " + ",".join(ALL))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=0, help="0: one thread and all threads")
    ap.add_argument("--plot", default=os.path.join(HERE, "cpu.png"))
    ap.add_argument("--json", default="", help="also write the rows to this file")
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
    compute = [n for n in names if n in COMPUTE]
    if compute:
        counts = [args.threads] if args.threads else sorted({1, os.cpu_count() or 1})
        for threads in counts:
            rows += run_child(compute, threads, args.quick)
    sys.path.insert(0, HERE)
    if "build" in names:
        rows += bench_build(args.quick)
    if "import" in names:
        rows += bench_import(args.quick)
    print_table(rows, (f"{load0[0]:.2f}", f"{os.getloadavg()[0]:.2f}"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.plot:
        save_plot(rows, args.plot)


if __name__ == "__main__":
    main()
