"""Tuning benchmark: tessera.tune on matmul, batch_matmul and conv2d, beside numpy's BLAS, our
hand schedules and Apache TVM's meta-schedule with the same trial budget (pip package
apache-tvm), measured in the same run, with the wall-clock tuning time of both.

    PYTHONPATH=python .venv/bin/python bench/bench_tune.py --trials 256
    TVM_PYTHON=/path/to/venv-with-apache-tvm/bin/python ... (TVM's meta-schedule beside it)

TVM's venv: apache-tvm 0.26.0 with apache-tvm-ffi 0.1.14.post1 (pip's default pairing with
apache-tvm-ffi 0.1.15.post2 segfaults in tvm::ffi::ToJSONGraph, i.e. tvm.ir.save_json of any
IRModule, which meta-schedule calls when it starts a task; apache-tvm 0.25.0.post1 does not
load with either ffi release), plus psutil, cloudpickle, tornado and xgboost for meta-schedule.
TVM's tuning time starts after its tensor intrinsics are imported in the main process
(tvm.s_tir.tensor_intrin parses every target's intrinsics: about a minute of CPU, minutes on a
loaded machine); meta-schedule's builder and runner processes import them again as their pools'
initializer, inside the tuning time but outside each job's timeout. apache-tvm 0.26.0 parses
TVMScript as TIRx unless told s_tir (meta-schedule needs the s_tir form). When meta-schedule
fails, the table's note gives the exception line and bench/tvm_error.log the whole output.
tessera.tune re-measures its fastest candidates and the automatic schedule at the end and picks
by the re-measurement (its tuning time includes that). On a shared machine use --timer cpu.
    ... --only matmul --threads 1 --skip-tvm --quick

Final timing: with --timer cpu, one thread in thread CPU time, tessera's libraries and numpy
interleaved in one process; otherwise (and always for several threads) wall clock, each library
and numpy in a child process of its own, the children in turn for 5 rounds, each the least time
of one call over all its calls (min of many for every column). numpy writes into a preallocated
output (np.matmul(a, b, out=c)), as tessera's functions do.
The acceptance run for issue 17 on a quiet 2-core machine (about 13 minutes, TVM included):
    TVM_PYTHON=<venv with apache-tvm> PYTHONPATH=python .venv/bin/python bench/bench_tune.py \
        --only matmul --trials 40 --timer cpu

Prints a table and saves bench/tune.png (the best time against trials for each workload).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tessera as ts  # noqa: E402
from tessera import te  # noqa: E402

import cpu_kernels as ck  # noqa: E402


def conv2d_func(n, c, h, w, f, k):
    X = te.placeholder((n, c, h + k - 1, w + k - 1), "float32", name="X")
    W = te.placeholder((f, c, k, k), "float32", name="W")
    rc = te.reduce_axis((0, c), name="rc")
    rh = te.reduce_axis((0, k), name="rh")
    rw = te.reduce_axis((0, k), name="rw")
    Y = te.compute((n, f, h, w), lambda b, o, y, x: te.sum(X[b, rc, y + rh, x + rw] * W[o, rc, rh, rw],
                                                           axis=[rc, rh, rw]), name="Y")
    return te.create_prim_func([X, W, Y]), X, W, Y


def workloads(quick):
    n = 256 if quick else 1024
    bm = (4, 4, 64, 64, 32) if quick else (32, 12, 128, 128, 64)
    cv = (1, 16, 28, 28, 16, 3) if quick else (1, 64, 56, 56, 64, 3)
    b, h, m, k, nn = bm
    conv, *_ = conv2d_func(*cv)
    return {
        "matmul": dict(func=ck.matmul_func(n), flops=2.0 * n ** 3, label=f"matmul {n}^3",
                       numpy=f"np.matmul(a, b, out=c) with a, b, c of {n}x{n}",
                       np_setup=f"a=np.random.rand({n},{n}).astype('float32'); b=np.random.rand({n},{n}).astype('float32'); "
                                f"c=np.empty(({n},{n}), 'float32')",
                       np_stmt="np.matmul(a, b, out=c)", hand=lambda p: ck.schedule_matmul(n, parallel=p)),
        "batch_matmul": dict(func=ck.batch_matmul_func(b, h, m, k, nn), flops=2.0 * b * h * m * k * nn,
                             label=f"batch_matmul {bm}", numpy="np.matmul(a, b, out=c)",
                             np_setup=f"a=np.random.rand({b},{h},{m},{k}).astype('float32'); "
                                      f"b=np.random.rand({b},{h},{k},{nn}).astype('float32'); "
                                      f"c=np.empty(({b},{h},{m},{nn}), 'float32')",
                             np_stmt="np.matmul(a, b, out=c)",
                             hand=lambda p: ck.schedule_batch_matmul((b, h, m, k), (b, h, k, nn), parallel=p)),
        "conv2d": dict(func=conv, flops=2.0 * cv[0] * cv[4] * cv[2] * cv[3] * cv[1] * cv[5] ** 2,
                       label=f"conv2d NCHW {cv}", numpy="im2col + BLAS",
                       np_setup=_conv_setup(cv), np_stmt="conv()", hand=None),
    }


def _conv_setup(cv):
    n, c, h, w, f, k = cv
    return (f"from numpy.lib.stride_tricks import sliding_window_view as sw\n"
            f"x=np.random.rand({n},{c},{h + k - 1},{w + k - 1}).astype('float32')\n"
            f"wt=np.random.rand({f},{c},{k},{k}).astype('float32').reshape({f},-1)\n"
            f"def conv():\n"
            f"    cols = sw(x, ({k},{k}), axis=(2,3)).transpose(0,2,3,1,4,5).reshape({n}*{h}*{w}, -1)\n"
            f"    return (cols @ wt.T)\n")


def _shapes(func):
    shapes = []
    for p in func.params:
        buf = next(b for v, b in func.buffer_map if v.same_as(p))
        shapes.append([int(s.value) for s in buf.shape])
    return shapes


# A child that times one callable: the least wall time of single calls, over at least 10 calls
# and about half a second (the same statistic for tessera and numpy).
_MIN_OF_CALLS = ("import time\n"
                 "fn(); fn()\n"
                 "best, n, end = float('inf'), 0, time.perf_counter() + 0.5\n"
                 "while n < 10 or time.perf_counter() < end:\n"
                 "    t0 = time.perf_counter(); fn(); best = min(best, time.perf_counter() - t0); n += 1\n"
                 "print(best)\n")


def alternating_wall_seconds(mods, func, np_setup, np_stmt, threads, rounds=5):
    """Wall clock on ``threads`` threads: each library of ``mods`` and the numpy statement timed
    in a child process of its own (tessera's OpenMP threads and OpenBLAS's threads never share
    one), the children run in turn for ``rounds`` rounds so that load drifting over time hits
    all alike; each entry is the least time of one call over all its rounds (min of many, the
    same statistic for every entry). Returns the seconds of each module, then numpy's."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    shapes = _shapes(func)
    with tempfile.TemporaryDirectory() as tmp:
        codes = []
        for k, mod in enumerate(mods):
            path = os.path.join(tmp, f"lib{k}.so")
            ts.build(mod).export_library(path)
            codes.append("import numpy as np, tessera as ts\n"
                         f"lib = ts.runtime.load_module({path!r})\n"
                         f"args = [np.random.rand(*s).astype('float32') for s in {shapes!r}]\n"
                         "fn = (lambda f=lib[lib.entry_name]: f(*args))\n" + _MIN_OF_CALLS)
        codes.append(f"import numpy as np\n{np_setup}\nfn = lambda: {np_stmt}\n" + _MIN_OF_CALLS)
        best = [float("inf")] * len(codes)
        for _ in range(rounds):
            for k, code in enumerate(codes):
                out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                     text=True, timeout=600)
                if out.returncode != 0:
                    raise RuntimeError(out.stderr)
                best[k] = min(best[k], float(out.stdout.strip().splitlines()[-1]))
        return best


