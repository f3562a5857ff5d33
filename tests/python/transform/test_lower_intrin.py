"""tir.LowerIntrin: math intrinsics become C library calls of their precision."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def test_float32_and_float64_math(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float64")):
        for i in T.serial(4):
            A[i] = T.exp(A[i]) + T.sqrt(A[i])
            B[i] = T.log(B[i])

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float64")):
        for i in T.serial(4):
            A[i] = T.call_pure_extern("float32", "expf", A[i]) + T.call_pure_extern("float32", "sqrtf", A[i])
            B[i] = T.call_pure_extern("float64", "log", B[i])

    golden("LowerIntrin", before, expected)


def test_composite_intrinsics(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
        for i in T.serial(4):
            A[i] = T.sigmoid(A[i])
            B[i] = T.abs(B[i])

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
        for i in T.serial(4):
            A[i] = T.float32(1) / (T.float32(1) + T.call_pure_extern("float32", "expf", T.float32(0) - A[i]))
            B[i] = T.Select(B[i] < 0, 0 - B[i], B[i])

    golden("LowerIntrin", before, expected)


def test_llvm_math_intrinsics_build_without_llvm():
    # An LLVM float intrinsic is lowered as the TIR op of the same meaning, scalar or vector.
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for j in T.vectorized(4):
            A[j] = T.call_llvm_pure_intrin("float32", "llvm.sqrt", B[j])
        for j in range(4, 8):
            A[j] = T.call_llvm_pure_intrin("float32", "llvm.pow.f32", B[j], C[j])

    mod = ts.tir.transform.VectorizeLoop()(ts.ir.IRModule({"main": func}))
    b = np.linspace(0.5, 4.0, 8).astype("float32")
    c = np.full(8, 1.5, "float32")
    a = np.zeros(8, "float32")
    ts.build(mod, target="c")(a, b, c)
    np.testing.assert_allclose(a[:4], np.sqrt(b[:4]), rtol=1e-6)
    np.testing.assert_allclose(a[4:], np.power(b[4:], c[4:]), rtol=1e-6)


def test_unknown_llvm_intrinsic_is_refused_at_codegen():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for j in range(4):
            A[j] = T.call_llvm_pure_intrin("float32", "llvm.experimental.unknown", B[j])

    with pytest.raises(ts.error.BuildError, match="call_llvm_pure_intrin"):
        ts.build(func, target="c")
