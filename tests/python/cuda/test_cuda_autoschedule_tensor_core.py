"""The automatic schedule of a float16 matmul (float32 accumulator) on "cuda" uses the tensor
cores: wmma fragments loaded from padded shared-memory tiles filled with 16-byte loads. The
source compiles with NVRTC for sm_90 (no GPU needed) and the kernel matches numpy on a GPU or the
CPU emulator (TESSERA_CUDA_EMULATOR=1); shapes that are not multiples of 16 take the SIMT rules."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import tessera as ts
from tessera import _core, te

from cuda_support import requires_gpu, requires_nvrtc

WMMA_INTRINS = ("wmma_fill_16x16x16_f32", "wmma_load_16x16x16_f16_a_shared",
                "wmma_load_16x16x16_f16_b_shared", "wmma_sync_16x16x16_f16f16f32",
                "wmma_store_16x16x16_f32_global")


def matmul_f16(m, n, k, out="float32"):
    a = te.placeholder((m, k), "float16", name="A")
    b = te.placeholder((k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r].astype(out) * b[r, j].astype(out), axis=r),
                   name="C")
    return te.create_prim_func([a, b, c])


# The facts of a schedule without the software pipeline (one copy of the tiles, synchronous),
# with the 128 x 128 blocks of warp tiles of 64 x 32 that were the default before 64 x 64 warp
# tiles and then 128 x 256 blocks measured better, the block rows and columns as they are.
UNPIPELINED = {"pipeline_stages": 1, "mma_warp_n": 32, "mma_block_n": 128, "mma_swizzle": 0}


def trace_of(func, facts=None):
    return "\n".join(ts.autoschedule(func, target="cuda", facts=facts).trace.as_python())


def test_tensor_core_schedule():
    trace = trace_of(matmul_f16(2048, 2048, 2048), UNPIPELINED)
    assert "software_pipeline" not in trace
    for intrin in WMMA_INTRINS:
        assert f'tensor_intrin="{intrin}"' in trace
    for scope in ("shared", "wmma.accumulator", "wmma.matrix_a", "wmma.matrix_b"):
        assert f'storage_scope="{scope}"' in trace
    # 128 x 128 x 64 block tiles of 2 x 4 warps, each 4 x 2 fragments of 16 x 16.
    assert "factors=[None, 2, 4, 16]" in trace and "factors=[None, 4, 2, 16]" in trace
    assert "factors=[None, 4, 16]" in trace
    assert trace.count("sch.vectorize") == 2 and trace.count("factor=32, offset=8") == 2
    # By default 128 x 256 blocks of 2 x 4 warps of 64 x 64 (4 x 4 fragments), each warp's A
    # and B fragments of a k step loaded before its mma; blockIdx.x walks 8 block rows of a
    # block column (rasterization) ...
    default = trace_of(matmul_f16(2048, 2048, 2048))
    assert "factors=[None, 2, 4, 16]" in default and "factors=[None, 4, 4, 16]" in default
    assert "factors=[None, 4, 16]" in default and "factors=[None, 8]" in default
    assert "sch.fuse(l" in default.split("cache_write")[0]
    # ... without mma_swizzle the block rows and columns as they are.
    plain = trace_of(matmul_f16(2048, 2048, 2048), {"mma_swizzle": 0, "mma_block_n": 128})
    assert plain.count("factors=[None, 2, 4, 16]") == 2 and "factors=[None, 4, 16]" in plain
    assert 'thread_axis="blockIdx.x"' in plain and "sch.fuse(l" not in plain.split("cache_write")[0]
    # A small grid halves the tile so that every SM gets blocks; a reduction of 32 steps by 32.
    small = trace_of(matmul_f16(256, 256, 32))
    assert "factors=[None, 2, 2, 16]" in small and "factors=[None, 2, 16]" in small
    # Where the 64-deep tiles fit neither the static shared memory nor, pipelined, the opt-in
    # dynamic shared memory, 32.
    for facts in ({"shared_memory_bytes": 32768, "pipeline_stages": 1},
                  {"shared_memory_bytes": 32768, "shared_memory_optin_bytes": 65536}):
        assert "factors=[None, 2, 16]" in trace_of(matmul_f16(2048, 2048, 2048), facts)
    assert "factors=[None, 4, 16]" in trace_of(matmul_f16(2048, 2048, 2048), {"shared_memory_bytes": 32768})


def test_tensor_core_pipelined_schedule():
    # By default the k0 loop is a 3-stage software pipeline: the A and B copies (stage 0,
    # asynchronous) run two k0 steps ahead of the mma (stage 2), which comes first in a step.
    # Three copies of the 128 x 64 and 64 x 256 tiles (156672 bytes) exceed the 48 KB of static
    # shared memory: they live in dynamic shared memory, loaded with the shared.dyn fragments.
    trace = trace_of(matmul_f16(2048, 2048, 2048))
    assert 'ann_key="software_pipeline_stage", ann_val=[0, 0, 2]' in trace
    assert 'ann_key="software_pipeline_order", ann_val=[1, 2, 0]' in trace
    assert 'ann_key="software_pipeline_async_stages", ann_val=[0]' in trace
    assert trace.count('storage_scope="shared.dyn"') == 2
    for intrin in ("wmma_load_16x16x16_f16_a_shared_dyn", "wmma_load_16x16x16_f16_b_shared_dyn"):
        assert f'tensor_intrin="{intrin}"' in trace
    # Two stages: the copies first in a step; static shared memory where it fits.
    two = trace_of(matmul_f16(2048, 2048, 2048), {"pipeline_stages": 2})
    assert 'ann_val=[0, 0, 1]' in two and 'ann_val=[0, 1, 2]' in two
    assert 'storage_scope="shared.dyn"' in two  # 2 x 52224 bytes > 48 KB
    # mma_copies_first: the copies before the mma in a step, with 3 stages too.
    assert 'ann_val=[0, 1, 2]' in trace_of(matmul_f16(2048, 2048, 2048), {"mma_copies_first": 1})
    small = trace_of(matmul_f16(32, 32, 256))  # 4 k0 steps of 64, 3 x 9728 bytes: static
    assert 'ann_val=[0, 0, 2]' in small and 'storage_scope="shared"' in small
    # No more stages than k0 steps; none with one step; none where the opt-in memory is short.
    assert 'ann_val=[0, 0, 1]' in trace_of(matmul_f16(32, 32, 128))
    assert "software_pipeline" not in trace_of(matmul_f16(32, 32, 64))
    assert "software_pipeline" not in trace_of(
        matmul_f16(2048, 2048, 2048), {"shared_memory_optin_bytes": 48 * 1024})


def test_tensor_core_declines():
    # Not a multiple of 16, float32 inputs, float16 accumulation: the SIMT rules take them.
    for func in (matmul_f16(40, 24, 20), matmul_f16(32, 32, 32, out="float16")):
        assert "tensorize" not in trace_of(func)
    a = te.placeholder((64, 64), "float32", name="A")
    b = te.placeholder((64, 64), "float32", name="B")
    r = te.reduce_axis((0, 64), name="k")
    c = te.compute((64, 64), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    assert "tensorize" not in trace_of(te.create_prim_func([a, b, c]))


@requires_nvrtc
def test_tensor_core_source():
    # What a Hopper GPU runs, compiled here with NVRTC for sm_90 without one.
    sch = ts.autoschedule(matmul_f16(2048, 2048, 2048), target="cuda", facts=UNPIPELINED)
    lib = ts.build(sch.mod, target="cuda -arch=sm_90")
    src = lib.get_source("cuda")
    # Per thread: the warp's 4 x 2 accumulators, 4 A and 2 B fragments (registers).
    assert "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> C_wmma_accumulator[8];" in src
    assert "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> A_shared_wmma_matrix_a[4];" in src
    assert "B_shared_wmma_matrix_b[2];" in src
    # Shared tiles with rows padded to 72 and 136 halves (32-byte aligned for wmma), filled with
    # 16-byte vectors.
    assert "__shared__ __align__(32) half A_shared[9216];" in src
    assert "__shared__ __align__(32) half B_shared[8704];" in src
    assert src.count("*(uint4*)(A_shared + ") == 1 and src.count("*(uint4*)(B_shared + ") == 1
    # The inner loop: mma on fragments with constant indices, fragments loaded from shared memory.
    assert re.search(r"mma_sync\(C_wmma_accumulator\[\d\], A_shared_wmma_matrix_a\[\d\], "
                     r"B_shared_wmma_matrix_b\[\d\], C_wmma_accumulator\[\d\]\)", src)
    assert src.count("nvcuda::wmma::mma_sync(") == 32  # 4 x 2 fragments, k1 unrolled (4 steps)
    for load in re.findall(r"load_matrix_sync\([^;]*;", src):
        assert "_shared + " in load and (", 72);" in load or ", 136);" in load)
    ptx = lib.get_source("ptx")
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" in ptx
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16" in ptx
    assert "ld.global.nc.v4" in ptx and "st.shared.v4" in ptx
    assert ".local" not in ptx  # the fragments stay in registers


def matmul_f16_both(m, n, k):
    """C32 = A @ B accumulated in float32 and C16 = float16(C32), both outputs."""
    a = te.placeholder((m, k), "float16", name="A")
    b = te.placeholder((k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")
    c32 = te.compute((m, n), lambda i, j: te.sum(a[i, r].astype("float32") * b[r, j].astype("float32"),
                                                 axis=r), name="C")
    c16 = te.compute((m, n), lambda i, j: c32[i, j].astype("float16"), name="C16")
    return te.create_prim_func([a, b, c32, c16])


def run_and_check(func, m, n, k, outputs):
    rng = np.random.default_rng(0)
    a = (rng.random((m, k)) - 0.5).astype("float16")
    b = (rng.random((k, n)) - 0.5).astype("float16")
    lib = ts.build(func, target="cuda")
    dev = ts.cuda(0)
    outs = [ts.nd.empty((m, n), dtype, dev) for dtype in outputs]
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), *outs)
    expect = a.astype("float32") @ b.astype("float32")
    for out in outs:
        np.testing.assert_allclose(out.numpy().astype("float32"), expect, rtol=2e-3, atol=2e-3)


@requires_gpu
def test_tensor_core_matches_numpy():
    # 32 x 48: tiles of 32 x 16 (not the 128 x 128 of large shapes); the float16 output (the
    # float32 accumulator cast) is an elementwise consumer of the tensor-core result.
    func = matmul_f16_both(32, 48, 32)
    assert 'tensor_intrin="wmma_sync_16x16x16_f16f16f32"' in trace_of(func)
    run_and_check(func, 32, 48, 32, ["float32", "float16"])


@requires_gpu
@pytest.mark.skipif(not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="a second emulator build; set TESSERA_SLOW_CUDA_TESTS=1")
def test_fallback_matches_numpy():
    # 20 x 24 x 18 is not a multiple of 16: the SIMT rules, float16 inputs all the same.
    run_and_check(matmul_f16(20, 24, 18), 20, 24, 18, ["float32"])


def build_scheduled(func, facts, target="cuda"):
    return ts.build(ts.autoschedule(func, target="cuda", facts=facts).mod, target=target)


@requires_gpu
def test_pipelined_tensor_core_matches_numpy():
    # 32 x 32 x 256: four k0 steps of 64, a 3-stage pipeline of cp.async copies. With 16 KB of
    # static shared memory the three versions (29184 bytes) go to dynamic shared memory.
    func = matmul_f16(32, 32, 256)
    rng = np.random.default_rng(1)
    a = (rng.random((32, 256)) - 0.5).astype("float16")
    b = (rng.random((256, 32)) - 0.5).astype("float16")
    lib = build_scheduled(func, {"shared_memory_bytes": 16384})
    src = lib.imported_modules[0].get_source()
    assert "TESSERA_DYNAMIC_SHARED(" in src and src.count("__tessera_cp_async<16>(") == 6
    assert src.count("__tessera_cp_async_wait<1>()") == 2 and src.count("__tessera_cp_async_wait<0>()") == 1
    dev = ts.cuda(0)
    c = ts.nd.empty((32, 32), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float32") @ b.astype("float32"), rtol=2e-3, atol=2e-3)


@requires_gpu
@pytest.mark.skipif(not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="a second emulator build; set TESSERA_SLOW_CUDA_TESTS=1")
def test_two_stage_pipeline_matches_numpy():
    func = matmul_f16(32, 32, 256)
    rng = np.random.default_rng(2)
    a = (rng.random((32, 256)) - 0.5).astype("float16")
    b = (rng.random((256, 32)) - 0.5).astype("float16")
    lib = build_scheduled(func, {"pipeline_stages": 2})
    dev = ts.cuda(0)
    c = ts.nd.empty((32, 32), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float32") @ b.astype("float32"), rtol=2e-3, atol=2e-3)


PTXAS = shutil.which("ptxas")


@requires_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_pipelined_source_and_ptxas(arch, tmp_path):
    # The 2048 matmul as a GPU runs it by default: cp.async copies (16 bytes, .cg), committed
    # and waited for by group, 3 x 52224 bytes of dynamic shared memory; ptxas (where
    # installed) allocates its registers without spilling.
    lib = ts.build(matmul_f16(2048, 2048, 2048), target=f"cuda -arch={arch}")
    src = lib.get_source("cuda")
    assert "__cvta_generic_to_shared" in src and "TESSERA_DYNAMIC_SHARED(" in src
    launch = [ln for ln in lib.get_source().splitlines() if "tessera_cuda_launch(\"" in ln]
    assert launch and "156672" in launch[0]
    # The copy loops' addresses: the part invariant in the copy loop first, then the loop's
    # term, so that nvcc folds each unrolled copy's constant into the shared-memory address.
    assert re.search(r"__tessera_cp_async<16>\(\(\(half\*\)A_shared_dyn \+ \(.*\)\) \+ \(ax\w* \* 2304\), "
                     r"\(\(const half\*\)A \+ \(.*\)\) \+ \(ax\w* \* 65536\)\);", src), src
    ptx = lib.get_source("ptx")
    # A and B copies of 4 and 8 x 16 bytes per thread (256 threads: 8 warps of 64 x 64), in
    # the two prologue steps and the steady loop.
    assert ptx.count("cp.async.cg.shared.global") == 3 * (4 + 8)
    assert "cp.async.commit_group" in ptx and "cp.async.wait_group 1" in ptx
    assert "cp.async.wait_group 0" in ptx
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" in ptx
    if PTXAS is None:
        pytest.skip("ptxas is not installed: registers and spills not checked")
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    out = subprocess.run([PTXAS, f"-arch={arch}", "-v", str(path), "-o", os.devnull],
                         capture_output=True, text=True, check=True).stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in out, out
    regs = int(re.search(r"Used (\d+) registers", out).group(1))
    # (4 x 4 accumulators of 8 floats per thread alone take 128 registers; 208 on sm_90 with
    # CUDA 13: one block of 256 threads per SM, as by shared memory)
    assert regs * 256 <= 65536, out


def test_cuda_facts_from_the_device_and_overrides():
    # The SM count and the opt-in shared memory come from GPU 0 where the driver sees one; the
    # sm_80 values (108 SMs, 163 KB) without one and under the emulator. Explicit facts win.
    from cuda_support import EMULATED, GPU_OK

    facts = ts.autoschedule.target_facts("cuda")
    if EMULATED or not GPU_OK:
        assert facts["sm_count"] == 108 and facts["shared_memory_optin_bytes"] == 163 * 1024
    assert facts["sm_count"] > 0 and facts["cores"] == facts["sm_count"]
    assert facts["mma_warp_m"] == 64 and facts["mma_warp_n"] == 64 and facts["mma_block_k"] == 64
    assert facts["mma_block_m"] == 128 and facts["mma_block_n"] == 256
    assert facts["mma_swizzle"] == 8 and facts["mma_stream_b"] == 0 and facts["mma_copies_first"] == 0
    assert facts["mma_fused_cast"] == 0
    over = ts.autoschedule.target_facts("cuda", {"sm_count": 7, "shared_memory_optin_bytes": 1 << 16,
                                                 "mma_swizzle": 0})
    assert over["sm_count"] == 7 and over["shared_memory_optin_bytes"] == 1 << 16
    with pytest.raises(ValueError, match="'sm_count' must be positive, got 0"):
        ts.autoschedule.target_facts("cuda", {"sm_count": 0})
    with pytest.raises(ValueError, match="'mma_swizzle' must be 0 or more, got -1"):
        ts.autoschedule.target_facts("cuda", {"mma_swizzle": -1})
    # The SM count decides how far a small grid's tiles are halved: 32 blocks of 128 x 256 or
    # 64 of 128 x 128 for 1024 x 1024 leave more than a quarter of 108 or 132 SMs idle, 128
    # of 64 x 128 do not
    # (rows: 2 warps of 2 fragments; columns: 2 warps of 4).
    for sms in (108, 132):
        trace = trace_of(matmul_f16(1024, 1024, 1024), {"sm_count": sms})
        assert "factors=[None, 2, 2, 16]" in trace and "factors=[None, 2, 4, 16]" in trace
    assert "factors=[None, 2, 4, 16]" not in trace_of(matmul_f16(1024, 1024, 1024), {"sm_count": 200})


@requires_gpu
@pytest.mark.skipif(_core.cuda_emulator_enabled() and not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="15 s on the emulator; set TESSERA_SLOW_CUDA_TESTS=1")
def test_default_warp_tiles_match_numpy():
    # 128 x 128 x 192 with the default tiles kept (sm_count 1: no halving for a small grid): one
    # block of 2 x 2 warps of 64 x 64 (4 x 4 fragments), three 64-deep k0 steps in 3 stages.
    func = matmul_f16(128, 128, 192)
    trace = trace_of(func, {"sm_count": 1})
    assert trace.count("factors=[None, 2, 4, 16]") == 2 and "ann_val=[0, 0, 2]" in trace
    rng = np.random.default_rng(3)
    a = (rng.random((128, 192)) - 0.5).astype("float16")
    b = (rng.random((192, 128)) - 0.5).astype("float16")
    lib = build_scheduled(func, {"sm_count": 1})
    dev = ts.cuda(0)
    c = ts.nd.empty((128, 128), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float32") @ b.astype("float32"), rtol=2e-3, atol=2e-3)


def test_large_block_tiles_keep_64_deep_steps():
    # 128 x 256 blocks (8 warps of 64 x 64): one 64-deep copy of the tiles (52224 bytes) exceeds
    # the 48 KB of static shared memory, but the pipeline's copies fit the opt-in dynamic memory,
    # so the reduction step stays 64 (3 stages, 156672 bytes). Without a pipeline, or where two
    # copies do not fit the opt-in memory, the step falls back to 32. (sm_count 1: the tiles
    # of a 256^3 matmul are not halved for a small grid.)
    func = matmul_f16(256, 256, 256)
    wide = trace_of(func, {"mma_block_n": 256, "sm_count": 1})
    assert "factors=[None, 2, 4, 16]" in wide and "factors=[None, 4, 4, 16]" in wide
    assert "factors=[None, 4, 16]" in wide and 'ann_val=[0, 0, 2]' in wide
    assert wide.count('storage_scope="shared.dyn"') == 2
    tall = trace_of(func, {"mma_block_m": 256, "mma_block_n": 128, "sm_count": 1})
    assert "factors=[None, 4, 4, 16]" in tall and "factors=[None, 2, 4, 16]" in tall
    assert "factors=[None, 4, 16]" in tall
    for facts in ({"pipeline_stages": 1}, {"shared_memory_optin_bytes": 100000}):
        trace = trace_of(func, {"mma_block_n": 256, "sm_count": 1, **facts})
        assert "factors=[None, 2, 16]" in trace and "factors=[None, 4, 4, 16]" in trace


@requires_nvrtc
@pytest.mark.skipif(not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="an NVRTC build of a second large kernel; set TESSERA_SLOW_CUDA_TESTS=1")
def test_large_block_tiles_ptxas(tmp_path):
    # A 128 x 256 block on sm_90 (as for the 4096 matmul): 256 threads, 3 x 52224 bytes of
    # dynamic shared memory, no spills.
    sch = ts.autoschedule(matmul_f16(256, 256, 256), target="cuda", facts={"mma_block_n": 256, "sm_count": 1})
    lib = ts.build(sch.mod, target="cuda -arch=sm_90")
    launch = [ln for ln in lib.get_source().splitlines() if "tessera_cuda_launch(\"" in ln]
    assert launch and "156672" in launch[0]
    assert "__launch_bounds__(256)" in lib.get_source("cuda")
    if PTXAS is None:
        pytest.skip("ptxas is not installed: registers and spills not checked")
    path = tmp_path / "k.ptx"
    path.write_text(lib.get_source("ptx"))
    out = subprocess.run([PTXAS, "-arch=sm_90", "-v", str(path), "-o", os.devnull],
                         capture_output=True, text=True, check=True).stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in out, out
    assert int(re.search(r"Used (\d+) registers", out).group(1)) * 256 <= 65536, out


@requires_gpu
@pytest.mark.skipif(_core.cuda_emulator_enabled() and not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="15 s on the emulator; set TESSERA_SLOW_CUDA_TESTS=1")
@pytest.mark.parametrize("shape, facts", [((128, 256, 192), {"mma_block_n": 256}),
                                          ((256, 128, 256), {"mma_block_m": 256, "mma_block_n": 128})])
def test_large_block_tiles_match_numpy(shape, facts):
    # One block of 8 warps of 64 x 64 (sm_count 1: no halving), 64-deep k0 steps in 3 stages.
    m, n, k = shape
    func = matmul_f16(m, n, k)
    facts = {"sm_count": 1, **facts}
    assert "ann_val=[0, 0, 2]" in trace_of(func, facts)
    rng = np.random.default_rng(4)
    a = (rng.random((m, k)) - 0.5).astype("float16")
    b = (rng.random((k, n)) - 0.5).astype("float16")
    lib = build_scheduled(func, facts)
    dev = ts.cuda(0)
    c = ts.nd.empty((m, n), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float32") @ b.astype("float32"), rtol=2e-3, atol=2e-3)


def matmul_f16_out(m, n, k):
    """D = float16(A @ B accumulated in float32): the cast is the only consumer of C."""
    a = te.placeholder((m, k), "float16", name="A")
    b = te.placeholder((k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r].astype("float32") * b[r, j].astype("float32"),
                                               axis=r), name="C")
    d = te.compute((m, n), lambda i, j: c[i, j].astype("float16"), name="D")
    return te.create_prim_func([a, b, d])


FUSED = {"mma_fused_cast": 1}
F16_STORE = 'tensor_intrin="wmma_store_16x16x16_f32_f16_global"'


def test_fused_cast_schedule():
    # By default the cast is a second kernel; with mma_fused_cast the fragments' store writes
    # float16 into D (C inlined away).
    # (256^3 with sm_count 1: the default 128 x 256 blocks of 8 warps, 3 stages of 52224 bytes)
    func = matmul_f16_out(256, 256, 256)
    FUSED = {"mma_fused_cast": 1, "sm_count": 1}
    default = trace_of(func, {"sm_count": 1})
    assert 'tensor_intrin="wmma_store_16x16x16_f32_global"' in default and "compute_inline" not in default
    fused = trace_of(func, FUSED)
    assert F16_STORE in fused and "sch.compute_inline(" in fused
    assert "wmma_store_16x16x16_f32_global" not in fused
    # C is an output itself: nothing to fuse. No room beside the pipeline's 156672 bytes for
    # the helper's 1 KB per warp: not fused either.
    assert F16_STORE not in trace_of(matmul_f16_both(256, 256, 256), FUSED)
    assert 'ann_val=[0, 0, 2]' in fused and "factors=[None, 4, 4, 16]" in fused
    assert F16_STORE not in trace_of(func, {**FUSED, "shared_memory_optin_bytes": 156672 + 4096})
    assert F16_STORE in trace_of(func, {**FUSED, "shared_memory_optin_bytes": 156672 + 8192})


@requires_gpu
@pytest.mark.skipif(_core.cuda_emulator_enabled() and not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="8 s on the emulator; set TESSERA_SLOW_CUDA_TESTS=1")
def test_fused_cast_matches_numpy():
    # 32 x 48 x 32 (tiles of 32 x 16, 4 warps): one kernel writes the float16 result.
    func = matmul_f16_out(32, 48, 32)
    assert F16_STORE in trace_of(func, FUSED)
    rng = np.random.default_rng(5)
    a = (rng.random((32, 32)) - 0.5).astype("float16")
    b = (rng.random((32, 48)) - 0.5).astype("float16")
    lib = build_scheduled(func, FUSED)
    assert lib.imported_modules[0].get_source().count("__global__") == 1
    dev = ts.cuda(0)
    d = ts.nd.empty((32, 48), "float16", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), d)
    expect = (a.astype("float32") @ b.astype("float32")).astype("float16")
    np.testing.assert_allclose(d.numpy().astype("float32"), expect.astype("float32"), rtol=2e-3, atol=2e-3)


@requires_nvrtc
@pytest.mark.skipif(not os.environ.get("TESSERA_SLOW_CUDA_TESTS"),
                    reason="NVRTC builds of a second large kernel; set TESSERA_SLOW_CUDA_TESTS=1")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_fused_cast_source_and_ptxas(arch, tmp_path):
    # The 2048 matmul with a float16 output in one kernel: the 16 fragments of each warp stored
    # through the helper (1 KB of static shared memory per warp beside the pipeline's dynamic
    # 156672 bytes); ptxas allocates it without spilling.
    lib = build_scheduled(matmul_f16_out(2048, 2048, 2048), FUSED, f"cuda -arch={arch}")
    src = lib.get_source("cuda")
    assert src.count("__global__") == 1 and src.count("__tessera_wmma_store_f16<8>(") == 16
    assert "float tile[WARPS][256]" in src
    if PTXAS is None:
        pytest.skip("ptxas is not installed: registers and spills not checked")
    path = tmp_path / "k.ptx"
    path.write_text(lib.get_source("ptx"))
    out = subprocess.run([PTXAS, f"-arch={arch}", "-v", str(path), "-o", os.devnull],
                         capture_output=True, text=True, check=True).stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in out and "8192 bytes smem" in out, out
    assert int(re.search(r"Used (\d+) registers", out).group(1)) * 256 <= 65536, out
    # The target option -loop_addresses=0 prints a copy's address as one sum (to compare).
    plain = ts.build(matmul_f16_out(2048, 2048, 2048), target=f"cuda -arch={arch} -loop_addresses=0")
    copies = [ln for ln in plain.get_source("cuda").splitlines() if "__tessera_cp_async<16>(" in ln]
    assert copies and all("__tessera_cp_async<16>((half*)" in ln for ln in copies)
