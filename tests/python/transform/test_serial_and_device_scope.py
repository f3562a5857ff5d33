"""tir.ConvertForLoopsToSerial (parallel loops become serial) and tir.DecorateDeviceScope (the
body is marked as device code)."""

import numpy as np

import tessera as ts
from tessera.ir import IRModule
from tessera.script import tir as T


def test_parallel_loops_become_serial_and_compute_the_same(golden, unchanged):
    @T.prim_func
    def before(A: T.Buffer((6, 4), "float32")):
        for i in T.parallel(6):
            for j in T.vectorized(4):
                A[i, j] = T.Cast("float32", i * 4 + j)

    @T.prim_func
    def expected(A: T.Buffer((6, 4), "float32")):
        for i in T.serial(6):
            for j in T.vectorized(4):
                A[i, j] = T.Cast("float32", i * 4 + j)

    golden("ConvertForLoopsToSerial", before, expected)
    unchanged("ConvertForLoopsToSerial", expected)
    after = ts.tir.transform.ConvertForLoopsToSerial()(IRModule({"main": before}))
    a = np.zeros((6, 4), "float32")
    ts.build(after, target="c")(a)
    np.testing.assert_array_equal(a, np.arange(24, dtype="float32").reshape(6, 4))


def test_device_scope_wraps_the_body(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        with T.attr(0, "device_scope", 0):
            A[0] = T.float32(1)

    golden("DecorateDeviceScope", before, expected)
