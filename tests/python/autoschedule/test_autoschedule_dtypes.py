"""The automatic schedule on other element types, symbolic shapes and modules of several
functions: ts.build with no schedule matches numpy."""

import numpy as np
import ops
import pytest
import tessera as ts
from tessera import te
from tessera.script import ir as I
from tessera.script import tir as T


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int8"])
def test_elementwise_and_matmul_in_other_types(dtype):
    rng = np.random.default_rng(1)
    shape = (40, 24)
    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    C = te.compute(shape, lambda i, j: A[i, j] * B[i, j] + A[i, j], name="C")
    lib = ts.build(te.create_prim_func([A, B, C]), target="c")
    a = (rng.random(shape) * 4).astype(dtype)
    b = (rng.random(shape) * 4).astype(dtype)
    c = np.zeros(shape, dtype)
    lib(a, b, c)
    np.testing.assert_allclose(c, a * b + a, rtol=1e-2 if dtype == "float16" else 1e-6)
    if dtype in ("float64", "int32"):
        a, b = (rng.random((16, 24)) * 4).astype(dtype), (rng.random((24, 32)) * 4).astype(dtype)
        c = np.zeros((16, 32), dtype)
        ts.build(ops.matmul(16, 32, 24, dtype=dtype), target="c")(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-6)


@T.prim_func
def scale_symbolic(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(3)


def test_symbolic_shape():
    lib = ts.build(scale_symbolic, target="c")
    for n in (1, 37, 100000):
        a = np.arange(n, dtype="float32")
        b = np.zeros(n, "float32")
        lib(a, b)
        np.testing.assert_allclose(b, a * 3)


@I.ir_module
class TwoFunctions:
    @T.prim_func
    def double(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] * T.float32(2)

    @T.prim_func
    def rowsum(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def test_module_of_several_functions():
    sch = ts.autoschedule(TwoFunctions, target="c", facts={"vector_bits": 256})
    text = "\n".join(sch.trace.as_python())
    assert 'func_name="double"' in text and 'func_name="rowsum"' in text
    lib = ts.build(TwoFunctions, target="c")
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    lib["double"](a, b)
    np.testing.assert_allclose(b, a * 2)
    m = np.arange(16 * 64, dtype="float32").reshape(16, 64)
    s = np.zeros(16, "float32")
    lib["rowsum"](m, s)
    np.testing.assert_allclose(s, m.sum(1))



@pytest.mark.parametrize("op", ["greater", "isnan"])
def test_bool_results_take_byte_lanes(op):
    # A bool is stored in a byte: on 512-bit vectors, 64 lanes (as int8), not 512 (1-bit lanes,
    # which the vectorizer left scalar).
    A = te.placeholder((4096,), "float32", name="A")
    if op == "greater":
        B, expect = te.compute((4096,), lambda i: A[i] > 0.5, name="B"), lambda a: a > 0.5
    else:
        B, expect = te.compute((4096,), lambda i: ts.tir.isnan(A[i]), name="B"), np.isnan
    f = te.create_prim_func([A, B])
    script = ts.autoschedule(f, target="c", facts={"vector_bits": 512, "cores": 1}).mod.script()
    assert "T.vectorized(64)" in script and "T.vectorized(512)" not in script
    a = np.random.default_rng(3).random(4096).astype("float32")
    a[::7] = np.nan
    out = np.zeros(4096, bool)
    ts.build(f, target="c")(a, out)
    np.testing.assert_array_equal(out, expect(a))
