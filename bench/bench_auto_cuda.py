"""Matmul on the GPU with no schedule: ``ts.build(func, target="cuda")`` of a te matmul that
carries no schedule, so that the automatic schedule chooses it (float16 inputs with a float32
accumulator on the tensor cores; float32 on the SIMT rules, for reference), beside cuBLAS through
torch measured in the same run. Each kernel is checked against torch before it is timed with CUDA
events (warm-up calls, then repeats of back-to-back calls; the best repeat counts). A failing
size prints its error and the benchmark goes on with the next.

    PYTHONPATH=python python bench/bench_auto_cuda.py [--sizes 1024 2048 4096] [--out DIR]
        [--no-variants | --variant-sizes 2048 4096] [--only LABEL ...]

Prints a table, saves bench/auto_cuda.png (with matplotlib) and, with --out, copies the plot and
writes auto_cuda.json there. Prints that it skipped when there is no GPU (or under the CPU
emulator, whose timings say nothing about a GPU)."""

import argparse
import json
import os
import shutil
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SIZES = (1024, 2048, 4096)
# (label, input dtype, accumulator dtype, output dtype, target facts overriding the default ones)
KINDS = (("fp16 in, fp32 acc/out", "float16", "float32", "float32", None),
         ("fp16 in, fp32 acc, fp16 out", "float16", "float32", "float16", None),
         ("fp32", "float32", "float32", "float32", None))
