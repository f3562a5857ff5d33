"""floor, ceil, trunc and round in a vectorized loop: one vector rounding instruction on x86
(the host code is compiled with -fno-trapping-math), with numpy's results on ties, signed
zeros, infinities and NaN."""

import platform

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.tir import Schedule

VALUES = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.7, -3.7, np.inf, -np.inf, np.nan,
                   1e30, -1e-30, 8388609.0], "float32")


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_vectorized_rounding(name):
    n = 64
    A = te.placeholder((n,), "float32", name="A")
    B = getattr(topi, name)(A)
    sch = Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block(B.op.name))
    _, inner = sch.split(i, [None, 8])
    sch.vectorize(inner)
    lib = ts.build(sch.mod, target="c")
    a = np.resize(VALUES, n).astype("float32")
    out = np.zeros(n, "float32")
    lib(a, out)
    np.testing.assert_array_equal(out, getattr(np, name)(a))
    np.testing.assert_array_equal(np.signbit(out), np.signbit(getattr(np, name)(a)))
    if platform.machine() in ("x86_64", "AMD64") and name != "round":
        asm = lib.get_source("asm")
        assert f"{name}f" not in asm  # no call, no scalar per-lane rounding
        assert "vrndscaleps" in asm or "vroundps" in asm