def interleaved_cpu_seconds(mods, func, np_setup, np_stmt):
    """One thread: the libraries of ``mods`` and the numpy statement timed in turn in one child
    process (OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1), each the least thread CPU time
    (time.thread_time) of 20 rounds, so that load on a shared machine hits all of them alike.
    Returns the seconds of each module, then numpy's."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    shapes = _shapes(func)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, mod in enumerate(mods):
            paths.append(os.path.join(tmp, f"lib{k}.so"))
            ts.build(mod).export_library(paths[-1])
        code = (f"import time, numpy as np, tessera as ts\n{np_setup}\n"
                f"libs = [ts.runtime.load_module(p) for p in {paths!r}]\n"
                f"args = [np.random.rand(*s).astype('float32') for s in {shapes!r}]\n"
                "fns = [(lambda f=lib[lib.entry_name]: f(*args)) for lib in libs]\n"
                f"fns.append(lambda: {np_stmt})\n"
                "for fn in fns: fn()\n"
                "best = [float('inf')] * len(fns)\n"
                "for _ in range(20):\n"
                "    for k, fn in enumerate(fns):\n"
                "        t0 = time.thread_time(); fn(); best[k] = min(best[k], time.thread_time() - t0)\n"
                "print(' '.join(map(str, best)))\n")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1200)
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        return [float(x) for x in out.stdout.strip().splitlines()[-1].split()]


def _failure_text(out):
    """The error of a failed child: the exception line of its traceback (TVM prints its error
    to stderr, and to stdout only a note on TVM_BACKTRACE), else the last lines it wrote; the
    whole output is saved beside the benchmark (bench/tvm_error.log)."""
    text = (out.stderr or "") + (out.stdout or "")
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.startswith("note:")]
    log = os.path.join(HERE, "tvm_error.log")
    try:
        with open(log, "w") as f:
            f.write(f"exit status {out.returncode}\n--- stderr ---\n{out.stderr}\n--- stdout ---\n{out.stdout}\n")
    except OSError:
        log = None
    errors = [ln for ln in lines if not ln.startswith((" ", "\t")) and ("Error" in ln or "error:" in ln)]
    picked = errors[-2:] if errors else lines[-3:]
    msg = " | ".join(ln.strip() for ln in picked)[:400] or "no output"
    return msg + (f" (full output: {log})" if log else "")


def tvm_meta_schedule(func, trials, threads):
    """(seconds per run, tuning wall seconds) of TVM's meta-schedule, or (None, reason). TVM
    runs in $TVM_PYTHON (an interpreter with the pip package apache-tvm, kept out of tessera's
    environment) or in this interpreter when it can import tvm."""
    tvm_python = os.environ.get("TVM_PYTHON")
    if not tvm_python:
        try:
            import tvm  # noqa: F401
            from tvm import meta_schedule as ms  # noqa: F401
        except Exception as e:
            return None, f"apache-tvm not importable ({type(e).__name__}; set TVM_PYTHON)"
        tvm_python = sys.executable
    specs = []  # (shape, dtype) of each parameter (apache-tvm 0.26's PrimFunc has no buffer_map)
    for p in func.params:
        buf = next(b for v, b in func.buffer_map if v.same_as(p))
        specs.append(([int(x.value) for x in buf.shape], str(buf.dtype)))
    code = f"""
