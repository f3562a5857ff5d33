"""Statement and expression forms TVM v0.23 writes and prints: scoped statements written
alone, dtype= on op builtins, T.Let(body, where=...), loop sugar without a 0 start."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def assert_same_program(a, b):
    ts.ir.assert_structural_equal(a.with_attr("global_symbol", "f"), b.with_attr("global_symbol", "f"))


def roundtrip(func):
    text = func.script()
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(func, again)
    return text


@T.prim_func
def launch_alone(a: T.handle):
    A = T.match_buffer(a, (128,), "float32")
    bx = T.launch_thread("blockIdx.x", 2)
    tx = T.launch_thread("threadIdx.x", 64)
    A[bx * 64 + tx] = T.float32(1)


@T.prim_func
def launch_with(a: T.handle):
    A = T.match_buffer(a, (128,), "float32")
    bx = T.env_thread("blockIdx.x")
    tx = T.env_thread("threadIdx.x")
    with T.launch_thread(bx, 2):
        with T.launch_thread(tx, 64):
            A[bx * 64 + tx] = T.float32(1)


def test_scoped_statement_alone_binds_the_rest_of_the_body():
    assert_same_program(launch_alone, launch_with)
    roundtrip(launch_alone)


@T.prim_func
def attr_alone(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    T.attr(0, "device_id", 0)
    A[0] = T.float32(1)
    A[1] = T.float32(2)


@T.prim_func
def attr_with(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    with T.attr(0, "device_id", 0):
        A[0] = T.float32(1)
        A[1] = T.float32(2)


def test_attr_alone():
    assert_same_program(attr_alone, attr_with)


@T.prim_func
def dtype_keywords(a: T.handle, x: T.float32):
    A = T.match_buffer(a, (4,), "float32")
    A[0] = T.if_then_else(x > T.float32(0), x, T.float32(0), dtype="float32")
    A[1] = T.fabs(x, dtype="float32")
    A[2] = T.exp(x, dtype="float32")


def test_dtype_keyword_of_op_builtins_is_accepted():
    roundtrip(dtype_keywords)
    lib = ts.build(dtype_keywords, target="c")
    out = np.zeros(4, "float32")
    lib(out, np.float32(-2.0))
    np.testing.assert_allclose(out[:3], [0.0, 2.0, np.exp(-2.0)], rtol=1e-6)


@T.prim_func
def let_where(a: T.handle):
    A = T.match_buffer(a, (4,), "int32")
    x = T.int32()
    for i in range(4):
        A[i] = T.Let(x * x, where={x: i + 1})


def test_let_prints_with_where_and_runs():
    text = roundtrip(let_where)
    assert "T.Let(x * x, where={x: i + 1})" in text
    out = np.zeros(4, "int32")
    ts.build(let_where, target="c")(out)
    np.testing.assert_array_equal(out, [1, 4, 9, 16])


@T.prim_func
def loops(a: T.handle):
    A = T.match_buffer(a, (8,), "float32")
    for i in T.parallel(8):
        A[i] = T.float32(0)
    for j in T.vectorized(2, 8):
        A[j] = T.float32(1)


def test_loop_start_is_printed_only_when_not_zero():
    text = roundtrip(loops)
    assert "for i in T.parallel(8):" in text
    assert "for j in T.vectorized(2, 8):" in text


def test_data_dependent_reads_join_as_min_and_max():
    # As TVM's region detection: B[B[0]] and B[0] cannot be ordered, so the block reads
    # B[min(B[0], 0):max(B[0], 0) + 1]; the same point read twice adds nothing.
    @T.prim_func
    def func(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (16, 16))
        B = T.match_buffer(b, (4,), "int32")
        C = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block():
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[B[B[0]], B[0]] + A[B[0], B[0]]

    @T.prim_func
    def expected(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (16, 16))
        B = T.match_buffer(b, (4,), "int32")
        C = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block():
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[T.min(B[B[0]], B[0]):T.max(B[B[0]], B[0]) + 1, B[0]],
                        B[T.min(B[0], 0):T.max(B[0], 0) + 1])
                T.writes(C[vi, vj])
                C[vi, vj] = A[B[B[0]], B[0]] + A[B[0], B[0]]

    ts.ir.assert_structural_equal(func.with_attr("global_symbol", "f"), expected.with_attr("global_symbol", "f"))


def test_buffer_subscript_annotation_is_the_call():
    from tessera.ir import assert_structural_equal

    @T.prim_func(private=True)
    def subscript(In: T.Buffer[(2,), "int32"], Out: T.Buffer[(2, 3), "float32"]):
        Out[0, 0] = T.Cast("float32", In[1])

    @T.prim_func(private=True)
    def call(In: T.Buffer((2,), "int32"), Out: T.Buffer((2, 3), "float32")):
        Out[0, 0] = T.Cast("float32", In[1])

    assert_structural_equal(subscript, call)
