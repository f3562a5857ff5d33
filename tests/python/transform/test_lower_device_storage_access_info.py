"""tir.LowerDeviceStorageAccessInfo: allocations of tagged scopes and T.tvm_access_ptr."""

import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


@pytest.fixture(autouse=True)
def memories():
    ts.runtime.register_func("tvm.info.mem.global.tsr_addressed", lambda: ts.target.MemoryInfo(
        unit_bits=32, max_simd_bits=128, max_num_bits=4096,
        head_address=tir.call_extern("handle", "tsr_base")), override=True)
    ts.runtime.register_func("tvm.info.mem.local.tsr_hidden", lambda: ts.target.MemoryInfo(
        unit_bits=8, max_simd_bits=32, max_num_bits=1024), override=True)
    yield
    ts.runtime.remove_global_func("tvm.info.mem.global.tsr_addressed")
    ts.runtime.remove_global_func("tvm.info.mem.local.tsr_hidden")


def run(func):
    mod = ts.ir.IRModule({"main": func})
    return tt.LowerDeviceStorageAccessInfo()(mod)["main"]


def check(before, expected):
    after = run(before)
    assert_structural_equal(after, expected.with_attr("global_symbol", after.attrs["global_symbol"]))
    return after


def test_addressed_memory_is_bound_to_its_head_address_in_units():
    @T.prim_func
    def before(n: T.int32):
        buf = T.decl_buffer(64, "float16", scope="global.tsr_addressed")
        T.evaluate(T.tvm_access_ptr(T.type_annotation("float16"), buf.data, n, 8, 1))
        T.evaluate(T.tvm_access_ptr(T.type_annotation("float16"), buf.data, 2, 8, 1))

    @T.prim_func
    def expected(n: T.int32):
        ptr: T.handle("float16", "global.tsr_addressed") = T.call_extern("handle", "tsr_base")
        buf = T.decl_buffer(64, "float16", scope="global.tsr_addressed", data=ptr)
        T.evaluate(T.Div(n, 2))  # two float16 per 32-bit unit
        view = T.Buffer((3,), "float16", data=ptr, scope="global.tsr_addressed")
        T.evaluate(T.address_of(view[2]))

    # TVMScript's T.tvm_access_ptr is always a handle: the first one becomes an int32 offset.
    def as_int32(stmt):
        call = stmt.value if isinstance(stmt, tir.Evaluate) else None
        if isinstance(call, tir.Call) and call.op.name == "tir.tvm_access_ptr" and \
                not isinstance(call.args[2], tir.IntImm):
            return tir.Evaluate(tir.Call("int32", call.op, call.args))
        return None

    before = before.with_body(tir.stmt_functor.ir_transform(before.body, None, as_int32))
    after = check(before, expected)
    assert not ts.ir.structural_equal(after, before)


def test_memory_the_host_cannot_address_is_dropped():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        buf = T.decl_buffer(16, "int8", scope="local.tsr_hidden")
        A[0] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    check(before, expected)


def test_untagged_and_dynamic_scopes_are_kept():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        s = T.decl_buffer(16, "float32", scope="shared.dyn")
        l = T.decl_buffer(16, "float32", scope="local")
        s[0] = A[0]
        l[0] = s[0]
        A[1] = l[0]

    check(before, before)


def test_tagged_scope_without_memory_info_is_an_error():
    @T.prim_func
    def before():
        buf = T.decl_buffer(16, "float32", scope="global.tsr_unknown")
        T.evaluate(0)

    with pytest.raises(TesseraError, match='no memory info is registered for the storage scope '
                                           '"global.tsr_unknown"'):
        run(before)