import time, numpy as np, tvm
try:
    from tvm import meta_schedule as ms
except ImportError:  # TVM >= 0.24 keeps it under s_tir
    from tvm.s_tir import meta_schedule as ms
src = {func.script()!r}
try:  # imported by meta-schedule's first task: kept out of the tuning time
    import tvm.s_tir.tensor_intrin  # noqa: F401
except ImportError:
    import tvm.tir.tensor_intrin  # noqa: F401
if not hasattr(tvm, "nd"):  # TVM >= 0.24 spells blocks T.sblock
    src = src.replace("T.block(", "T.sblock(")
import inspect
if "s_tir" in inspect.signature(tvm.script.from_source).parameters:
    # apache-tvm 0.26's parser makes TIRx functions (no root block, no T.sblock) unless told
    # s_tir: meta-schedule needs the s_tir form
    src = src.replace("@T.prim_func\\n", "@T.prim_func(s_tir=True)\\n")
    mod = tvm.IRModule({{"main": tvm.script.from_source(src, s_tir=True)}})
else:
    mod = tvm.IRModule({{"main": tvm.script.from_source(src)}})
try:
    target = tvm.target.Target("llvm -num-cores {threads}")
except ValueError:  # TVM >= 0.24 takes targets as dicts
    target = tvm.target.Target({{"kind": "llvm", "num-cores": {threads}}})
