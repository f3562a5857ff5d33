"""Small wrong programs and calls of issue 15 end in a located error or the right result: a
loop provably outside a static buffer and a constant division by zero are compile-time errors;
an array handed to a typed T.handle parameter is passed as its data pointer."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def test_loop_provably_outside_a_static_buffer_is_a_located_error():
    from tessera.error import DiagnosticError

    # It parses, as in TVM; the build refuses it before any code runs.
    @T.prim_func
    def f(A: T.Buffer((20,), "float32")):
        for i in range(1 << 22):
            A[i] = T.float32(1)

    with pytest.raises(DiagnosticError, match=r"Index 4194303 is out of bounds for dimension 0 of "
                                              r"buffer A \(extent 20\)"):
        ts.build(f, target="c")

    # A guarded access, or one inside the extent, is fine.
    @T.prim_func
    def g(A: T.Buffer((20,), "float32")):
        for i in range(1 << 10):
            if i < 20:
                A[i] = T.float32(1)
        for i, j in T.grid(4, 5):
            A[i * 5 + j] = A[i * 5 + j] + T.float32(1)

    a = np.zeros(20, "float32")
    ts.build(g, target="c")(a)
    np.testing.assert_array_equal(a, 2.0)


def test_constant_integer_division_by_zero_is_a_located_error():
    from tessera.error import DiagnosticError

    with pytest.raises(DiagnosticError, match=r"division by the constant zero"):
        @T.prim_func
        def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                A[i] = B[i] // 0

    with pytest.raises(DiagnosticError, match=r"division by the constant zero"):
        @T.prim_func
        def g(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                A[i] = T.truncmod(B[i], 0)


def test_array_for_a_typed_handle_parameter_passes_its_data():
    @T.prim_func
    def f(a: T.handle("float32"), n: T.int32):
        A = T.decl_buffer((4,), "float32", data=a)
        for i in range(4):
            A[i] = T.Cast("float32", n)

    lib = ts.build(f, target="c")
    x = np.zeros(4, "float32")
    lib(x, 7)  # the DLTensor's data, not the DLTensor struct, is written
    np.testing.assert_array_equal(x, 7.0)
    y = ts.nd.array(np.zeros(4, "float32"))
    lib(y, 3)
    np.testing.assert_array_equal(y.numpy(), 3.0)


def test_launch_thread_on_a_cpu_target_is_a_located_build_error():
    from tessera.error import TesseraError

    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        A[tx] = T.float32(1)

    with pytest.raises(TesseraError, match=r"T.launch_thread of threadIdx.x .*GPU targets") as info:
        ts.build(f, target="c")
    assert "InternalError" not in type(info.value).__name__


def test_integer_literal_too_large_for_its_type_is_a_located_error():
    from tessera.error import DiagnosticError

    with pytest.raises(DiagnosticError, match=r"the integer 123456789012345678901234567890 does "
                                              r"not fit in int64"):
        @T.prim_func
        def f(A: T.Buffer((4,), "int64")):
            A[0] = 123456789012345678901234567890

    with pytest.raises(DiagnosticError, match=r"does not fit in int8"):
        @T.prim_func
        def g(A: T.Buffer((4,), "int8")):
            A[0] = T.int8(300)
