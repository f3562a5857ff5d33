"""The micro-kernel choice on hosts of 16 float lanes (AVX-512): the register tiles of 32 zmm
registers (NR a multiple of 16, up to 28 accumulators) as the intrinsic and the blocked
intrinsic, against numpy. The facts of an AVX-512 host are given explicitly, so that the space
is the same on any x86 host; the kernels are compiled for the host (-march=native), i.e. with
the AVX-512 body where it has AVX-512F and the AVX2 body or the C loop nest elsewhere, all of
which compute the same product."""

import re

import numpy as np
import pytest

import tessera as ts
from micro_kernel_helpers import product, replay_in_fresh_process
from tessera.tir.tensor_intrin import x86
from tessera.tune.space import RuleSpace

pytestmark = pytest.mark.skipif(x86.host_lanes32() < 8, reason="the choice exists on x86 hosts with AVX2")
AVX512 = {"vector_bits": 512, "vector_registers": 32}
AVX2 = {"vector_bits": 256, "vector_registers": 16}


def kernel_point(space, tile, ukr, blocks=()):
    """The point of register tile index `tile` with the micro-kernel choice `ukr` (1: intrinsic,
    2: blocked) and its KC, MC, NC indices `blocks`, the other choices the rules' own; None
    where the tile has no micro-kernel choice."""
    sch, d = space._point([tile], 1, draw_missing=False)
    sizes = space._sizes[tuple(d)]
    threes = [k for k, n in enumerate(sizes) if n == 3]
    if not threes:
        return None
    at = threes[-1]
    sch, taken = space.apply(list(d[:at]) + [ukr] + list(blocks))
    if "tessera_ukr_f32_" not in str(sch.trace):
        return None  # the last choice of three candidates was another one (an unrolling)
    assert taken[:at + 1] == list(d[:at]) + [ukr]  # (a block size of one candidate is no choice)
    return sch


def tiles_offered(func, facts, target="c"):
    """(MR, NR) of every register tile with a micro-kernel choice."""
    space = RuleSpace(func, target, parallel=False, facts=facts)
    _, default = space.default()
    out = []
    for t in range(space._sizes[tuple(default)][0]):
        sch = kernel_point(space, t, 1)
        if sch is not None:
            mr, nr = re.search(r"tessera_ukr_f32_(\d+)x(\d+)_k", str(sch.trace)).groups()
            out.append((int(mr), int(nr)))
    return out


def test_avx512_offers_tiles_of_32_zmm_registers():
    tiles = tiles_offered(product(1024, 1024, 1024), AVX512)
    assert tiles, "no micro-kernel tile offered on an AVX-512 host"
    for mr, nr in tiles:
        assert nr % 16 == 0 and mr * (nr // 16) + nr // 16 + 1 <= 32, (mr, nr)
    # the tiles of BLIS's AVX-512 kernels and their kin, beyond the 16 ymm registers of AVX2
    assert {(14, 32), (12, 32), (8, 32), (6, 64)} <= set(tiles)
    assert max(mr * nr // 16 for mr, nr in tiles) > 16


def test_avx2_offers_tiles_of_16_ymm_registers():
    tiles = tiles_offered(product(1024, 1024, 1024), AVX2)
    assert (6, 16) in tiles and (4, 16) in tiles
    for mr, nr in tiles:
        assert nr % 8 == 0 and mr * (nr // 8) + nr // 8 + 1 <= 16, (mr, nr)


def test_no_micro_kernel_on_four_lanes():
    assert tiles_offered(product(64, 64, 64), {"vector_bits": 128, "vector_registers": 16}) == []


def run(sch, args, shape):
    lib = ts.build(sch.mod, target="c")
    out = ts.nd.array(np.full(shape, np.nan, "float32"))
    lib(*[ts.nd.array(a) for a in args], out)
    return out.numpy(), lib.get_source()


# Odd shapes on the AVX-512 space: rows not a multiple of MR (padded), reductions not a multiple
# of 4, the dense form; every offered tile with both kernel choices (the blocked one with its
# smallest KC, i.e. several k blocks where the reduction has divisors from 128).
@pytest.mark.parametrize("M,N,K,transposed", [(50, 64, 30, False), (37, 96, 300, True), (61, 32, 513, False)])
def test_avx512_tiles_match_numpy(M, N, K, transposed):
    func = product(M, N, K, transposed)
    space = RuleSpace(func, "c", parallel=False, facts=AVX512)
    rng = np.random.default_rng(7)
    a = rng.random((M, K), dtype="float32") - 0.5
    b = rng.random((N, K) if transposed else (K, N), dtype="float32") - 0.5
    want = a @ (b.T if transposed else b)
    _, default = space.default()
    seen = set()
    for t in range(space._sizes[tuple(default)][0]):
        for ukr in (1, 2):
            sch = kernel_point(space, t, ukr, [0] if ukr == 2 else [])
            if sch is None:
                continue
            name = re.search(r"tessera_ukr_f32_\d+x\d+_k\d+(_global)?", str(sch.trace)).group(0)
            seen.add(name)
            got, source = run(sch, [a, b], (M, N))
            assert "%%zmm" in source
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3, err_msg=name)
    assert any(n.endswith("_global") for n in seen) and any(not n.endswith("_global") for n in seen)


def test_avx512_blocked_point_replays_in_a_fresh_process():
    # The tuner's workers replay traces in processes of their own: the 14 x 32 tile (28
    # accumulators, rows padded), blocked, must come back the same from its trace alone.
    func = product(130, 64, 256)
    space = RuleSpace(func, "c", parallel=False, facts=AVX512)
    _, default = space.default()
    sch = None
    for t in range(space._sizes[tuple(default)][0]):
        cand = kernel_point(space, t, 2, [0])
        if cand is not None and "tessera_ukr_f32_14x32_k" in str(cand.trace):
            sch = cand
            break
    assert sch is not None
    _, replayed = replay_in_fresh_process(func, sch)
    assert replayed.strip() == sch.mod.script().strip()
    rng = np.random.default_rng(8)
    a, b = rng.random((130, 256), dtype="float32"), rng.random((256, 64), dtype="float32")
    got, _ = run(sch, [a, b], (130, 64))
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(x86.host_lanes32() != 16, reason="an AVX-512 host")
def test_mattr_without_avx512_plans_for_avx2():
    # The compiler told not to use AVX-512F: the facts, and with them the tiles, are AVX2's.
    from tessera.autoschedule import target_facts

    facts = target_facts("c -mattr=-avx512f")
    assert (facts["vector_bits"], facts["vector_registers"]) == (256, 16)
    assert target_facts("c")["vector_bits"] == 512
    tiles = tiles_offered(product(1024, 1024, 1024), {}, "c -mattr=-avx512f")
    assert (6, 16) in tiles
    for mr, nr in tiles:
        assert nr % 8 == 0 and mr * (nr // 8) + nr // 8 + 1 <= 16, (mr, nr)


def test_mattr_without_fma_offers_no_micro_kernel():
    # No FMA (nor AVX2): the kernels' assembly could not be compiled, so no choice is offered.
    assert tiles_offered(product(64, 64, 64), {})  # the host's own
    assert tiles_offered(product(64, 64, 64), {}, "c -mattr=-fma") == []
