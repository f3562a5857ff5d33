"""Golden before/after tests of tir.LowerTVMBuiltin: packed calls, DLTensors and shapes built on
the stack, workspace allocations; functions without a host target are left as they are."""

import pytest

from tessera import _core
from tessera.error import DiagnosticError, TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def _lower(func, target="llvm"):
    func = func.with_attr("global_symbol", _core.StringImm("main"))
    if target is not None:
        func = func.with_attr("target", _core.StringImm(target))
    mod = _core.IRModule.from_func(func, "main")
    return mod, tt.LowerTVMBuiltin()(mod)


def _check(before, expected):
    _, after = _lower(before)
    expected = expected.with_attr("global_symbol", _core.StringImm("main"))
    assert_structural_equal(after.lookup("main"), expected.with_attr("target", _core.StringImm("llvm")))


def test_a_packed_call_of_a_dltensor_fills_the_stacks():
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        T.attr(0, "device_id", 0)
        T.evaluate(T.tvm_call_cpacked(
            "fn", T.tvm_stack_make_array(A.data, T.tvm_stack_make_shape(16, dtype="handle"),
                                         T.reinterpret(T.uint64(0), dtype="handle"), T.uint32(1),
                                         T.Cast("float32", 0), 0, dtype="handle"), dtype="int32"))

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        stack_ffi_any: T.handle = T.tvm_stack_alloca("tvm_ffi_any", 2)
        stack_array: T.handle = T.tvm_stack_alloca("array", 1)
        stack_shape: T.handle("int64") = T.tvm_stack_alloca("shape", 1)
        stack_shape_1 = T.decl_buffer((T.int64(1),), "int64", data=stack_shape)
        stack_shape_1[0] = T.int64(16)
        # The DLTensor: data, shape, strides, ndim, dtype (code, bits, lanes), offset, device.
        T.tvm_struct_set(stack_array, 0, 1, A.data)
        # The shape's address is read through a view of the stack ending at its first dim.
        stack_shape_2 = T.Buffer((1,), "int64", data=stack_shape)
        T.tvm_struct_set(stack_array, 0, 2, T.address_of(stack_shape_2[0]))
        T.tvm_struct_set(stack_array, 0, 3, T.reinterpret(T.uint64(0), dtype="handle"))
        T.tvm_struct_set(stack_array, 0, 4, T.uint32(1))
        T.tvm_struct_set(stack_array, 0, 5, T.uint8(2))
        T.tvm_struct_set(stack_array, 0, 6, T.uint8(32))
        T.tvm_struct_set(stack_array, 0, 7, T.uint16(1))
        T.tvm_struct_set(stack_array, 0, 8, T.uint64(0))
        T.tvm_struct_set(stack_array, 0, 9, 0)
        T.tvm_struct_set(stack_array, 0, 10, 1)
        # Argument 0 is a DLTensor pointer (type index 7); slot 1 is the return value (None).
        T.tvm_struct_set(stack_ffi_any, 0, 13, 7)
        T.tvm_struct_set(stack_ffi_any, 0, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 0, 15, T.tvm_struct_get(stack_array, 0, 0, dtype="handle"))
        T.tvm_struct_set(stack_ffi_any, 1, 13, 0)
        T.tvm_struct_set(stack_ffi_any, 1, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 1, 15, T.int64(0))
        T.evaluate(T.tvm_call_cpacked_lowered("fn", stack_ffi_any, 0, 1, dtype="int32"))

    _check(before, expected)


def test_scalars_travel_widened_and_sibling_calls_share_slots():
    @T.prim_func
    def before(n: T.int32, x: T.float32):
        T.evaluate(T.tvm_call_packed("f", n, x, dtype="int32"))
        T.evaluate(T.tvm_call_packed("g", n, dtype="int32"))

    @T.prim_func
    def expected(n: T.int32, x: T.float32):
        stack_ffi_any: T.handle = T.tvm_stack_alloca("tvm_ffi_any", 3)
        T.tvm_struct_set(stack_ffi_any, 0, 13, 1)
        T.tvm_struct_set(stack_ffi_any, 0, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 0, 15, T.Cast("int64", n))
        T.tvm_struct_set(stack_ffi_any, 1, 13, 3)
        T.tvm_struct_set(stack_ffi_any, 1, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 1, 15, T.Cast("float64", x))
        T.tvm_struct_set(stack_ffi_any, 2, 13, 0)
        T.tvm_struct_set(stack_ffi_any, 2, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 2, 15, T.int64(0))
        T.evaluate(T.tvm_call_packed_lowered("f", stack_ffi_any, 0, 2, dtype="int32"))
        T.tvm_struct_set(stack_ffi_any, 0, 13, 1)
        T.tvm_struct_set(stack_ffi_any, 0, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 0, 15, T.Cast("int64", n))
        T.tvm_struct_set(stack_ffi_any, 1, 13, 0)
        T.tvm_struct_set(stack_ffi_any, 1, 14, 0)
        T.tvm_struct_set(stack_ffi_any, 1, 15, T.int64(0))
        T.evaluate(T.tvm_call_packed_lowered("g", stack_ffi_any, 0, 1, dtype="int32"))

    _check(before, expected)


