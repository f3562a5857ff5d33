"""Scheduled programs compute what the originals compute: each schedule is built for the CPU and
run against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def mm_relu(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
            C: T.Buffer((64, 64), "float32")):
    Y = T.alloc_buffer((64, 64))
    for i, j, k in T.grid(64, 64, 64):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def ragged(A: T.Buffer((10, 37), "float32"), C: T.Buffer((10, 37), "float32")):
    B = T.alloc_buffer((10, 37))
    for i, j in T.grid(10, 37):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(3)
    for i, j in T.grid(10, 37):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] - T.float32(1)


def loops(sch, name):
    return sch.get_loops(sch.get_block(name))


def s_compute_at_reduction(sch):
    sch.compute_at(sch.get_block("Y"), loops(sch, "C")[0])


def s_cache_read_tile(sch):
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    a = sch.cache_read(y, 1, "global")
    sch.compute_at(a, k)
    sch.reverse_compute_at(sch.get_block("C"), j0)


def s_cache_write(sch):
    y = sch.get_block("Y")
    sch.cache_write(y, 0, "local")


def s_rfactor(sch):
    y = sch.get_block("Y")
    _, _, k = sch.get_loops(y)
    _, k1 = sch.split(k, [None, 4])
    sch.rfactor(k1, 1)


def s_blockize_decompose(sch):
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    k0, k1 = sch.split(k, [None, 16])
    sch.blockize(k1)
    sch.decompose_reduction(sch.get_block("Y_o"), k0)


def s_layout_inline(sch):
    sch.transform_layout(sch.get_block("Y"), ("write", 0), lambda i, j: (j // 8, i, j % 8))
    sch.transform_layout(sch.get_block("Y"), "A", lambda i, k: (k, i))
    sch.set_scope(sch.get_block("Y"), 0, "global")
    sch.storage_align(sch.get_block("Y"), 0, 1, 16, 1)


def s_nested_scope_cache_write(sch):
    # The reduction's scope block runs once per k: the cache must outlive it.
    sch.blockize([sch.get_block("Y")])
    sch.cache_write(sch.get_block("Y"), 0, "global")
    sch.cache_read(sch.get_block("Y"), 1, "global")


def s_rfactor_in_nest(sch):
    sch.reverse_compute_at(sch.get_block("C"), loops(sch, "Y")[1])
    sch.rfactor(loops(sch, "Y")[2], 0)


def s_unroll_fuse(sch):
    c = sch.get_block("C")
    fused = sch.fuse(*sch.get_loops(c))
    _, inner = sch.split(fused, [None, 16])
    sch.unroll(inner)
    sch.parallel(sch.get_loops(sch.get_block("Y"))[0])


@pytest.mark.parametrize("schedule", [s_compute_at_reduction, s_cache_read_tile, s_cache_write,
                                      s_rfactor, s_blockize_decompose, s_layout_inline, s_unroll_fuse,
                                      s_nested_scope_cache_write, s_rfactor_in_nest],
                         ids=lambda f: f.__name__[2:])
def test_scheduled_matmul_relu(schedule):
    sch = tir.Schedule(mm_relu, debug_mask="all")
    schedule(sch)
    lib = ts.build(sch.mod, target="c")
    a, b = (np.random.uniform(-1, 1, size=(64, 64)).astype("float32") for _ in range(2))
    if schedule is s_layout_inline:
        a_arg = np.ascontiguousarray(a.T)  # A is now stored transposed
    else:
        a_arg = a
    c = ts.nd.array(np.zeros((64, 64), "float32"))
    lib(ts.nd.array(a_arg), ts.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)


def r_split_predicates_and_compute_at(sch):
    i, j = loops(sch, "C")
    j0, j1 = sch.split(j, [None, 8])
    sch.compute_at(sch.get_block("B"), j0)
    sch.vectorize(j1)


def r_inline(sch):
    sch.compute_inline(sch.get_block("B"))


def r_reverse_inline(sch):
    sch.reverse_compute_inline(sch.get_block("C"))


def r_reverse_compute_at_split(sch):
    i, j = loops(sch, "B")
    j0, j1 = sch.split(j, [None, 5])
    sch.reverse_compute_at(sch.get_block("C"), i)


@pytest.mark.parametrize("schedule", [r_split_predicates_and_compute_at, r_inline, r_reverse_inline,
                                      r_reverse_compute_at_split], ids=lambda f: f.__name__[2:])
def test_scheduled_ragged_elementwise(schedule):
    sch = tir.Schedule(ragged, debug_mask="all")
    schedule(sch)
    lib = ts.build(sch.mod, target="c")
    a = np.random.uniform(size=(10, 37)).astype("float32")
    c = ts.nd.array(np.zeros((10, 37), "float32"))
    lib(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 3 - 1, rtol=1e-5, atol=1e-6)


@T.prim_func
def stencil(A: T.Buffer((66,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((66,))
    for i in T.serial(66):
        with T.block("B"):
            vi = T.axis.spatial(66, i)
            B[vi] = A[vi] * T.float32(2)
    for i in T.serial(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]


def st_compute_at_tile(sch):
    (i,) = loops(sch, "C")
    i0, _ = sch.split(i, [None, 8])
    sch.compute_at(sch.get_block("B"), i0)


def st_cache_read_compute_at(sch):
    c = sch.get_block("C")
    (i,) = sch.get_loops(c)
    i0, _ = sch.split(i, [None, 16])
    sch.compute_inline(sch.get_block("B"))
    cache = sch.cache_read(c, 0, "local")
    sch.compute_at(cache, i0)


@pytest.mark.parametrize("schedule", [st_compute_at_tile, st_cache_read_compute_at],
                         ids=lambda f: f.__name__[3:])
def test_scheduled_stencil(schedule):
    sch = tir.Schedule(stencil, debug_mask="all")
    schedule(sch)
    lib = ts.build(sch.mod, target="c")
    a = np.random.uniform(size=(66,)).astype("float32")
    c = ts.nd.array(np.zeros((64,), "float32"))
    lib(ts.nd.array(a), c)
    b = a * 2
    np.testing.assert_allclose(c.numpy(), b[:64] + b[1:65] + b[2:66], rtol=1e-5)