def _warm():
    # Each builder and runner process of meta-schedule imports TVM's tensor intrinsics on its
    # first job (about a minute of CPU, minutes on a loaded machine), inside the job's timeout:
    # at load ~12 every build of matmul 128^3 timed out at 120 s and at 300 s. As the pools'
    # initializer the import runs outside the timeout (still inside the tuning time).
    try:
        import tvm.s_tir.tensor_intrin  # noqa: F401
    except ImportError:
        import tvm.tir.tensor_intrin  # noqa: F401
t0 = time.time()
with __import__("tempfile").TemporaryDirectory() as wd:
    # LocalBuilder's default 30 s per build failed all 16 builds of matmul 1024^3 at load ~18
    db = ms.tune_tir(mod, target, wd, max_trials_global={trials}, num_trials_per_iter=16,
                     builder=ms.builder.LocalBuilder(timeout_sec=300, initializer=_warm),
                     runner=ms.runner.LocalRunner(timeout_sec=120, initializer=_warm))
    sch = ms.tir_integration.compile_tir(db, mod, target)
    build_target = target
    if sch is None:
        # apache-tvm 0.26 stores the records under the target with the host's mtriple added,
        # so the query by the target given finds none: the fastest record, replayed
        recs = [r for r in db.get_all_tuning_records() if r.run_secs]
        if not recs:
            raise RuntimeError("meta-schedule: no candidate built and ran")
        rec = min(recs, key=lambda r: sum(float(x) for x in r.run_secs) / len(r.run_secs))
        sch = (tvm.s_tir if hasattr(tvm, "s_tir") else tvm.tir).Schedule(rec.workload.mod)
        rec.trace.apply_to_schedule(sch, remove_postproc=False)
        build_target = rec.target
