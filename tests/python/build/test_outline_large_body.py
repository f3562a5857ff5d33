"""tir.OutlineLargeBody: long sequences of a host function are cut into private C functions of
a bounded size (the C compiler's time is superlinear in the size of one function), with the
same results; statements that must stay (asserts, returns, writes of local scalars) stay."""

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.script import tir as T


def _wide(n):
    A = te.placeholder((n,), name="A", dtype="float32")
    outs = [te.compute((1,), lambda i, s=s: A[s] * 2.0 + 1.0, name=f"O{s}") for s in range(n)]
    return te.create_prim_func([A] + outs)


def _build(func, max_nodes):
    with ts.transform.PassContext(config={"tir.OutlineLargeBody": {"max_nodes": max_nodes}}):
        return ts.build(func, target="c")


def test_wide_function_is_split_into_parts_that_read_their_own_arguments():
    n = 300
    lib = _build(_wide(n), 200)
    src = lib.get_source()
    parts = src.count("static void main_part")
    assert parts >= 5, parts
    # The parts take the packed arguments and read the data pointers they use themselves, so
    # the entry keeps no pointer live across the calls.
    assert "static void main_part0(void* args)" in src
    a = np.random.rand(n).astype("float32")
    outs = [np.zeros(1, "float32") for _ in range(n)]
    lib(a, *outs)
    np.testing.assert_allclose(np.concatenate(outs), a * 2 + 1, rtol=1e-6)


def test_small_functions_and_a_zero_budget_are_left_alone():
    assert "main_part" not in ts.build(_wide(4), target="c").get_source()
    assert "main_part" not in _build(_wide(300), 0).get_source()


def test_asserts_returns_and_local_scalars_stay_in_the_function():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), n: T.int32) -> T.int32:
        acc = T.alloc_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0)
        for i in range(32):
            A[i] = A[i] + T.float32(1)
        for i in range(32):
            acc[0] = acc[0] + A[i]
        assert n < 100, "n must be below 100"
        for i in range(32):
            A[i + 32] = acc[0] + T.Cast("float32", n)
        return n + 1

    lib = _build(f, 30)
    src = lib.get_source()
    a = np.zeros(64, "float32")
    assert lib(a, 5) == 6
    np.testing.assert_allclose(a[:32], 1.0)
    np.testing.assert_allclose(a[32:], 32.0 + 5)
    with pytest.raises(RuntimeError, match="n must be below 100"):
        lib(a, 200)
    # Loops moved to parts; the assert's message stays in the entry.
    assert "static void f_part0" in src
    entry = src[src.index("__tessera_packed_f"):]
    assert "n must be below 100" in entry

