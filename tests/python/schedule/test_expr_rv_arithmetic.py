"""ExprRVs (the values sampling instructions draw) in expressions, as TVM's (where an ExprRV is a
Var): `j1 * j2` in an index map stands for the drawn value when the primitive runs."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def scale(A: T.Buffer((4, 32), "float32"), C: T.Buffer((4, 32), "float32")):
    B = T.alloc_buffer((4, 32), "float32")
    for i, j in T.grid(4, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(3)
    for i, j in T.grid(4, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def sampled(sch):
    loop = sch.get_loops(sch.get_block("B"))[-1]
    return sch.sample_perfect_tile(loop, 3, decision=[2, 4, 4])


def test_arithmetic_of_expr_rvs_is_an_expression():
    sch = tir.Schedule(scale)
    _, j1, j2 = sampled(sch)
    for e in (j1 * j2, j1 + 1, 2 * j2, 32 // j1, j1 - j2, -j1):
        assert isinstance(e, ts.tir.PrimExpr)
    # The same handle is the same variable in every expression.
    assert (j1 * 2).a.same_as((j1 + 1).a)


def test_index_map_with_expr_rvs(golden):
    @T.prim_func
    def expected(A: T.Buffer((4, 32), "float32"), C: T.Buffer((4, 32), "float32")):
        B = T.alloc_buffer((4, 2, 16), "float32")
        for i, j in T.grid(4, 32):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj // 16, vj % 16] = A[vi, vj] * T.float32(3)
        for i, j in T.grid(4, 32):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj // 16, vj % 16] + T.float32(1)

    def apply(sch):
        _, j1, j2 = sampled(sch)
        sch.transform_layout(sch.get_block("B"), ("write", 0),
                             lambda i, j: (i, j // (j1 * j2), j % (j1 * j2)))

    sch = golden(scale, expected, apply)
    # The trace holds the drawn value, so it replays without the sampling's handles.
    assert "lambda i, j: (i, j // 16, j % 16)" in "\n".join(sch.trace.as_python())
    lib = ts.build(sch.mod, target="c")
    a = np.random.RandomState(2).rand(4, 32).astype("float32")
    c = ts.nd.array(np.zeros((4, 32), "float32"))
    lib(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 3 + 1, rtol=1e-6)


def test_expr_rv_of_another_schedule_is_refused():
    other = tir.Schedule(scale)
    _, j1, j2 = sampled(other)
    sch = tir.Schedule(scale)
    with pytest.raises(ValueError, match="does not belong to this schedule"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i, j // j1, j % j1))
