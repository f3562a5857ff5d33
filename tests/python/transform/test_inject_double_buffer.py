"""tir.InjectDoubleBuffer: a buffer filled in each iteration gets two halves."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


@T.prim_func
def row_sums(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        cache = T.decl_buffer(32, "float32")
        T.attr(cache.data, "double_buffer_scope", 1)
        for j in range(32):
            cache[j] = A[i, j]
        B[i] = T.float32(0)
        for j in range(32):
            B[i] = B[i] + cache[j]


def inject(func, split_loop=None):
    mod = ts.ir.IRModule({"main": func})
    config = {} if split_loop is None else {"tir.InjectDoubleBuffer": {"split_loop": split_loop}}
    with ts.transform.PassContext(config=config):
        mod = tt.InjectDoubleBuffer()(mod)
    return mod


def test_prologue_then_loop_over_the_next_iteration():
    after = tt.RemoveNoOp()(tt.Simplify()(inject(row_sums)))["main"]

    @T.prim_func
    def expected(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
        cache = T.decl_buffer(64, "float32")
        for j in range(32):
            cache[j] = A[0, j]
        B[0] = T.float32(0)
        for j in range(32):
            B[0] = B[0] + cache[j]
        for i_outer in range(15):
            T.attr(cache.data, "double_buffer_write", 1)
            for j in range(32):
                cache[(i_outer + 1) % 2 * 32 + j] = A[i_outer + 1, j]
            B[i_outer + 1] = T.float32(0)
            for j in range(32):
                B[i_outer + 1] = B[i_outer + 1] + cache[(i_outer + 1) % 2 * 32 + j]

    assert_structural_equal(after, expected.with_attr("global_symbol", after.attrs["global_symbol"]))
    assert not ts.ir.structural_equal(after, row_sums.with_attr("global_symbol",
                                                                after.attrs["global_symbol"]))


def test_split_loop_runs_pairs_of_iterations_and_the_result_is_the_same():
    mod = inject(row_sums, split_loop=2)
    loops = []
    ts.tir.stmt_functor.post_order_visit(
        tt.Simplify()(mod)["main"].body,
        lambda n: loops.append(n) if isinstance(n, ts.tir.For) else None)
    # 15 iterations after the prologue: 7 pairs, then iteration 15 alone.
    assert [int(f.extent) for f in loops if f.loop_var.name == "i.outer"] == [7]
    a = np.random.default_rng(0).standard_normal((16, 32)).astype("float32")
    for m in (mod, inject(row_sums)):
        b = np.zeros(16, dtype="float32")
        ts.build(m, target="c")(a, b)
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_buffer_used_as_a_value_is_left_single():
    @T.prim_func
    def before(A: T.Buffer((8, 4), "float32")):
        for i in range(8):
            cache = T.decl_buffer(4, "float32")
            T.attr(cache.data, "double_buffer_scope", 1)
            T.evaluate(T.address_of(cache[0]))
            T.evaluate(cache.data)
            for j in range(4):
                cache[j] = A[i, j]

    after = inject(before)["main"]
    assert_structural_equal(after, before.with_attr("global_symbol", after.attrs["global_symbol"]))


def test_scope_outside_a_loop_is_an_error():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        cache = T.decl_buffer(4, "float32")
        T.attr(cache.data, "double_buffer_scope", 1)
        for j in range(4):
            cache[j] = A[j]

    with pytest.raises(TesseraError, match="the double_buffer_scope of cache must be inside a loop"):
        inject(before)
