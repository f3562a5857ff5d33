"""Host throughput of the DSL intrinsic families, and PySim's slowdown against compiled code.

One kernel per family applies a few of its intrinsics to every native vector of the input
(the vectors dealt round-robin to the 4 TECs). "Melem/s" is input elements per second of the
compiled kernel (median of Executor.benchmark); "PySim x" is how many times slower the same
kernel runs under PySim (timed on a smaller input, per element). The last lines show how many
packed SIMD instructions the host compiler emitted for two kernels (their generated C built
with the toolchain's flags and -S).
"""

import os
import re
import subprocess
import tempfile
import time

import numpy as np

from tessera.dsl import BuildManager, script as S


@S.prim_func
def arith(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    for i in range(S.get_local_id() * 8, n, 32):
        x = S.vload(a + i)
        y = S.vload(b + i)
        v = S.vadd(x, y, saturate=True)
        v = S.vmul(v, y, mask="4T4F", r=x)
        S.vstore(S.abs(S.vsub(v, x), saturate=True), c + i)


@S.prim_func
def bitwise(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    for i in range(S.get_local_id() * 8, n, 32):
        x = S.vload(a + i)
        y = S.vload(b + i)
        v = S.vxor(x, y)
        v = S.vsr(v, 3, with_round=True)
        S.vstore(S.vadd(S.vpcnt(v), S.vror(x, 5)), c + i)


@S.prim_func
def compare(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    for i in range(S.get_local_id() * 8, n, 32):
        x = S.vload(a + i)
        y = S.vload(b + i)
        v = S.vsel(S.max(x, y), S.min(x, y), S.vcgt(x, 0))
        S.vstore(S.vrpmax(v, mask="7T"), c + i)


@S.prim_func
def permutation(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    for i in range(S.get_local_id() * 8, n, 32):
        x = S.vload(a + i)
        y = S.vload(b + i)
        S.vstore(S.vadd(S.vrevs(x), S.vzip(x, y, part="low")), c + i)


@S.prim_func
def mathf(a: S.ptr("fp32", "global"), b: S.ptr("fp32", "global"), c: S.ptr("fp32", "global"), n: S.i32):
    for i in range(S.get_local_id() * 8, n, 32):
        x = S.vload(a + i)
        S.vstore(S.vadd(S.exp(x), S.tanh(S.vload(b + i))), c + i)


@S.prim_func
def memory(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    idx = S.uint16x8([7, 6, 5, 4, 3, 2, 1, 0])  # 16-bit indices, one per lane
    for i in range(S.get_local_id() * 8, n, 32):
        S.vstore(S.vload_gather(a + i, idx), c + i, mask="6T")


FAMILIES = [("arithmetic", arith, "int32"), ("bitwise/shift", bitwise, "int32"),
            ("compare/reduce", compare, "int32"), ("permutation", permutation, "int32"),
            ("math", mathf, "float32"), ("memory", memory, "int32")]


def inputs(dtype, n):
    rng = np.random.default_rng(0)
    if dtype == "float32":
        return (rng.uniform(-3, 3, n).astype(dtype), rng.uniform(-3, 3, n).astype(dtype),
                np.zeros(n, dtype))
    return (rng.integers(-1000, 1000, n).astype(dtype), rng.integers(-1000, 1000, n).astype(dtype),
            np.zeros(n, dtype))


def simd_count(ex):
    """Packed SIMD instructions in the kernel's assembly (gcc -O2 -march=native -S)."""
    include = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "python", "tessera", "include")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.c")
        with open(src, "w") as f:
            f.write(ex.c_code)
        asm = os.path.join(d, "k.s")
        subprocess.run(["cc", "-std=gnu11", "-O2", "-march=native", "-fsigned-char", "-fwrapv",
                        "-fno-strict-aliasing", "-I", include, "-S", src, "-o", asm], check=True)
        text = open(asm).read()
    return len(re.findall(r"^\s+v?p[a-z]+\s.*%[xy]mm", text, re.M)) + len(
        re.findall(r"^\s+v[a-z]+ps\s.*%[xy]mm", text, re.M))


def main():
    n_compiled, n_pysim = 1 << 20, 1 << 10
    print(f"{'family':16s} {'Melem/s':>9s} {'PySim x':>9s}")
    names, compiled, pysim = [], [], []
    for name, kernel, dtype in FAMILIES:
        ex = BuildManager().build(kernel)
        a, b, c = inputs(dtype, n_compiled)
        r = ex.benchmark(a, b, c, n_compiled, repeat=5, number=10)
        compiled_per_elem = r.median / n_compiled
        a, b, c = inputs(dtype, n_pysim)
        t0 = time.perf_counter()
        kernel(a, b, c, n_pysim)
        pysim_per_elem = (time.perf_counter() - t0) / n_pysim
        print(f"{name:16s} {n_compiled / r.median / 1e6:9.1f} {pysim_per_elem / compiled_per_elem:9.0f}")
        names.append(name)
        compiled.append(n_compiled / r.median / 1e6)
        pysim.append(1 / pysim_per_elem / 1e6)
    from bench_plot import save_bars

    save_bars("dsl_intrinsics", "DSL intrinsic families: compiled vs PySim (log scale)", names,
              {"compiled": compiled, "PySim (reference)": pysim}, "Melem/s, higher is better", log=True)
    for name, kernel, _ in FAMILIES[:2]:
        print(f"packed SIMD instructions in {name}: {simd_count(BuildManager().build(kernel))}")


if __name__ == "__main__":
    main()