# Variants of the automatic schedule of the fp16 matmul, through the target facts it reads
# (--no-variants skips them; --variant-sizes picks their sizes; --only picks rows by label).
# The default: 128 x 256 x 64 block tiles of 8 warps of 64 x 64 (one block per SM by registers),
# a 3-stage cp.async pipeline (156672 bytes of dynamic shared memory), block rasterization by 8
# block rows (mma_swizzle), the SM count and opt-in shared memory of the GPU. Each variant
# overrides some of these facts. The rows up to "swizzle 8 bk32 4st" vary the 128 x 128 blocks
# of 4 warps (2 blocks per SM, no rasterization: OLD) that were the default before: 8 warps of
# 64 x 32 (the default before that); no pipeline; 32-deep reduction tiles; 4 stages; the A100's
# SM count (108); rasterization; B fragments loaded one at a time (fewer live registers). Then
# 128 x 256 and 256 x 128 blocks (a third less L2 traffic per mma), with other stages,
# reduction steps and rasterizations, or as 16 warps of 64 x 32 (128 registers: 4 warps per
# scheduler instead of 2, at 1.5x the shared-memory reads per mma); the current default's
# copies of a pipelined step issued before its mma (two barriers a step). Last, the float16
# output with its cast fused into the store of the fragments (mma_fused_cast: one kernel,
# against "fp16 in, fp32 acc, fp16 out", whose cast is a second kernel); and the default with
# the cp.async addresses printed as one sum (the target option -loop_addresses=0: the code
# generator before it added the copy loop's term last, 12 more integer instructions per k step).
# And for fp32 (the register-tiled SIMT rule: 8 x 8 per thread, 128 x 128 x 16 block tiles
# double-buffered with cp.async by default) the same tiles with one synchronous copy per step.
OLD = {"mma_block_n": 128, "mma_swizzle": 0}  # the 128 x 128 blocks of the earlier variants
VARIANTS = (("fp32 var: SIMT no double buffer", "float32", "float32", "float32", {"pipeline_stages": 1}),
            ("fp16 var: w64x32 (old default)", "float16", "float32", "float32", {**OLD, "mma_warp_n": 32}),
            ("fp16 var: no pipeline", "float16", "float32", "float32", {**OLD, "pipeline_stages": 1}),
            ("fp16 var: bk32 4 stages", "float16", "float32", "float32",
             {**OLD, "mma_block_k": 32, "pipeline_stages": 4}),
            ("fp16 var: 4 stages", "float16", "float32", "float32", {**OLD, "pipeline_stages": 4}),
            ("fp16 var: sm108", "float16", "float32", "float32", {**OLD, "sm_count": 108}),
            ("fp16 var: swizzle 8", "float16", "float32", "float32", {**OLD, "mma_swizzle": 8}),
            ("fp16 var: swizzle 4", "float16", "float32", "float32", {**OLD, "mma_swizzle": 4}),
            ("fp16 var: stream B", "float16", "float32", "float32", {**OLD, "mma_stream_b": 1}),
            ("fp16 var: stream B bk32 4st", "float16", "float32", "float32",
             {**OLD, "mma_stream_b": 1, "mma_block_k": 32, "pipeline_stages": 4}),
            ("fp16 var: swizzle 8 bk32 4st", "float16", "float32", "float32",
             {**OLD, "mma_swizzle": 8, "mma_block_k": 32, "pipeline_stages": 4}),
            ("fp16 var: 128x256", "float16", "float32", "float32", {"mma_block_n": 256, "mma_swizzle": 0}),
            ("fp16 var: 256x128", "float16", "float32", "float32",
             {"mma_block_m": 256, "mma_block_n": 128, "mma_swizzle": 0}),
            ("fp16 var: 128x256 4 stages", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_swizzle": 0, "pipeline_stages": 4}),
            ("fp16 var: 128x256 bk32 4st", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_swizzle": 0, "mma_block_k": 32, "pipeline_stages": 4}),
            ("fp16 var: 128x256 swizzle 8", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_swizzle": 8}),
            ("fp16 var: 256x128 swizzle 4", "float16", "float32", "float32",
             {"mma_block_m": 256, "mma_block_n": 128, "mma_swizzle": 4}),
            ("fp16 var: 128x256 swizzle 4", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_swizzle": 4}),
            ("fp16 var: 128x256 swizzle 16", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_swizzle": 16}),
            ("fp16 var: 128x256 w64x32", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_warp_n": 32, "mma_swizzle": 0}),
            ("fp16 var: 128x256 w64x32 sw8", "float16", "float32", "float32",
             {"mma_block_n": 256, "mma_warp_n": 32, "mma_swizzle": 8}),
            ("fp16 var: 256x128 w64x32 sw4", "float16", "float32", "float32",
             {"mma_block_m": 256, "mma_block_n": 128, "mma_warp_n": 32, "mma_swizzle": 4}),
            ("fp16 var: 128x128 (old default)", "float16", "float32", "float32", OLD),
            ("fp16 var: 128x256 sw8 4 stages", "float16", "float32", "float32", {"pipeline_stages": 4}),
            ("fp16 var: copies first", "float16", "float32", "float32", {"mma_copies_first": 1}),
            ("fp16 var: 128x256 sw8 stream B", "float16", "float32", "float32", {"mma_stream_b": 1}),
            ("fp16 var: fp16 out fused cast", "float16", "float32", "float16", {"mma_fused_cast": 1}),
            ("fp16 var: copy addresses as one sum", "float16", "float32", "float32",
             {"target": "-loop_addresses=0"}))
VARIANT_SIZES = (2048, 4096)


def matmul(n, dtype, acc, out):
    """A te matmul of n x n x n: `dtype` inputs accumulated in `acc`; an `out` other than `acc`
    is a cast of the accumulated result (an elementwise epilogue, as TVM's dlight sees it)."""
    from tessera import te

    a = te.placeholder((n, n), dtype, name="A")
    b = te.placeholder((n, n), dtype, name="B")
    k = te.reduce_axis((0, n), name="k")
    if dtype == acc:
        body = lambda i, j: te.sum(a[i, k] * b[k, j], axis=k)  # noqa: E731
    else:
        body = lambda i, j: te.sum(a[i, k].astype(acc) * b[k, j].astype(acc), axis=k)  # noqa: E731
    c = te.compute((n, n), body, name="C")
    if out != acc:
        acc_c = c
        c = te.compute((n, n), lambda i, j: acc_c[i, j].astype(out), name="C_out")
    return te.create_prim_func([a, b, c])


def event_seconds(torch, call, warmup, number, repeat):
    """Seconds per call of `call`: the best of `repeat` runs of `number` back-to-back calls,
    timed with CUDA events on the default stream (tessera launches on it too)."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(number):
            call()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / number)
    return best


def calls_for(seconds_estimate):
    """Back-to-back calls per repeat: about 50 ms of work, at least 3 and at most 100."""
    return int(min(100, max(3, 0.05 / max(seconds_estimate, 1e-7))))


def run_case(ts, torch, n, dtype, acc, out, dev, facts=None):
    """One size: build, check against torch, time tessera and cuBLAS. Returns a result dict.
    Without `facts`, ts.build schedules the function itself (the automatic schedule as the
    first stage); with them, the schedule of ts.autoschedule(func, "cuda", facts) is built."""
    row = {"n": n, "dtype": dtype, "acc": acc, "out": out, "facts": facts}
    # (the key "target" of a variant's facts holds options of the build's target instead)
    target = "cuda " + (facts or {}).get("target", "")
    facts = {k: v for k, v in facts.items() if k != "target"} if facts else None
    func = matmul(n, dtype, acc, out)
    start = time.perf_counter()
    sch = ts.autoschedule(func, target="cuda", facts=facts)
    row["autoschedule_ms"] = (time.perf_counter() - start) * 1e3
    row["tensor_cores"] = any("tensorize" in line for line in sch.trace.as_python())
    start = time.perf_counter()
    lib = ts.build(func if facts is None else sch.mod, target=target.strip())
    row["build_s"] = time.perf_counter() - start
    rng = np.random.default_rng(n)
    a_np = (rng.random((n, n), dtype=np.float32) - 0.5).astype(dtype)
    b_np = (rng.random((n, n), dtype=np.float32) - 0.5).astype(dtype)
    a, b = ts.nd.array(a_np, device=dev), ts.nd.array(b_np, device=dev)
    c = ts.nd.empty((n, n), out, dev)
    lib(a, b, c)
    dev.sync()
    # The reference: torch in float32 of the same inputs (float16 inputs are exact in float32).
    ta = torch.from_numpy(a_np).cuda()
    tb = torch.from_numpy(b_np).cuda()
    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        expect = (ta.float() @ tb.float()).cpu().numpy()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32
    got = c.numpy().astype("float32")
    err = float(np.max(np.abs(got - expect)) / max(1e-6, float(np.max(np.abs(expect)))))
    row["max_rel_err"] = err
    tol = 2e-3 if out == "float32" else 2e-2  # (a float16 output rounds to 11 bits)
    if not np.allclose(got, expect, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(expect))))):
        raise AssertionError(f"n={n} {dtype}: tessera differs from torch (max error relative "
                             f"to max |C|: {err:.3g})")
    flops = 2.0 * n ** 3
    one = event_seconds(torch, lambda: lib(a, b, c), 1, 1, 1)
    number = calls_for(one)
    ours = event_seconds(torch, lambda: lib(a, b, c), 3, number, 5)
    row["tessera_tflops"] = flops / ours / 1e12
    row["tessera_ms"] = ours * 1e3
    # cuBLAS through torch, the same shapes and types (float16 inputs: torch's float16 GEMM,
    # which accumulates in float32; float32: plain SGEMM, no TF32).
    tc = torch.empty((n, n), device="cuda", dtype=getattr(torch, dtype))
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        if dtype == acc:
            theirs = event_seconds(torch, lambda: torch.matmul(ta, tb, out=tc), 3, number, 5)
        else:
            th = torch.empty((n, n), device="cuda", dtype=getattr(torch, dtype))
            theirs = event_seconds(torch, lambda: torch.matmul(ta, tb, out=th), 3, number, 5)
            # fp16 in, fp32 out as tessera computes it: cuBLAS through torch has no such call
            # without a cast; the float16-output GEMM above is cuBLAS's best, the reference.
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32
    row["cublas_tflops"] = flops / theirs / 1e12
    row["cublas_ms"] = theirs * 1e3
    row["ratio"] = row["tessera_tflops"] / row["cublas_tflops"]
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--out", help="a folder for auto_cuda.json and the plot")
    parser.add_argument("--no-variants", action="store_true",
                        help="skip the fp16 variants of the schedule (other target facts)")
    parser.add_argument("--variant-sizes", type=int, nargs="+", default=list(VARIANT_SIZES),
                        help="the sizes of the variants (default: 2048 4096)")
    parser.add_argument("--only", nargs="+", metavar="LABEL",
                        help="run only the kinds and variants with these labels (exact, e.g. "
                             "'fp32' 'fp16 var: 128x256')")
    args = parser.parse_args(argv)
    if args.only:
        known = [kind[0] for kind in KINDS + VARIANTS]
        unknown = [label for label in args.only if label not in known]
        if unknown:
            parser.error(f"unknown --only label(s) {unknown}; known: {known}")

    import tessera as ts
    from tessera import _core

    if _core.cuda_emulator_enabled():
        print("bench_auto_cuda: skipped, TESSERA_CUDA_EMULATOR=1 runs kernels on the CPU emulator, "
              "whose timings say nothing about a GPU")
        return 0
    ok, why = _core.cuda_driver_status()
    if not ok:
        print(f"bench_auto_cuda: skipped, no CUDA GPU/driver available ({why})")
        return 0
    ok, why = _core.nvrtc_status()
    if not ok:
        print(f"bench_auto_cuda: skipped, NVRTC not available ({why})")
        return 0
    try:
        import torch
    except ImportError:
        print("bench_auto_cuda: skipped, torch is not installed (the reference is cuBLAS through torch)")
        return 0
    if not torch.cuda.is_available():
        print("bench_auto_cuda: skipped, torch sees no CUDA GPU")
        return 0

    dev = ts.cuda(0)
    print(f"GPU: {torch.cuda.get_device_name(0)} (sm_{_core.cuda_compute_capability(0)}), "
          f"torch {torch.__version__}, NVRTC {_core.nvrtc_version()}")
    header = (f"{'n':>6} {'kind':>30} {'TC':>3} {'sched ms':>8} {'build s':>7} {'tessera ms':>10} "
              f"{'TFLOP/s':>8} {'cuBLAS ms':>9} {'TFLOP/s':>8} {'ratio':>6} {'rel err':>8}")
    print(header)
    rows, failures = [], 0
    kinds = [(kind, args.sizes) for kind in KINDS]
    if not args.no_variants:
        kinds += [(kind, args.variant_sizes) for kind in VARIANTS]
    if args.only:
        kinds = [(kind, sizes) for kind, sizes in kinds if kind[0] in args.only]
    bench_start = time.perf_counter()
    for (label, dtype, acc, out, facts), sizes in kinds:
        for n in sizes:
            try:
                row = run_case(ts, torch, n, dtype, acc, out, dev, facts)
            except Exception as err:  # one size failing must not stop the others
                failures += 1
                print(f"{n:>6} {label:>30} FAILED: {type(err).__name__}: {err}".splitlines()[0][:400])
                traceback.print_exc(limit=4)
                rows.append({"n": n, "dtype": dtype, "acc": acc, "out": out, "facts": facts, "error": f"{type(err).__name__}: {err}"[:2000]})
                continue
            row["kind"] = label
            rows.append(row)
            print(f"{n:>6} {label:>30} {'yes' if row['tensor_cores'] else 'no':>3} "
                  f"{row['autoschedule_ms']:8.1f} {row['build_s']:7.2f} {row['tessera_ms']:10.3f} "
                  f"{row['tessera_tflops']:8.2f} {row['cublas_ms']:9.3f} {row['cublas_tflops']:8.2f} "
                  f"{row['ratio']:6.2f} {row['max_rel_err']:8.1e}", flush=True)
    print("ratio = tessera / cuBLAS (torch) in the same run; fp16 rows compare with torch's "
          f"float16 GEMM (float32 accumulation, float16 output). {len(rows)} rows in "
          f"{time.perf_counter() - bench_start:.0f} s.")

    good = [r for r in rows if "error" not in r and not r["facts"]]
    labels = [f"{r['kind']} {r['n']}" for r in good]
    try:
        from bench_plot import save_bars

        path = save_bars("auto_cuda", "matmul with no schedule on the GPU (ts.build target=cuda)", labels,
                         {"tessera (automatic schedule)": [r["tessera_tflops"] for r in good],
                          "cuBLAS (torch)": [r["cublas_tflops"] for r in good]},
                         "TFLOP/s, higher is better")
    except Exception as err:  # the plot is a convenience; the table is the result
        print(f"no plot: {type(err).__name__}: {err}")
        path = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "auto_cuda.json"), "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
        if path:
            shutil.copy(path, args.out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
