"""tir.ForceNarrowIndexToInt32: int64 index arithmetic becomes int32; int64 data is refused."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.script import tir as T


def test_parameters_shapes_loops_blocks_and_casts_narrow(golden):
    @T.prim_func
    def before(a: T.handle, b: T.handle, k: T.int64):
        n = T.int64()
        A = T.match_buffer(a, (n, T.int64(4)), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.serial(n):
            for j in T.serial(T.int64(4)):
                with T.block("row"):
                    vi = T.axis.spatial(n, i)
                    vj = T.axis.reduce(T.int64(4), j)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj] * T.Cast("float32", T.Cast("int64", vj) + k)

    @T.prim_func
    def expected(a: T.handle, b: T.handle, k: T.int32):
        n = T.int32()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.serial(n):
            for j in T.serial(4):
                with T.block("row"):
                    vi = T.axis.spatial(n, i)
                    vj = T.axis.reduce(4, j)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj] * T.Cast("float32", vj + k)

    golden("ForceNarrowIndexToInt32", before, expected)


def test_thread_launch_and_let_narrow(golden):
    @T.prim_func
    def before(A: T.Buffer((T.int64(256),), "int32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, T.int64(128))
        for r in T.serial(T.int64(2)):
            A[T.Cast("int64", tx) * T.int64(2) + r] = T.Cast(
                "int32", T.let(T.int64(), r * T.int64(3), r * T.int64(3)))

    @T.prim_func
    def expected(A: T.Buffer((256,), "int32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 128)
        for r in T.serial(2):
            A[tx * 2 + r] = T.let(T.int32(), r * 3, r * 3)

    # T.let(v, value, body) with a fresh v on both sides: compare by structure.
    golden("ForceNarrowIndexToInt32", before, expected)


def test_narrowed_function_computes_the_same_with_clz():
    # clz of an int64 index counts 64 bits; narrowed, it counts 32 and adds the difference.
    @T.prim_func
    def wide(A: T.Buffer((T.int64(40),), "int32")):
        for i in T.serial(T.int64(1), T.int64(40)):
            A[i] = T.clz(i) + T.Cast("int32", i % T.int64(7))

    mod = ts.ir.IRModule({"main": wide})
    narrow = ts.tir.transform.ForceNarrowIndexToInt32()(mod)
    assert "int64" not in narrow.script()
    expected = np.zeros(40, "int32")
    expected[1:] = [64 - i.bit_length() + i % 7 for i in range(1, 40)]
    for m in (mod, narrow):
        a = np.zeros(40, "int32")
        ts.build(m, target="c")(a)
        np.testing.assert_array_equal(a, expected)


def test_int64_data_and_oversized_constants_are_refused():
    @T.prim_func
    def data(A: T.Buffer((8,), "int32")):
        C = T.alloc_buffer((8,), "int64")
        for i in range(8):
            C[i] = T.Cast("int64", A[i])
        for i in range(8):
            A[i] = T.Cast("int32", C[i])

    with pytest.raises(TesseraError, match="buffer C holds int64 values"):
        ts.tir.transform.ForceNarrowIndexToInt32()(ts.ir.IRModule({"main": data}))

    @T.prim_func
    def big(A: T.Buffer((8,), "float32")):
        for i in T.serial(T.int64(8)):
            A[i] = T.Cast("float32", i * T.int64(1 << 40))

    with pytest.raises(TesseraError, match="1099511627776 does not fit in int32"):
        ts.tir.transform.ForceNarrowIndexToInt32()(ts.ir.IRModule({"main": big}))
