"""A fp32 GEMM scheduled step by step with tir.Schedule, with its speed after every step.

    PYTHONPATH=python python examples/gemm_schedule.py [--n 1024] [--threads]

Each step adds one schedule primitive to the previous ones; the table shows GFLOP/s after it
and numpy's BLAS on the same arrays, measured in the same run (best of a few repeats; the
figures are noisy on a shared machine). Until decompose_reduction the update keeps the
"k == 0: initialize" test inside the k loop, which hides much of what the earlier steps gain;
vectorize, unroll and parallel come before it because they are applied to the loops of the
single reduction block (afterwards the init and update blocks are two writers). Without --threads everything, numpy included, runs on
one thread. The micro-kernel is sized for AVX-512 (two 16-lane vectors per row of the tile).
"""

import argparse
import os
import sys
import time

_THREADS = "--threads" in sys.argv
if not _THREADS:  # before numpy and OpenMP start
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # idle OpenMP threads do not spin

import numpy as np  # noqa: E402

import tessera as ts  # noqa: E402
from tessera.script import tir as T  # noqa: E402
from tessera.tir import Schedule  # noqa: E402

MR, NR, VEC = 8, 32, 16  # register tile: 8 rows x 32 columns = 8 x 2 AVX-512 accumulators


def matmul(n):
    @T.prim_func
    def func(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
             C: T.Buffer((n, n), "float32")):
        for i, j, k in T.grid(n, n, n):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    return func


def steps(n, threads):
    """Yields (description, schedule) after each step."""
    sch = Schedule(matmul(n))
    block = sch.get_block("C")
    yield "naive i, j, k loops", sch

    # 1. Tile: an MR x NR block of C per (i_0, j_0); k in the middle, j innermost.
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, MR])
    j0, j1 = sch.split(j, [None, NR])
    sch.reorder(j0, i0, k, i1, j1)
    yield f"tile {MR}x{NR}, reorder j0 i0 k i1 j1", sch

    # 2. Vectorize: the NR columns as NR/VEC native vectors.
    j1o, j1i = sch.split(j1, [None, VEC])
    sch.vectorize(j1i)
    yield f"vectorize j1 ({VEC} lanes)", sch

    # 3. Accumulate the tile in a local buffer, written back once per tile.
    cc = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(cc, i0)
    sch.vectorize(sch.get_loops(cc)[-1])
    yield "cache_write C to a local tile", sch

    # 4. Unroll the register tile: the local tile becomes registers.
    sch.unroll(j1o)
    sch.unroll(i1)
    yield "unroll the register tile", sch

    # 5. Pack B into NR-wide panels contiguous along k (one stream per tile instead of n rows).
    packed = sch.cache_read(block, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // NR, kk, jj % NR))
    pk, pj = sch.get_loops(packed)
    pjo, pji = sch.split(pj, [None, NR])
    sch.reorder(pjo, pk, pji)
    sch.vectorize(pji)
    yield "pack B (cache_read + transform_layout)", sch

    # 6. Parallel outer loops (only with --threads).
    if threads:
        sch.parallel(j0)
        sch.parallel(pjo)
        yield "parallel j0 and the packing", sch

    # 7. Initialize the tile before the k loop instead of testing k == 0 inside it.
    sch.decompose_reduction(block, k)
    yield "decompose_reduction at k", sch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024, help=f"matrix size (a multiple of {NR})")
    ap.add_argument("--threads", action="store_true", help="all threads (default: one)")
    ap.add_argument("--show", action="store_true", help="print the final scheduled TensorIR")
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype="float32")
    b = rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    ref = a @ b
    flops = 2.0 * n ** 3

    def numpy_gflops():
        best = min(_timed(lambda: np.matmul(a, b, out=c)) for _ in range(3))
        return flops / best / 1e9

    print(f"fp32 GEMM {n}^3, {'all threads' if args.threads else 'one thread'}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'step':46} {'tessera GFLOP/s':>16} {'numpy GFLOP/s':>14} {'ratio':>6}")
    last = None
    for desc, sch in steps(n, args.threads):
        lib = ts.build(sch.mod, target="c")
        c[...] = 0
        lib(a, b, c)
        np.testing.assert_allclose(c, ref, rtol=1e-3)
        # Slow steps run once; fast ones are repeated. The pause lets numpy's BLAS threads (from
        # the previous step's reference) stop spinning before tessera's run.
        time.sleep(0.3)
        once = _timed(lambda: lib(a, b, c))
        repeat = 1 if once > 1.0 else 5
        t = min([once] + [_timed(lambda: lib(a, b, c)) for _ in range(repeat - 1)])
        g, ng = flops / t / 1e9, numpy_gflops()
        print(f"{desc:46} {g:>16.2f} {ng:>14.2f} {g / ng:>6.2f}", flush=True)
        last = sch
    if args.show:
        print(last.mod.script())


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
