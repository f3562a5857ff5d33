"""set_scope of a buffer that blocks view through T.match_buffer: the views move to the new
scope with it (a match of a match too), the values stay the same."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


@T.prim_func
def viewed(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4), "float32")
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            row = T.match_buffer(B[vi, 0:4], (4,), offset_factor=1)
            for j in T.serial(4):
                with T.block("B_inner"):
                    vj = T.axis.remap("S", [j])
                    cell = T.match_buffer(row[vj], (), offset_factor=1)
                    cell[()] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_views_take_the_scope(golden):
    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
        B = T.alloc_buffer((8, 4), "float32", scope="shared")
        for i in T.serial(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                row = T.match_buffer(B[vi, 0:4], (4,), offset_factor=1, scope="shared")
                for j in T.serial(4):
                    with T.block("B_inner"):
                        vj = T.axis.remap("S", [j])
                        cell = T.match_buffer(row[vj], (), offset_factor=1, scope="shared")
                        cell[()] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(8, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(viewed, expected, lambda sch: sch.set_scope(sch.get_block("B"), 0, "shared"))


def test_views_take_the_scope_numbers():
    sch = ts.tir.Schedule(viewed)
    sch.set_scope("B", 0, "local")
    lib = ts.build(sch.mod, target="c")
    a = np.random.RandomState(4).rand(8, 4).astype("float32")
    c = ts.nd.array(np.zeros((8, 4), "float32"))
    lib(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1, rtol=1e-6)