def test_a_parallel_loop_has_stacks_of_its_own():
    @T.prim_func
    def before(n: T.int32):
        for i in T.parallel(4):
            T.evaluate(T.tvm_call_packed("f", i, dtype="int32"))

    _, after = _lower(before)
    text = after.lookup("main").script()
    body = after.lookup("main").body
    assert "tvm_stack_alloca" not in body.script().split("for i")[0]  # nothing outside the loop
    assert 'stack_ffi_any: T.handle = T.tvm_stack_alloca("tvm_ffi_any", 2)' in text
    assert 'T.call_packed_lowered("f", stack_ffi_any, 0, 1)' in text


def test_a_large_allocation_goes_to_the_workspace_and_a_small_one_stays():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        T.attr(0, "device_id", 0)
        small = T.allocate([4], "float32", "global")
        big = T.allocate([1024], "float32", "global")
        small_buf = T.decl_buffer((4,), "float32", data=small)
        big_buf = T.decl_buffer((1024,), "float32", data=big)
        big_buf[0] = A[0]
        small_buf[0] = big_buf[0]
        A[1] = small_buf[0]

    _, after = _lower(before)
    text = after.lookup("main").script()
    assert 'big: T.handle("float32", "global") = T.TVMBackendAllocWorkspace(1, 0, T.uint64(4096), 2, 32)' in text
    assert 'with T.attr(big, "storage_alignment", 64):' in text
    assert "T.TVMBackendFreeWorkspace(1, 0, big)" in text
    assert "T.isnullptr(big)" in text and "T.tvm_throw_last_error()" in text
    assert "small = T.allocate([4], \"float32\", \"global\")" in text


def test_functions_without_a_host_target_are_unchanged():
    @T.prim_func
    def func(n: T.int32):
        T.evaluate(T.tvm_call_packed("f", n, dtype="int32"))

    for target in (None, "cuda"):
        mod, after = _lower(func, target)
        assert after.same_as(mod)


def test_a_shape_outside_a_packed_call_is_refused():
    @T.prim_func
    def func(n: T.int32):
        T.evaluate(T.tvm_stack_make_shape(n, dtype="handle"))

    with pytest.raises(DiagnosticError, match="only lowered as arguments of a packed call"):
        _lower(func)


def test_an_array_needs_its_device():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        T.evaluate(T.tvm_call_packed("f", T.tvm_stack_make_array(
            A.data, T.tvm_stack_make_shape(4, dtype="handle"), 0, 1, T.float32(0), 0,
            dtype="handle"), dtype="int32"))

    with pytest.raises(TesseraValueError, match="device_id"):
        _lower(func)


def test_each_shape_is_addressed_through_a_view_ending_at_its_first_dim():
    @T.prim_func
    def before(A: T.Buffer((2, 3), "float32"), B: T.Buffer((5,), "float32")):
        T.attr(0, "device_id", 0)
        T.evaluate(T.tvm_call_packed("fn", A, B, dtype="int32"))

    _, after = _lower(before)
    views = []

    def visit(node):
        if isinstance(node, _core.Call) and node.op.name == "tir.address_of":
            views.append(node.args[0])

    _core.post_order_visit(after.lookup("main").body, visit)
    # A's shape takes stack slots 0-1, B's slot 2: each address reads through a view of the
    # shape stack whose extent ends at the slot it points to.
    assert [int(v.indices[0]) for v in views] == [0, 2]
    assert [int(v.buffer.shape[0]) for v in views] == [1, 3]
    assert views[0].buffer.data.same_as(views[1].buffer.data)


def test_host_function_without_target_has_no_device_for_workspace():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        T.func_attr({"tir.is_host_func": True})
        T.attr(0, "device_id", 0)
        big = T.allocate([1024], "float32", "global")
        big_buf = T.decl_buffer((1024,), "float32", data=big)
        big_buf[0] = A[0]
        A[1] = big_buf[0]

    # Marked as a host function, it is lowered; with no target (and no "device_type"
    # attribute) the workspace allocation has no device to come from.
    with pytest.raises(DiagnosticError, match="needs the device"):
        _lower(func, target=None)
