"""tir.PointerValueTypeRewrite: buffers accessed only as aligned vectors get vector elements."""

import numpy as np

import tessera as ts
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def rewrite(func):
    return tt.PointerValueTypeRewrite()(ts.ir.IRModule({"main": func}))["main"]


def same(after, expected):
    return expected.with_attr("global_symbol", after.attrs["global_symbol"])


@T.prim_func
def pairs(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i * 2] * A[i * 2 + 1]


@T.prim_func
def vector_copy(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        B[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4] + T.Broadcast(T.float32(1), 4)


def test_vector_accesses_become_vector_elements():
    after = rewrite(vector_copy)

    @T.prim_func
    def expected(A: T.Buffer((2,), "float32x4"), B: T.Buffer((2,), "float32x4")):
        for i in range(2):
            B[T.Div(i * 4, 4)] = A[T.Div(i * 4, 4)] + T.Broadcast(T.float32(1), 4)

    assert_structural_equal(after, same(after, expected))


def test_scalar_reads_of_a_vector_buffer_become_shuffles():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((2,), "float32")):
        cache = T.decl_buffer((8,), "float32", scope="local")
        for i in range(2):
            cache[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4]
        for i in range(2):
            B[i] = cache[i * 4] + cache[i * 4 + 3]

    @T.prim_func
    def expected(A: T.Buffer((2,), "float32x4"), B: T.Buffer((2,), "float32")):
        cache = T.decl_buffer((2,), "float32x4", scope="local")
        for i in range(2):
            cache[T.Div(i * 4, 4)] = A[T.Div(i * 4, 4)]
        for i in range(2):
            B[i] = T.Shuffle([cache[T.Div(i * 4, 4)]], [0]) + T.Shuffle([cache[T.Div(i * 4 + 3, 4)]], [3])

    after = rewrite(before)
    assert_structural_equal(after, same(after, expected))
    assert not ts.ir.structural_equal(after, same(after, before))


def test_scalar_accesses_keep_the_scalar_type():
    # A is read as scalars only, B written as scalars: nothing is a vector. (The C target has no
    # code for T.Shuffle, so a rewritten function is checked by its IR only.)
    after = rewrite(pairs)
    assert_structural_equal(after, same(after, pairs))
    a = np.arange(8, dtype="float32")
    b = np.zeros(4, dtype="float32")
    ts.build(after, target="c")(a, b)
    np.testing.assert_allclose(b, a[0::2] * a[1::2])


def test_mixed_element_types_keep_the_declared_type():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        B[0:4] = A[0:4]
        B[4] = A[4]

    after = rewrite(before)
    # B is written both as 4 lanes and as 1 lane: it stays scalar. A is read as 4 lanes and
    # as a scalar at an index that is a multiple of 4: it becomes float32x4 (a shuffle).
    assert after.buffer_map[after.params[1]].dtype == "float32"
    assert after.buffer_map[after.params[0]].dtype == "float32x4"
