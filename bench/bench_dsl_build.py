"""Build latency (cold and cached) and call overhead of the first DSL example.

Each figure is printed beside a reference measured in the same run: a bare host C compile
of an empty shared object (cold build floor) and numpy's np.add on the same 8 elements
(call overhead).
"""

import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

from tessera.dsl import BuildManager, script as S


def kernel_source():
    @S.prim_func
    def func(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
        va = S.vload(a)
        vb = S.vadd(va, 1)
        S.vstore(vb, b)

    return func


def timed(fn, repeat):
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # Cold: a fresh cache each time, and a freshly decorated function (parse included).
        def cold():
            os.environ["TESSERA_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
            BuildManager().build(kernel_source())

        cold_s = timed(cold, 5)
        os.environ["TESSERA_CACHE_DIR"] = os.path.join(tmp, "warm")
        BuildManager().build(kernel_source())
        cached_s = timed(lambda: BuildManager().build(kernel_source()), 20)

        src = os.path.join(tmp, "empty.c")
        open(src, "w").write("int tessera_bench_empty(void) { return 0; }\n")
        cc_s = timed(lambda: subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", src + ".so"], check=True), 5)

        rows.append(("build, cold (parse + lower + cc)", statistics.median(cold_s) * 1e3, "ms",
                     "cc of an empty .so", statistics.median(cc_s) * 1e3))
        rows.append(("build, cached", statistics.median(cached_s) * 1e3, "ms", "", float("nan")))

        ex = BuildManager().build(kernel_source())
        a = np.arange(8, dtype="int32")
        out = np.zeros(8, "int32")
        n = 20000
        call = min(timed(lambda: [ex(a, out) for _ in range(n)], 3)) / n
        ref = min(timed(lambda: [np.add(a, 1, out=out) for _ in range(n)], 3)) / n
        rows.append(("call overhead ex(a, out)", call * 1e6, "us", "np.add(a, 1, out=out)", ref * 1e6))

    print(f"{'measure':36s} {'tessera':>10s} {'unit':>5s}   {'reference':28s} {'value':>8s}")
    for name, value, unit, ref_name, ref in rows:
        ref_text = "" if ref != ref else f"{ref:8.3f}"
        print(f"{name:36s} {value:10.3f} {unit:>5s}   {ref_name:28s} {ref_text}")
    from bench_plot import save_bars

    save_bars("dsl_build", "DSL build latency and call overhead (log scale)",
              [f"{r[0]} [{r[2]}]" for r in rows],
              {"tessera": [r[1] for r in rows], "reference (see table)": [r[4] for r in rows]},
              "ms or us, lower is better", log=True)


if __name__ == "__main__":
    main()
