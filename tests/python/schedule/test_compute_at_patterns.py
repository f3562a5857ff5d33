"""compute_at / reverse_compute_at on non-trivial access patterns: iterators solved through an
affine inversion (floordiv/floormod indices), per dimension (a repeat: a single point), reversed
indices, and several writers of the output."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def split_indices(X: T.Buffer((8, 8), "float32"), Y: T.Buffer((64,), "float32")):
    tmp = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = X[vj, vi] + T.float32(1)
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            Y[vi] = tmp[vi // 8, vi % 8]


def test_reverse_compute_at_floordiv_floormod_indices(golden):
    @T.prim_func
    def expected(X: T.Buffer((8, 8), "float32"), Y: T.Buffer((64,), "float32")):
        tmp = T.alloc_buffer((8, 8))
        for i in range(8):
            for j in range(8):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    tmp[vi, vj] = X[vj, vi] + T.float32(1)
            for ax0 in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(64, i * 8 + ax0)
                    Y[vi] = tmp[vi // 8, vi % 8]

    def apply(sch):
        sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("A"))[0])

    sch = golden(split_indices, expected, apply)
    x = np.random.uniform(-1, 1, size=(8, 8)).astype("float32")
    y = ts.nd.array(np.zeros((64,), "float32"))
    ts.build(sch.mod, target="c")(ts.nd.array(x), y)
    np.testing.assert_allclose(y.numpy(), (x.T + 1).reshape(64), rtol=1e-6)


def test_compute_at_repeat_is_one_point(golden):
    @T.prim_func
    def before(x: T.Buffer((4,), "float32"), y: T.Buffer((64,), "float32")):
        t = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("T_add"):
                v = T.axis.spatial(4, i)
                t[v] = x[v] + T.float32(1)
        for i0, i1 in T.grid(8, 8):
            with T.block("T_repeat"):
                v = T.axis.spatial(64, i0 * 8 + i1)
                y[v] = t[v // 16]

    @T.prim_func
    def expected(x: T.Buffer((4,), "float32"), y: T.Buffer((64,), "float32")):
        t = T.alloc_buffer((4,))
        for i0 in range(8):
            with T.block("T_add"):
                v = T.axis.spatial(4, i0 // 2)
                t[v] = x[v] + T.float32(1)
            for i1 in range(8):
                with T.block("T_repeat"):
                    v = T.axis.spatial(64, i0 * 8 + i1)
                    y[v] = t[v // 16]

    golden(before, expected,
           lambda sch: sch.compute_at(sch.get_block("T_add"),
                                      sch.get_loops(sch.get_block("T_repeat"))[0]))


def test_compute_at_reversed_indices(golden):
    @T.prim_func
    def before(X: T.Buffer((6, 6), "float32"), Z: T.Buffer((6, 6), "float32")):
        Y = T.alloc_buffer((6, 6))
        for i, j in T.grid(6, 6):
            with T.block("b0"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[5 - vi, 5 - vj] = X[vi, vj] + T.float32(1)
        for i, j in T.grid(6, 6):
            with T.block("b1"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vj, vi] + T.float32(2)

    @T.prim_func
    def expected(X: T.Buffer((6, 6), "float32"), Z: T.Buffer((6, 6), "float32")):
        Y = T.alloc_buffer((6, 6))
        for i in range(6):
            for ax0 in range(6):
                with T.block("b0"):
                    vi = T.axis.spatial(6, ax0)
                    vj = T.axis.spatial(6, 5 - i)
                    Y[5 - vi, 5 - vj] = X[vi, vj] + T.float32(1)
            for j in range(6):
                with T.block("b1"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Z[vi, vj] = Y[vj, vi] + T.float32(2)

    golden(before, expected,
           lambda sch: sch.compute_at(sch.get_block("b0"), sch.get_loops(sch.get_block("b1"))[0]))


def test_compute_at_with_two_writers_of_the_output(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for i, j in T.grid(16, 8):
            with T.block("C_1"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj * 2] = B[vi, vj * 2] + T.float32(1)
            with T.block("C_2"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj * 2 + 1] = B[vi, vj * 2 + 1] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 8):
            for ax0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(16, j * 2 + ax0)
                    B[vi, vj] = A[vi, vj]
            with T.block("C_1"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj * 2] = B[vi, vj * 2] + T.float32(1)
            with T.block("C_2"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj * 2 + 1] = B[vi, vj * 2 + 1] * T.float32(2)

    golden(before, expected,
           lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C_1"))[1]))


def test_compute_at_unsolvable_access(schedule_error):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi * vi % 16] = A[vi]
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    schedule_error(before,
                   lambda sch: sch.compute_at(sch.get_block("B"),
                                              sch.get_loops(sch.get_block("C"))[0]),
                   "compute_at", "cannot solve")
