"""The register-tile micro-kernel intrinsics tessera_ukr_f32_<MR>x<NR>_k<K>: made from their
name, tensorized over packed panels, built by the host code generator (which defines the C
function once per module) and checked against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import ScheduleError
from tessera.script import tir as T
from tessera.tir.tensor_intrin import x86


def packed_matmul(M, N, K, mr, nr):
    @T.prim_func
    def matmul(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")):
        for i, j, k in T.grid(M, N, K):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    a_panels = sch.cache_read(c, 0, "global")
    sch.transform_layout(a_panels, ("write", 0), lambda u, v: (u // mr, v, u % mr))
    b_panels = sch.cache_read(c, 1, "global")
    sch.transform_layout(b_panels, ("write", 0), lambda u, v: (v // nr, u, v % nr))
    tile = sch.cache_write(c, 0, "local")
    i, j, k = sch.get_loops(c)
    io, ii = sch.split(i, [None, mr])
    jo, ji = sch.split(j, [None, nr])
    sch.reorder(jo, io, k, ii, ji)
    sch.reverse_compute_at(tile, io)
    sch.decompose_reduction(c, k)
    return sch, k


def run(sch, M, N, K, seed=0, target="c"):
    lib = ts.build(sch.mod, target=target)
    rng = np.random.default_rng(seed)
    a = rng.random((M, K), dtype="float32")
    b = rng.random((K, N), dtype="float32")
    out = ts.nd.array(np.zeros((M, N), "float32"))
    lib(ts.nd.array(a), ts.nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    return lib


# (M, N, K, MR, NR): the AVX2 assembly tiles (6x16, 4x24, 8x8) with a reduction not a multiple
# of the unrolling (4), and 8x16 (18 registers: the C loop nest on any host); K = 256 makes the
# unrolled loop count (64) equal to the tile's row stride in bytes (16 floats), two constants
# that must not share a register in the assembly.
@pytest.mark.parametrize("shape", [(12, 32, 30, 6, 16), (8, 48, 17, 4, 24), (16, 16, 8, 8, 8),
                                   (16, 32, 5, 8, 16), (12, 16, 256, 6, 16)])
def test_tensorized_matmul_matches_numpy(shape):
    M, N, K, mr, nr = shape
    sch, k = packed_matmul(M, N, K, mr, nr)
    name = x86.micro_kernel_intrin(mr, nr, K)
    assert name == f"tessera_ukr_f32_{mr}x{nr}_k{K}"
    sch.tensorize(k, name)
    script = sch.mod.script()
    assert f'T.call_extern("void", "tessera_ukr_f32_{mr}x{nr}", {K},' in script
    assert "C_update" not in script.replace("C_update_o", "")
    lib = run(sch, M, N, K)
    source = lib.get_source()
    # One definition per module, before its use.
    assert source.count(f"static void tessera_ukr_f32_{mr}x{nr}(") == 1
    assert ("%%ymm" in source) == avx2_fits(mr, nr)
    assert ("%%zmm" in source) == avx512_fits(mr, nr)


def avx2_fits(mr, nr):
    return nr % 8 == 0 and mr * (nr // 8) + nr // 8 + 1 <= 16


def avx512_fits(mr, nr):
    return nr % 16 == 0 and mr * (nr // 16) + nr // 16 + 1 <= 32


# The kernel's bodies, chosen by the C compiler's target: "c" is the host's (-march=native:
# AVX-512 where it has it), "-mattr=-avx512f" keeps at most AVX2, "-mattr=-avx2" leaves the C
# loop nest; every one against numpy. Tiles: one zmm vector a row (8x16: a's elements broadcast
# in the FMA), two (14x32: 28 accumulators, broadcasts into registers), four (6x64) and three
# (4x48); 16x16 (16 accumulators); reductions not a multiple of the unrolling (4), and K = 256.
@pytest.mark.parametrize("attrs", ["", " -mattr=-avx512f", " -mattr=-avx2"])
@pytest.mark.parametrize("shape", [(16, 32, 29, 8, 16), (28, 64, 31, 14, 32), (12, 128, 6, 6, 64),
                                   (8, 96, 256, 4, 48), (32, 16, 3, 16, 16)])
def test_kernel_bodies_match_numpy(shape, attrs):
    M, N, K, mr, nr = shape
    assert avx512_fits(mr, nr)
    sch, k = packed_matmul(M, N, K, mr, nr)
    sch.tensorize(k, x86.micro_kernel_intrin(mr, nr, K))
    source = run(sch, M, N, K, target="c" + attrs).get_source()
    assert "defined(__AVX512F__)" in source
    assert "vfmadd231ps 0(%[a])%{1to16%}" in source if nr == 16 else "vbroadcastss 0(%[a]), %%zmm" in source


def test_intrinsic_is_made_from_its_name():
    intrin = tir.TensorIntrin.get("tessera_ukr_f32_6x16_k64")
    desc = intrin.desc.script()
    assert "T.grid(64, 6, 16)" in desc
    assert 'scope="local"' in desc
    assert "tessera_ukr_f32_6x16" in intrin.impl.script()


def test_global_variant_accumulates_into_c_over_k_blocks():
    # C += A B with the reduction in two k blocks of 16, each call adding into the output itself
    # (C in global memory, row stride N), after an init that zeroes it once.
    M, N, K, mr, nr = 12, 32, 32, 6, 16
    intrin = tir.TensorIntrin.get(x86.micro_kernel_intrin(mr, nr, 16, global_c=True))
    assert 'scope="local"' not in intrin.desc.script()

    @T.prim_func
    def matmul(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")):
        for i, j, k in T.grid(M, N, K):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    a_panels = sch.cache_read(c, 0, "global")
    sch.transform_layout(a_panels, ("write", 0), lambda u, v: (u // mr, v, u % mr))
    b_panels = sch.cache_read(c, 1, "global")
    sch.transform_layout(b_panels, ("write", 0), lambda u, v: (v // nr, u, v % nr))
    i, j, k = sch.get_loops(c)
    io, ii = sch.split(i, [None, mr])
    jo, ji = sch.split(j, [None, nr])
    ko, ki = sch.split(k, [None, 16])
    sch.reorder(ko, jo, io, ki, ii, ji)
    sch.decompose_reduction(c, ko)
    sch.tensorize(ki, x86.micro_kernel_intrin(mr, nr, 16, global_c=True))
    assert 'T.call_extern("void", "tessera_ukr_f32_6x16", 16,' in sch.mod.script()
    run(sch, M, N, K)


def test_intrinsic_name_out_of_range_is_value_error():
    with pytest.raises(ValueError, match="1 <= MR <= 16"):
        tir.TensorIntrin.get("tessera_ukr_f32_0x16_k64")
    assert tir.TensorIntrin.get("tessera_ukr_f32_6x16", allow_missing=True) is None


def test_tensorize_wrong_tile_is_schedule_error():
    sch, k = packed_matmul(12, 32, 8, 6, 16)
    with pytest.raises(ScheduleError, match="cannot be replaced by the tensor intrinsic"):
        sch.tensorize(k, x86.micro_kernel_intrin(6, 16, 16))
