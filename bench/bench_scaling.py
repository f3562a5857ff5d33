"""Build time against program size: te functions of N one-element outputs (N statements and
N + 1 parameters), lowered and built by tessera and, in the same run, by Apache TVM.

Prints a table (statements, lower time, build time, time per statement), then the CPU time
of each phase (te.compute calls, create_prim_func, lower, build with its compilers), and saves
bench/scaling.png when matplotlib is installed. TVM is run by the interpreter named in
$TVM_PYTHON (a virtual environment with the pip package ``apache-tvm``), or by this one when it
can import tvm; without either, its columns say so.

    PYTHONPATH=python .venv/bin/python bench/bench_scaling.py [sizes...]
"""

import json
import os
import subprocess
import sys
import tempfile
import time

SIZES = [int(a) for a in sys.argv[1:]] or [1000, 5000, 10000, 20000]

# One program text for both compilers: only the module name differs.
# Besides wall times, CPU times of this process (te.compute calls, create_prim_func, lowering)
# and of the build including the compilers it runs: the machine may be shared.
_PROGRAM = r'''
import json, os, sys, time, numpy as np
{imports}
def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
n = {n}
A = te.placeholder((n,), name="A", dtype="float32")
def body(s):
    return lambda i: A[s] * 2.0 + 1.0
c0 = cpu()
outs = [te.compute((1,), body(s), name="O%d" % s) for s in range(n)]
c1 = cpu()
t0 = time.perf_counter()
func = te.create_prim_func([A] + outs)
c2 = cpu()
{lower}
t1 = time.perf_counter()
c3 = cpu()
lib = {build}
{fetch}
t2 = time.perf_counter()
c4 = cpu()
a = np.random.rand(n).astype("float32")
o = [{array}(np.zeros(1, "float32")) for _ in range(n)]
lib(*([{array}(a)] + o))
ok = bool(np.allclose(np.concatenate([{numpy}(x) for x in o]), a * 2 + 1))
print(json.dumps({{"lower": t1 - t0, "build": t2 - t1, "ok": ok, "cpu_te": c1 - c0,
                  "cpu_create": c2 - c1, "cpu_lower": c3 - c2, "cpu_build": c4 - c3}}), flush=True)
# Apache TVM 0.27's process does not exit after its work is done (a runtime thread that the
# interpreter's shutdown waits for), which made every TVM run of this bench end in its
# timeout: leave without the interpreter's shutdown once the figures are out.
os._exit(0)
'''

_TESSERA = dict(imports="import tessera as ts\nfrom tessera import te",
                lower='ts.lower(func, target="c")', build='ts.build(func, target="c")',
                array="", numpy="", fetch="")
_TVM = dict(imports=("import tvm\nfrom tvm import te\n"
                     "_tensor = getattr(tvm.runtime, 'tensor', None) or tvm.nd.array"),
            lower='tvm.lower(func) if hasattr(tvm, "lower") else None',
            build='tvm.compile(func, target="llvm") if hasattr(tvm, "compile") else tvm.build(func, target="llvm")',
            array="_tensor", numpy="(lambda t: t.numpy())",
            # tvm.compile of an "llvm" target returns before LLVM generates machine code: that
            # happens when the first function is looked up, and is part of TVM's build time.
            fetch='lib["main"]')


def _run(python, program, env, timeout):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(program)
        path = f.name
    try:
        r = subprocess.run([python, path], capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "more than %d s (timed out)" % timeout, "timeout": timeout}
    finally:
        os.unlink(path)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _tvm_python():
    p = os.environ.get("TVM_PYTHON")
    if p:
        return p
    try:
        import tvm  # noqa: F401
        return sys.executable
    except ImportError:
        return None


