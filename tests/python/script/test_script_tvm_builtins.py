"""TVM v0.23's builtin T.* names (tensor-core fragments, PTX, packed calls, vector helpers,
node constructors): they parse, print in TVM's form and round-trip structurally equal."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def roundtrip(func):
    text = func.script()
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(func, again)
    assert again.script() == text
    return text


@T.prim_func
def wmma_fragments(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), "float16", scope="shared")
    C = T.match_buffer(c, (16, 16), "float32", scope="wmma.accumulator")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        T.evaluate(T.tvm_fill_fragment(C.data, 16, 16, 16, 0, T.float32(0)))
        T.evaluate(T.tvm_load_matrix_sync(
            C.data, 16, 16, 16, 0,
            T.tvm_access_ptr(T.type_annotation("float16"), A.data, 0, 256, 1), 16, "row_major"))
        T.evaluate(T.tvm_mma_sync(C.data, 0, C.data, 0, C.data, 0, C.data, 0))
        T.evaluate(T.tvm_store_matrix_sync(
            C.data, 16, 16, 16, 0,
            T.tvm_access_ptr(T.type_annotation("float32"), C.data, 0, 256, 2), 16, "row_major"))


def test_tensor_core_fragments_print_as_tvm_does():
    text = roundtrip(wmma_fragments)
    assert 'for tx in T.thread_binding(32, thread="threadIdx.x"):' in text
    assert "T.tvm_fill_fragment(C.data, 16, 16, 16, 0, T.float32(0.0))" in text
    assert 'T.tvm_access_ptr(T.type_annotation("float16"), A.data, 0, 256, 1)' in text
    assert "T.tvm_mma_sync(C.data, 0, C.data, 0, C.data, 0, C.data, 0)" in text


@T.prim_func
def ptx_and_packed(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (16,), "float16", scope="shared")
    T.evaluate(T.ptx_cp_async("float16", A.data, 0, A.data, 8, 16))
    T.evaluate(T.ptx_commit_group())
    T.evaluate(T.ptx_wait_group(0))
    T.evaluate(T.call_packed("my_func", A.data, n))
    T.evaluate(T.tvm_call_cpacked("my_cfunc", A.data))
    x = T.tvm_struct_get(a, 0, 1, "int32")
    T.evaluate(T.call_extern("g", x, dtype="int32"))
    T.evaluate(T.reinterpret(T.float32(1), dtype="int32"))
    v = T.vectorlow("float16x2", T.Broadcast(T.float16(1), 4))
    T.evaluate(T.call_extern("int32", "h", T.vectorcombine("float16x4", v, v)))
    T.evaluate(T.simdgroup_multiply_accumulate(A.data, 0, A.data, 0, A.data, 0, A.data, 0))


def test_ptx_packed_and_vector_builtins_round_trip():
    text = roundtrip(ptx_and_packed)
    assert 'T.ptx_cp_async("float16", A.data, 0, A.data, 8, 16)' in text
    assert "T.ptx_commit_group()" in text
    assert 'T.call_packed("my_func", A.data, n)' in text
    assert 'T.call_cpacked("my_cfunc", A.data)' in text
    assert 'T.tvm_struct_get(a, 0, 1, "int32")' in text
    assert 'T.reinterpret("int32", T.float32(1.0))' in text
    assert 'T.vectorlow("float16x2", ' in text


def test_builtin_dtypes_follow_tvm():
    x = T.int32(3)
    assert T.tvm_access_ptr(T.type_annotation("float32"), T.handle(), 0, 4, 1).dtype == "handle"
    assert T.call_packed("f", x).dtype == "int32"
    assert T.tvm_struct_get(T.handle(), 0, 1, "int64").dtype == "int64"
    assert T.tvm_warp_activemask().dtype == "uint32"
    assert T.vectorhigh(dtype="int8x4", *[T.Broadcast(T.int8(1), 8)]).dtype == "int8x4"
    assert T.call_extern("abs", x, dtype="int64").dtype == "int64"
    assert T.isnullptr(T.handle()).dtype == "bool"


def test_node_constructors_and_aliases():
    n = T.Var("n", "int64")
    assert n.name == "n" and n.dtype == "int64"
    assert T.IntImm("int64", 3).value == 3
    assert T.EQ(n, 1).dtype == "bool"
    assert T.boolean is T.bool
    assert T.buffer_decl is T.Buffer
    assert T.fabs is not None and T.ramp is T.Ramp and T.broadcast is T.Broadcast
    call = T.Call("float32", "tir.exp", [T.float32(1)])
    ts.ir.assert_structural_equal(call, T.exp(T.float32(1)))


def test_gpu_builtin_is_refused_by_the_c_target_at_its_line():
    with pytest.raises(ts.error.TesseraError) as info:
        ts.build(wmma_fragments, target="c")
    message = str(info.value)
    assert "test_script_tvm_builtins.py" in message


def test_wrong_builtin_call_reports_the_line():
    src = (
        "@T.prim_func\n"
        "def f(a: T.handle):\n"
        "    T.evaluate(T.ptx_mma())\n"
    )
    with pytest.raises(ts.error.TesseraError) as info:
        ts.script.from_source(src)
    assert "ptx_mma" in str(info.value)


def test_llvm_intrinsic_by_looked_up_name_round_trips():
    @T.prim_func
    def ctpop(A: T.Buffer((16,), "uint8"), B: T.Buffer((16,), "uint8")):
        for i in range(16):
            B[i] = T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id("llvm.ctpop.i8"), A[i],
                                           dtype="uint8")
    text = ctpop.script()
    assert 'T.call_llvm_pure_intrin("uint8", "llvm.ctpop.i8", A[i])' in text
    ts.ir.assert_structural_equal(ts.script.from_source(text), ctpop)
    with pytest.raises(Exception, match="start with 'llvm.'"):
        T.llvm_lookup_intrinsic_id("ctpop")


def test_warp_shuffle_takes_tvm_five_arguments():
    @T.prim_func
    def shfl(A: T.Buffer((32,), "float32")):
        A[0] = T.tvm_warp_shuffle(T.tvm_warp_activemask(), A[1], 3, 32, 32)
        A[1] = T.tvm_warp_shuffle_down(T.uint32(255), A[2], 1, 8, 32)
    assert len(shfl.body.seq[0].value.args) == 5
    ts.ir.assert_structural_equal(ts.script.from_source(shfl.script()), shfl)
    with pytest.raises(Exception, match="5 arguments"):
        @T.prim_func
        def four(A: T.Buffer((32,), "float32")):
            A[0] = T.tvm_warp_shuffle(T.uint32(255), A[1], 3, 32)
