"""The automatic schedule's micro-kernel choice for float32 2-D products on hosts of 8 float
lanes (AVX2): "loops" (the rules' default) or "intrinsic" (the register-tile tensor intrinsic
tessera_ukr_f32_<MR>x<NR>_k<K> over packed panels, rows padded to a multiple of MR)."""

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.tir.tensor_intrin import x86
from tessera.tune.space import RuleSpace

pytestmark = pytest.mark.skipif(x86.host_lanes32() != 8, reason="the choice exists on 8-lane (AVX2) hosts")


def product(M, N, K, transposed=False):
    A = te.placeholder((M, K), "float32", name="A")
    B = te.placeholder((N, K) if transposed else (K, N), "float32", name="B")
    k = te.reduce_axis((0, K), name="k")
    if transposed:
        C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    else:
        C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


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
    lib = ts.build(sch.mod, target="c")
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