def main():
    env = dict(os.environ)
    env["TESSERA_CACHE_DIR"] = tempfile.mkdtemp(prefix="tessera-bench-scaling-")
    tvm_py = _tvm_python()
    tvm_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # TVM's build time grows faster than the program: a size it cannot build within the limit
    # ($BENCH_TVM_TIMEOUT seconds) ends its column.
    # A number for every size, or "size:seconds" pairs ("2000:7200,20000:900") for a limit per
    # size; a size that times out under its own limit does not stop the larger ones then.
    tvm_timeouts = _timeouts(os.environ.get("BENCH_TVM_TIMEOUT", "900"))
    # Sizes TVM is run at ($BENCH_TVM_SIZES, e.g. "1000,5000"; all when unset): Apache TVM
    # 0.27's LLVM build of this program grows faster than the program (5.7 s CPU at 100
    # statements, 16.7 s at 200 on a 2-core machine).
    tvm_sizes = os.environ.get("BENCH_TVM_SIZES")
    tvm_sizes = {int(x) for x in tvm_sizes.split(",") if x.strip()} if tvm_sizes else None
    # tessera at every size first, then TVM (which may run until its timeout).
    ts_rows = {}
    for n in SIZES:
        ts_rows[n] = _run(sys.executable, _PROGRAM.format(n=n, **_TESSERA), env, 1800)
        print("tessera %d statements: %s" % (n, json.dumps(ts_rows[n])), flush=True)
    rows = []
    tvm_gave_up = None
    for n in SIZES:
        ts_r = ts_rows[n]
        if not tvm_py:
            tvm_r = {"error": "apache-tvm not installed (set TVM_PYTHON)"}
        elif tvm_sizes is not None and n not in tvm_sizes:
            tvm_r = {"error": "not run at this size ($BENCH_TVM_SIZES)"}
        elif tvm_gave_up is not None and n not in tvm_timeouts:
            tvm_r = {"error": "not run: timed out at %d statements" % tvm_gave_up}
        else:
            limit = tvm_timeouts.get(n, tvm_timeouts.get(None, 900))
            tvm_r = _run(tvm_py, _PROGRAM.format(n=n, **_TVM), tvm_env, limit)
            if "timeout" in tvm_r:
                tvm_gave_up = n
        rows.append((n, ts_r, tvm_r))
        _print_row(n, ts_r, tvm_r)
    _print_cpu(rows)
    _plot(rows)


def _timeouts(text):
    """$BENCH_TVM_TIMEOUT: "900" (every size) or "2000:7200,20000:900" (per size; the key None
    holds a plain number given among the pairs)."""
    out = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            size, seconds = part.split(":", 1)
            out[int(size)] = int(seconds)
        else:
            out[None] = int(part)
    return out


def _print_cpu(rows):
    """CPU seconds of each phase (te.compute calls, create_prim_func, lower, build with its
    compilers), which a shared machine's load changes less than wall time."""
    keys = ("cpu_te", "cpu_create", "cpu_lower", "cpu_build")
    print("\nCPU seconds: te.compute x n | create_prim_func | lower | build (with compilers)")
    print("%8s | %8s %8s %8s %8s | %8s %8s %8s %8s" % (
        "stmts", "ts te", "ts creat", "ts lower", "ts build", "tvm te", "tvm crea", "tvm lowr",
        "tvm bld"))
    for n, a, b in rows:
        cells = [" ".join(_fmt(r, k) for k in keys) for r in (a, b)]
        print("%8d | %s | %s" % (n, cells[0], cells[1]), flush=True)


def _fmt(r, key):
    return "%8.2f" % r[key] if key in r else "%8s" % "-"


def _print_row(n, a, b):
    if not hasattr(_print_row, "header"):
        _print_row.header = True
        print("%8s | %8s %8s %10s %4s | %8s %8s %10s %4s" % (
            "stmts", "ts lower", "ts build", "ts us/stmt", "ok", "tvm lowr", "tvm bld", "tvm us/stm", "ok"))
    cells = []
    for r in (a, b):
        per = "%10.1f" % (1e6 * r["build"] / n) if "build" in r else "%10s" % "-"
        cells.append("%s %s %s %4s" % (_fmt(r, "lower"), _fmt(r, "build"), per, r.get("ok", "-")))
    print("%8d | %s | %s" % (n, cells[0], cells[1]), flush=True)
    for r, who in ((a, "tessera"), (b, "tvm")):
        if "error" in r:
            print("         %s: %s" % (who, r["error"]), flush=True)


def _plot(rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ns = [n for n, _, _ in rows]
    for idx, label in ((1, "tessera"), (2, "Apache TVM")):
        pts = [(row[0], row[idx]["build"]) for row in rows if "build" in row[idx]]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax.set_xlabel("statements (one-element outputs)")
    ax.set_ylabel("build seconds")
    ax.set_xticks(ns)
    ax.legend()
    ax.grid(True, alpha=0.3)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scaling.png")
    fig.savefig(out, dpi=100, bbox_inches="tight")
    print("plot:", out)


if __name__ == "__main__":
    main()
