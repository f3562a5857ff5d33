"""The automatic schedule's micro-kernel choice for float32 2-D products on hosts of 8 float
lanes (AVX2; on an AVX-512 host the target c -mattr=-avx512f, which has their facts): "loops" (the rules' default) or "intrinsic" (the register-tile tensor intrinsic
tessera_ukr_f32_<MR>x<NR>_k<K> over packed panels, rows padded to a multiple of MR) or "blocked
intrinsic" (the same kernel accumulating into C itself over k blocks of KC, in BLIS's loop nest
with KC, MC and NC as further choices)."""

import json
import re

import numpy as np
import pytest

import tessera as ts
from tessera import te
from micro_kernel_helpers import product, replay_in_fresh_process
from tessera.tir.tensor_intrin import x86
from tessera.tune.space import RuleSpace as _RuleSpace

# The AVX2 form of the choice: on an AVX-512 host the target without AVX-512F, whose facts are
# an AVX2 host's (8 float lanes, 16 registers), so that the tiles of 16 ymm registers are
# offered and their kernels are compiled with the AVX2 body.
pytestmark = pytest.mark.skipif(x86.host_lanes32() < 8, reason="the choice exists on AVX2 and AVX-512 hosts")
TARGET = "c" if x86.host_lanes32() == 8 else "c -mattr=-avx512f"


def RuleSpace(func, target="c", parallel=True, facts=None):
    return _RuleSpace(func, TARGET if target == "c" else target, parallel=parallel, facts=facts)


def with_intrinsic(space):
    _, default = space.default()
    point = list(default)
    point[-1] = 1  # the micro-kernel choice is the rule's last
    sch, taken = space.apply(point)
    assert taken == point
    return sch


# Rows not a multiple of MR (50 = 8 x 6 + 2: padded), a reduction not a multiple of 4; the
# dense form (B read as [j, k]).
@pytest.mark.parametrize("transposed", [False, True])
def test_intrinsic_choice_matches_numpy(transposed):
    M, N, K = 50, 64, 30
    sch = with_intrinsic(RuleSpace(product(M, N, K, transposed), "c", parallel=False))
    script = sch.mod.script()
    assert 'T.call_extern("void", "tessera_ukr_f32_' in script
    assert "C_pad" in script  # the rows' padding
    lib = ts.build(sch.mod, target=TARGET)
    rng = np.random.default_rng(2)
    a = rng.random((M, K), dtype="float32")
    b = rng.random((N, K) if transposed else (K, N), dtype="float32")
    out = ts.nd.array(np.zeros((M, N), "float32"))
    lib(ts.nd.array(a), ts.nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), a @ (b.T if transposed else b), rtol=1e-4, atol=1e-4)


def test_default_keeps_the_loops_and_replay_is_exact():
    space = RuleSpace(product(48, 64, 32), "c", parallel=False)
    sch, _ = space.default()
    assert "tessera_ukr_f32" not in sch.mod.script()
    first = with_intrinsic(space)
    again = with_intrinsic(space)
    ts.ir.assert_structural_equal(first.mod, again.mod)
    assert str(first.trace) == str(again.trace)


# ---- the third alternative: the intrinsic accumulating into C over k blocks (BLIS's nest) ----


def blocked_point(space, blocks):
    """The default point with the micro-kernel choice set to "blocked intrinsic" and its KC, MC,
    NC choices set to `blocks` (indices)."""
    _, default = space.default()
    sizes = space._sizes[tuple(default)]
    at = [k for k, n in enumerate(sizes) if n == 3][-1]  # the micro-kernel choice
    point = list(default[:at]) + [2] + list(blocks)
    sch, taken = space.apply(point)
    assert taken[:len(point)] == point
    return sch


def run(sch, args, shape):
    lib = ts.build(sch.mod, target=TARGET)
    # The output starts as garbage: the nest must zero it before the first k block.
    out = ts.nd.array(np.full(shape, np.nan, "float32"))
    lib(*[ts.nd.array(a) for a in args], out)
    return out.numpy()


# Odd shapes: rows not a multiple of MR (padded), two k blocks of 171 (K = 513), two row blocks
# and four column blocks; the dense form with a reduction not a multiple of 4.
@pytest.mark.parametrize("M,N,K,transposed,blocks,kc", [
    (130, 256, 513, False, [0, 0, 0], 171),
    (37, 48, 300, True, [0], 150),
])
def test_blocked_choice_matches_numpy(M, N, K, transposed, blocks, kc):
    sch = blocked_point(RuleSpace(product(M, N, K, transposed), "c", parallel=False), blocks)
    script = sch.mod.script()
    # k blocks of KC, each call accumulating into C itself
    assert re.search(f'"tessera_ukr_f32_[0-9]+x[0-9]+", {kc},', script)
    assert "C_init" in script
    rng = np.random.default_rng(3)
    a = rng.random((M, K), dtype="float32")
    b = rng.random((N, K) if transposed else (K, N), dtype="float32")
    got = run(sch, [a, b], (M, N))
    np.testing.assert_allclose(got, a @ (b.T if transposed else b), rtol=1e-4, atol=1e-3)


