"""Host throughput of a DSL vector add (c = a + b) beside numpy's add and memcpy bandwidth.

The kernel loops over native vectors (8 lanes of int32 / float32), the elements split into
one contiguous range per TEC (4 TECs as host threads), with a masked tail. Every figure of a
row is measured in the same run on the same arrays. GB/s counts the bytes read and written:
12 bytes per element for an add, 8 for the copy (np.copyto of one array of the same size).
"""

import time

import numpy as np

from tessera.dsl import BuildManager, script as S


def vector_add(dtype):
    @S.prim_func
    def add(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), c: S.ptr(dtype, "global"),
            n: S.i32):
        per_tec = (n // 8 + 3) // 4 * 8
        start = S.get_local_id() * per_tec
        end = start + per_tec
        if end > n:
            end = n
        full = start
        if start < end:
            full = end - (end - start) % 8
        for i in range(start, full, 8):
            S.vstore(S.vload(a + i) + S.vload(b + i), c + i)
        if full < end:
            m = S.tail_mask(end - full, 8)
            S.vstore(S.vload(a + full, mask=m) + S.vload(b + full, mask=m), c + full, mask=m)

    return add


def best_time(fn, min_total=0.5, min_runs=5):
    fn()  # warm up: page faults, the TEC pool, caches
    runs, total, best = 0, 0.0, float("inf")
    while runs < min_runs or total < min_total:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, runs = min(best, dt), total + dt, runs + 1
    return best


def main():
    rng = np.random.default_rng(0)
    print(f"{'dtype':8s} {'elements':>9s}   {'tessera GB/s':>12s} {'Gelem/s':>8s}   "
          f"{'numpy a+b GB/s':>14s} {'Gelem/s':>8s}   {'memcpy GB/s':>11s}")
    labels, ours, numpy_add, memcpy = [], [], [], []
    for dtype in ("int32", "float32"):
        ex = BuildManager().build(vector_add(dtype))
        for n in (1 << 20, 1 << 24):
            if dtype == "int32":
                a = rng.integers(-1000, 1000, n, dtype=dtype)
                b = rng.integers(-1000, 1000, n, dtype=dtype)
            else:
                a = rng.standard_normal(n, dtype=dtype)
                b = rng.standard_normal(n, dtype=dtype)
            c = np.empty_like(a)
            ref = np.empty_like(a)
            t_dsl = best_time(lambda: ex(a, b, c, n))
            t_np = best_time(lambda: np.add(a, b, out=ref))
            t_copy = best_time(lambda: np.copyto(ref, a))
            assert np.array_equal(c, a + b)
            add_bytes, copy_bytes = 3 * a.nbytes, 2 * a.nbytes
            print(f"{dtype:8s} {n:9d}   {add_bytes / t_dsl / 1e9:12.2f} {n / t_dsl / 1e9:8.3f}   "
                  f"{add_bytes / t_np / 1e9:14.2f} {n / t_np / 1e9:8.3f}   "
                  f"{copy_bytes / t_copy / 1e9:11.2f}")
            labels.append(f"{dtype} n=2^{n.bit_length() - 1}")
            ours.append(add_bytes / t_dsl / 1e9)
            numpy_add.append(add_bytes / t_np / 1e9)
            memcpy.append(copy_bytes / t_copy / 1e9)
    from bench_plot import save_bars

    save_bars("dsl_vector_add", "DSL vector add: bandwidth", labels,
              {"tessera": ours, "numpy a+b": numpy_add, "memcpy (np.copyto)": memcpy},
              "GB/s, higher is better")


if __name__ == "__main__":
    main()