wall = time.time() - t0
lib = tvm.build(sch.mod, target=build_target)
dev = tvm.cpu(0)
array = tvm.nd.array if hasattr(tvm, "nd") else tvm.runtime.tensor
args = [array(np.random.rand(*shape).astype(dtype), dev) for shape, dtype in {specs!r}]
print(lib.time_evaluator("main", dev, number=3, repeat=5)(*args).median, wall)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(TVM_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([tvm_python, "-c", code], env=env, capture_output=True, text=True, timeout=7200)
    if out.returncode < 0 or "Segfault" in out.stderr:
        return None, f"meta-schedule crashed (exit {out.returncode}); see TVM_PYTHON's apache-tvm"
    if out.returncode != 0:
        return None, "meta-schedule failed (exit %d): %s" % (out.returncode, _failure_text(out))
    secs, wall = out.stdout.strip().splitlines()[-1].split()
    return float(secs), float(wall)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=256)
    ap.add_argument("--only", default="matmul,batch_matmul,conv2d")
    ap.add_argument("--threads", type=int, default=0, help="0: one thread and all threads")
    ap.add_argument("--quick", action="store_true", help="small shapes (a smoke run)")
    ap.add_argument("--skip-tvm", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--timer", choices=["wall", "cpu"], default="wall",
                    help="cpu: one-thread figures in thread CPU time, tuned, automatic schedule and "
                         "numpy interleaved in one process, and the one-thread tuning's candidates "
                         "timed in thread CPU time (for a shared machine)")
    args = ap.parse_args()
    all_w = workloads(args.quick)
    counts = [args.threads] if args.threads else sorted({1, os.cpu_count() or 1})
    rows, histories, picks = [], {}, []
    load0 = os.getloadavg()[0]
    for name in [n for n in args.only.split(",") if n]:
        w = all_w[name]
        for threads in counts:
            t0 = time.perf_counter()
            runner = None
            if args.timer == "cpu" and threads == 1:  # candidates timed in thread CPU time too
                runner = ts.tune.LocalRunner(num_threads=1, timer="cpu")
            result = ts.tune(w["func"], target="c", trials=args.trials, num_threads=threads,
                             parallel=threads > 1, progress=sys.stderr.isatty(), seed=0,
                             runner=runner)
            if runner is not None:
                runner.close()
            tune_wall = time.perf_counter() - t0
            histories[f"{name} [{threads}t]"] = result.history
            ok = [r for r in result.records if r.ok]
            picks.append(f"{w['label']} [{threads}t]: picked {min(ok, key=lambda r: r.mean).decisions}, "
                         f"automatic schedule {ok[0].decisions if ok else '?'}")
            auto_mod = None
            try:
                auto_mod = ts.autoschedule(w["func"], target="c").mod
            except Exception:
                auto_mod = None
            mods = [result.mod] + ([auto_mod] if auto_mod is not None else [])
            if w["hand"]:
                mods.append(w["hand"](threads > 1))
            if args.timer == "cpu" and threads == 1:
                secs = interleaved_cpu_seconds(mods, w["func"], w["np_setup"], w["np_stmt"])
            else:
                secs = alternating_wall_seconds(mods, w["func"], w["np_setup"], w["np_stmt"], threads)
            ours, ref = secs[0], secs[-1]
            auto = secs[1] if auto_mod is not None else None
            hand = secs[len(mods) - 1] if w["hand"] else None
            tvm_s, tvm_wall = (None, "skipped") if args.skip_tvm else tvm_meta_schedule(w["func"], args.trials, threads)
            gf = lambda s: w["flops"] / s / 1e9 if isinstance(s, float) else float("nan")  # noqa: E731
            rows.append(dict(workload=w["label"], threads=threads, trials=args.trials,
                             tuned=gf(ours), numpy=gf(ref), hand=gf(hand), auto=gf(auto),
                             tvm=gf(tvm_s), ratio=ref / ours, tune_wall=tune_wall,
                             tvm_wall=tvm_wall if isinstance(tvm_wall, float) else None,
                             tvm_note=None if isinstance(tvm_wall, float) else tvm_wall))
    head = (f"{'workload':34} {'thr':>3} {'trials':>6} {'tuned':>8} {'numpy':>8} {'hand':>8} {'auto':>8} "
            f"{'TVM':>8} {'tuned/numpy':>11} {'tune s':>7} {'TVM tune s':>10}")
    print("GFLOP/s (higher is better); numpy is OpenBLAS, measured in the same run"
          + ("; one thread: thread CPU time, interleaved" if args.timer == "cpu" else ""))
    print(head)
    print("-" * len(head))
    for r in rows:
        tvm_wall = f"{r['tvm_wall']:10.1f}" if r["tvm_wall"] else f"{'n/a':>10}"
        print(f"{r['workload']:34} {r['threads']:>3} {r['trials']:>6} {r['tuned']:8.1f} {r['numpy']:8.1f} "
              f"{r['hand']:8.1f} {r['auto']:8.1f} {r['tvm']:8.1f} {r['ratio']:11.2f} "
              f"{r['tune_wall']:7.1f} {tvm_wall}")
    for p in picks:
        print(p)
    notes = {r["tvm_note"] for r in rows if r["tvm_note"]}
    for n in notes:
        print(f"TVM meta-schedule: {n}")
    print(f"load average before / after: {load0:.2f} / {os.getloadavg()[0]:.2f}; cpus: {os.cpu_count()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, hist in histories.items():
        best, ys = float("inf"), []
        for s in hist:
            best = min(best, s) if s == s else best
            ys.append(best * 1e3)
        ax.plot(range(1, len(ys) + 1), ys, drawstyle="steps-post", label=label)
    ax.set_xlabel("trial")
    ax.set_ylabel("best time so far (ms, log)")
    ax.set_yscale("log")
    ax.set_title("tessera.tune: best time against trials")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(HERE, "tune.png")
    fig.savefig(path, dpi=110)
    print(f"plot saved to {path}")


if __name__ == "__main__":
    main()