def test_blocked_choice_parallel_with_epilogue():
    # Two column blocks, one per thread; the epilogue (bias, relu) once per column block.
    M, N, K = 40, 128, 256
    A = te.placeholder((M, K), "float32", name="A")
    B = te.placeholder((K, N), "float32", name="B")
    bias = te.placeholder((N,), "float32", name="bias")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((M, N), lambda i, j: te.max(C[i, j] + bias[j], te.const(0.0, "float32")),
                   name="D")
    space = RuleSpace(te.create_prim_func([A, B, bias, D]), "c", parallel=True,
                      facts={"cores": 2})
    sch = blocked_point(space, [])
    script = sch.mod.script()
    assert "T.parallel(2)" in script and "_global" in str(sch.trace)
    rng = np.random.default_rng(4)
    a, b = rng.random((M, K), dtype="float32") - 0.5, rng.random((K, N), dtype="float32") - 0.5
    c = rng.random(N, dtype="float32") - 0.5
    got = run(sch, [a, b, c], (M, N))
    np.testing.assert_allclose(got, np.maximum(a @ b + c, 0), rtol=1e-4, atol=1e-4)


def test_blocked_choice_replays_from_its_trace():
    from tessera.tune import TuningRecord, replay

    func = product(60, 64, 512)
    space = RuleSpace(func, "c", parallel=False)
    sch = blocked_point(space, [0])  # KC = 128
    rec = TuningRecord(workload="w", target="c", trace=json.dumps(sch.trace.as_json()),
                       decisions=[], times=[1.0], error=None)
    again = replay(func, rec)
    ts.ir.assert_structural_equal(sch.mod, again.mod)
    assert "tessera_ukr_f32_6x16_k128_global" in str(again.trace)


def test_padded_trace_replays_in_a_fresh_process():
    # The tuner's workers replay traces in processes of their own: pad_einsum (the rows padded
    # to a multiple of MR) must be a known instruction kind there, not only where it was made.
    func = product(50, 64, 30)
    sch = blocked_point(RuleSpace(func, "c", parallel=False), [])
    trace, replayed = replay_in_fresh_process(func, sch)
    assert '"PadEinsum"' in trace
    assert replayed.strip() == sch.mod.script().strip()


@pytest.mark.parametrize("M", [48, 50])  # 48 rows: tiles of 6 rows without padding; 50: padded
def test_blocked_choice_zero_fill_stores_whole_rows(M):
    # The zero fill before the first k block: the row loops outside, the NC columns of the
    # column block one vectorized loop inside (rows of C stored contiguously), not the nest's
    # order of 16-column panels down the rows.
    N, K = 64, 128
    sch = blocked_point(RuleSpace(product(M, N, K), "c", parallel=False), [])
    init = sch.get_block("C_init")
    loops = [sch.get(rv) for rv in sch.get_loops(init)]
    inner = loops[-1]
    assert "vectoriz" in str(inner.kind).lower()
    assert int(inner.extent) == N  # one column block of all 64 columns (NC by choice the widest)
    assert all("vectoriz" not in str(lp.kind).lower() for lp in loops[:-1])
    body = sch.get(init)
    written = body.writes[0].buffer.name
    assert written == ("C" if M == 48 else "C_pad")
    rng = np.random.default_rng(5)
    a, b = rng.random((M, K), dtype="float32"), rng.random((K, N), dtype="float32")
    np.testing.assert_allclose(run(sch, [a, b], (M, N)), a @ b, rtol=1e-4, atol=1e-3)


def test_blocked_choice_prefers_k_blocks_of_512():
    # KC by the rules' choice: the candidate closest to 512 (the divisors of the reduction from
    # 128 to 512, and the whole reduction).
    for K, kc in [(1024, 512), (300, 300), (768, 384)]:  # 300: 150 or 300; 768: 128 .. 384, 768
        space = RuleSpace(product(48, 64, K), "c", parallel=False)
        _, default = space.default()
        sizes = space._sizes[tuple(default)]
        at = [k for k, n in enumerate(sizes) if n == 3][-1]  # the micro-kernel choice
        sch, _ = space._point(list(default[:at]) + [2], 1, draw_missing=False)  # the rest: the rules'
        assert f"_k{kc}_global" in str(sch.trace), K
