"""Constant data opening a scope (`T.allocate_const` with its `T.decl_buffer`, between the root
block and its blocks): compute_at, reverse_compute_at, compute_inline, cache_read and cache_write
keep those statements where they are and edit the statements they hold; the scheduled programs
still compute what the original does."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T

SCALE = np.array([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32")


@T.prim_func
def scaled(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
    B = T.alloc_buffer((6, 10))
    scale_data = T.allocate_const([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32", [6])
    scale = T.decl_buffer((6,), data=scale_data)
    for i, j in T.grid(6, 10):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * scale[vi]
    for i, j in T.grid(6, 10):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def run(func):
    lib = ts.build(func, target="c")
    a = np.random.uniform(-1, 1, size=(6, 10)).astype("float32")
    c = ts.nd.array(np.zeros((6, 10), "float32"))
    lib(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * SCALE[:, None] + 1, rtol=1e-5, atol=1e-6)


def test_compute_at_under_constants(golden):
    @T.prim_func
    def expected(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
        B = T.alloc_buffer((6, 10))
        scale_data = T.allocate_const([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32", [6])
        scale = T.decl_buffer((6,), data=scale_data)
        for i in range(6):
            for ax0 in range(10):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    B[vi, vj] = A[vi, vj] * scale[vi]
            for j in range(10):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = golden(scaled, expected,
                 lambda s: s.compute_at(s.get_block("B"), s.get_loops(s.get_block("C"))[0]))
    run(sch.mod["main"])


def test_reverse_compute_at_under_constants(golden):
    @T.prim_func
    def expected(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
        B = T.alloc_buffer((6, 10))
        scale_data = T.allocate_const([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32", [6])
        scale = T.decl_buffer((6,), data=scale_data)
        for i, j in T.grid(6, 10):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * scale[vi]
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = golden(scaled, expected,
                 lambda s: s.reverse_compute_at(s.get_block("C"), s.get_loops(s.get_block("B"))[1]))
    run(sch.mod["main"])


@pytest.mark.parametrize("reverse", [False, True], ids=["compute_inline", "reverse_inline"])
def test_inline_under_constants(golden, reverse):
    @T.prim_func
    def expected(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
        scale_data = T.allocate_const([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32", [6])
        scale = T.decl_buffer((6,), data=scale_data)
        for i, j in T.grid(6, 10):
            with T.block("C" if not reverse else "B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * scale[vi] + T.float32(1)

    def apply(s):
        if reverse:
            s.reverse_compute_inline(s.get_block("C"))
        else:
            s.compute_inline(s.get_block("B"))

    sch = golden(scaled, expected, apply)
    run(sch.mod["main"])


def test_cache_read_of_the_constants_and_an_input(golden):
    @T.prim_func
    def expected(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
        B = T.alloc_buffer((6, 10))
        scale_local = T.alloc_buffer((6,), scope="local")
        A_global = T.alloc_buffer((6, 10))
        scale_data = T.allocate_const([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32", [6])
        scale = T.decl_buffer((6,), data=scale_data)
        for ax0, ax1 in T.grid(6, 10):
            with T.block("A_global"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                A_global[v0, v1] = A[v0, v1]
        for ax0 in range(6):
            with T.block("scale_local"):
                v0 = T.axis.spatial(6, ax0)
                scale_local[v0] = scale[v0]
        for i, j in T.grid(6, 10):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_global[vi, vj] * scale_local[vi]
        for i, j in T.grid(6, 10):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    def apply(s):
        b = s.get_block("B")
        s.cache_read(b, 1, "local")
        s.cache_read(b, 0, "global")

    sch = golden(scaled, expected, apply)
    run(sch.mod["main"])


def test_cache_write_under_constants(golden):
    @T.prim_func
    def expected(A: T.Buffer((6, 10), "float32"), C: T.Buffer((6, 10), "float32")):
        B = T.alloc_buffer((6, 10))
        C_local = T.alloc_buffer((6, 10), scope="local")
        scale_data = T.allocate_const([0.5, 1.5, -2.0, 3.0, 0.25, -1.0], "float32", [6])
        scale = T.decl_buffer((6,), data=scale_data)
        for i, j in T.grid(6, 10):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * scale[vi]
        for i, j in T.grid(6, 10):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_local[vi, vj] = B[vi, vj] + T.float32(1)
        for ax0, ax1 in T.grid(6, 10):
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                C[v0, v1] = C_local[v0, v1]

    sch = golden(scaled, expected, lambda s: s.cache_write(s.get_block("C"), 0, "local"))
    run(sch.mod["main"])


def test_blockize_of_blocks_under_constants(golden):
    @T.prim_func
    def before(A: T.Buffer((2,), "float32"), C: T.Buffer((2,), "float32")):
        B = T.alloc_buffer((2,))
        scale_data = T.allocate_const([4.0, -3.0], "float32", [2])
        scale = T.decl_buffer((2,), data=scale_data)
        with T.block("B"):
            B[0] = A[0] * scale[1]
        with T.block("C"):
            C[0] = B[0] + scale[0]
        with T.block("D"):
            C[1] = A[1]

    @T.prim_func
    def expected(A: T.Buffer((2,), "float32"), C: T.Buffer((2,), "float32")):
        B = T.alloc_buffer((2,))
        scale_data = T.allocate_const([4.0, -3.0], "float32", [2])
        scale = T.decl_buffer((2,), data=scale_data)
        with T.block("outer"):
            T.reads(A[0], scale[0:2], B[0])
            T.writes(B[0], C[0])
            with T.block("B"):
                B[0] = A[0] * scale[1]
            with T.block("C"):
                C[0] = B[0] + scale[0]
        with T.block("D"):
            C[1] = A[1]

    sch = golden(before, expected, lambda s: s.blockize([s.get_block("B"), s.get_block("C")]))
    lib = ts.build(sch.mod["main"], target="c")
    c = ts.nd.array(np.zeros(2, "float32"))
    lib(ts.nd.array(np.array([2.0, 7.0], "float32")), c)
    np.testing.assert_allclose(c.numpy(), [2.0 * -3.0 + 4.0, 7.0])


def test_the_only_block_under_constants_is_not_removed(schedule_error):
    @T.prim_func
    def lone(A: T.Buffer((2,), "float32"), C: T.Buffer((2,), "float32")):
        B = T.alloc_buffer((2,))
        scale_data = T.allocate_const([4.0, -3.0], "float32", [2])
        scale = T.decl_buffer((2,), data=scale_data)
        for i in range(2):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] * scale[vi]

    schedule_error(lone, lambda s: s.compute_inline(s.get_block("B")), "compute_inline",
                   "is the only leaf of its scope")
