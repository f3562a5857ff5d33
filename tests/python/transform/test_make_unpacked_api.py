"""tir.MakeUnpackedAPI: public functions with a host target take data pointers and return int32."""

import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir import transform as tt


def test_public_function_takes_data_pointers_and_returns_status():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
            T.func_attr({"global_symbol": "main", "target": T.target("cuda", host="llvm")})
            for i in range(4):
                B[i] = A[i] + T.Cast("float32", n)

    after = tt.MakeUnpackedAPI()(Before)
    f = after["main"]
    assert [p.name for p in f.params] == ["A", "B", "n"]
    assert f.body.attr_key == "device_id" and f.body.body.attr_key == "device_type"
    assert f.body.body.value.value == 2
    assert f.attrs["target"]["kind"] == "llvm"
    # The body keeps reading the parameters' buffers: only the signature changed.
    assert_structural_equal(f.body.body.body[0], Before["main"].body)
    assert not ts.ir.structural_equal(after, Before)


def test_private_and_hostless_functions_are_unchanged():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((1,), "float32")):
            T.func_attr({"global_symbol": "main", "target": T.target("llvm")})
            Before.sub(A.data)

        @T.prim_func(private=True)
        def sub(A_data: T.handle("float32")):
            T.func_attr({"target": T.target("llvm", host="llvm")})
            T.evaluate(A_data)

    after = tt.MakeUnpackedAPI()(Before)
    assert_structural_equal(after, Before)


def test_calls_of_public_functions_pass_data_pointers():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer(1, "float32")):
            T.func_attr({"global_symbol": "main", "target": T.target("llvm", host="llvm")})
            Before.sub(T.tvm_stack_make_array(A.data, T.tvm_stack_make_shape(1, dtype="handle"),
                                              T.reinterpret(T.uint64(0), dtype="handle"),
                                              T.uint32(1), T.Cast("float32", 0), 0, dtype="handle"))

        @T.prim_func
        def sub(A: T.Buffer(1, "float32")):
            T.func_attr({"global_symbol": "sub", "target": T.target("llvm", host="llvm")})
            T.evaluate(A.data)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A_data: T.handle("float32")) -> T.int32:
            T.func_attr({"global_symbol": "main", "target": T.target("llvm")})
            T.attr("default", "device_id", 0)
            T.attr("default", "device_type", 1)
            Expected.sub(A_data)
            T.ret(T.int32(0))

        @T.prim_func
        def sub(A_data: T.handle("float32")) -> T.int32:
            T.func_attr({"global_symbol": "sub", "target": T.target("llvm")})
            T.attr("default", "device_id", 0)
            T.attr("default", "device_type", 1)
            T.evaluate(A_data)
            T.ret(T.int32(0))

    after = tt.MakeUnpackedAPI()(Before)
    assert_structural_equal(after, Expected)
    # Negative: a CUDA device type is not what a CPU target gets.
    wrong = Expected.script().replace('T.attr("default", "device_type", 1)',
                                      'T.attr("default", "device_type", 2)')
    assert not ts.ir.structural_equal(after, ts.script.from_source(wrong))


def test_public_function_without_target_is_an_error():
    @T.prim_func
    def main(A: T.Buffer((1,), "float32")):
        T.evaluate(A.data)

    mod = ts.ir.IRModule({"main": main.with_attr("global_symbol", "main")})
    with pytest.raises(TesseraError, match="has no \"target\" attribute"):
        tt.MakeUnpackedAPI()(mod)
