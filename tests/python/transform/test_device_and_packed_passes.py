"""Golden before/after tests of the passes of the split stage: tir.MakePackedAPI (the packed entry
point that checks every argument), tir.SplitThreadKernels (the CUDA pipeline's outlining of
thread-bound loops into GPU kernels) and tir.ThreadSync (barriers between shared-memory writes
and reads of other threads)."""

import pytest

from tessera import _core
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir import transform as tt
from tessera.transform import Pass


def _module(func, target):
    func = func.with_attr("global_symbol", _core.StringImm("main"))
    return _core.IRModule.from_func(func.with_attr("target", _core.StringImm(target)), "main")


def test_make_packed_api_checks_every_argument():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), n: T.int32):
        for i in T.serial(4):
            A[i] = A[i] + T.float32(1)

    @T.prim_func
    def expected(args: T.handle, arg_type_ids: T.handle("int32", "global"), num_args: T.int32,
                 out_ret_value: T.handle, out_ret_tcode: T.handle("int32", "global")) -> T.int32:
        T.func_attr({"calling_conv": "packed", "target": "c",
                     "tessera.params": ["buffer:float32:A", "int:int32:n"],
                     "tessera.ret_type": "void"})
        # The count and type code of every argument: one call of the runtime's check
        # (tessera_check_args), one letter per parameter ('p' pointer, 'i' int, 'f' float).
        with T.Assert(T.call_intrin("bool", "tessera.check_args", arg_type_ids, num_args, "main", "pi"),
                      "main: the arguments do not match the parameters"):
            T.evaluate(0)
        n: T.int32 = T.Cast("int32", T.call_intrin("int64", "tessera.packed_arg", args, 1))
        A: T.handle = T.call_intrin("handle", "tessera.packed_arg", args, 0)
        # One call of the runtime's check per buffer (tessera_check_dltensor): with constant
        # extents it checks the pointer, ndim, dtype, shape, strides, device and data.
        with T.Assert(T.call_intrin("bool", "tessera.check_dltensor", A, "main.A", "A", "float32",
                                    1, 2, 32, 1, 1, 1, T.int64(4)),
                      "main.A does not match its declaration"):
            T.evaluate(0)
        A_1: T.handle("float32", "global") = T.call_intrin("handle", "tessera.dltensor_get", A, 0)
        A_2 = T.Buffer((4,), "float32", data=A_1)
        # The function's own body, marked as TVM marks it.
        with T.attr(0, "compute_scope", "main_compute_"):
            for i in range(4):
                A_2[i] = A_2[i] + T.float32(1.0)
        return 0

    after = tt.MakePackedAPI()(_module(before, "c")).lookup("main")
    assert_structural_equal(after, expected.with_attr("global_symbol", _core.StringImm("main")))


def test_make_packed_api_checks_symbolic_shapes_inline():
    @T.prim_func
    def before(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in T.serial(n):
            A[i] = A[i] + T.float32(1)

    @T.prim_func
    def expected(args: T.handle, arg_type_ids: T.handle("int32", "global"), num_args: T.int32,
                 out_ret_value: T.handle, out_ret_tcode: T.handle("int32", "global")) -> T.int32:
        T.func_attr({"calling_conv": "packed", "target": "c",
                     "tessera.params": ["buffer:float32:a"], "tessera.ret_type": "void"})
        with T.Assert(T.call_intrin("bool", "tessera.check_args", arg_type_ids, num_args, "main", "p"),
                      "main: the arguments do not match the parameters"):
            T.evaluate(0)
        a: T.handle = T.call_intrin("handle", "tessera.packed_arg", args, 0)
        # A symbolic extent: the runtime checks pointer, ndim and dtype; the rest is inline.
        with T.Assert(T.call_intrin("bool", "tessera.check_dltensor", a, "main.a", "a", "float32",
                                    1, 2, 32, 1, 0, 1),
                      "main.a does not match its declaration"):
            T.evaluate(0)
        n: T.int32 = T.Cast("int32", T.call_intrin("int64", "tessera.dltensor_shape", a, 0))
        with T.Assert(T.call_intrin("int64", "tessera.dltensor_shape", a, 0) == T.int64(0)
                      or (T.call_intrin("bool", "tessera.isnullptr",
                                        T.call_intrin("handle", "tessera.dltensor_get", a, 9))
                          or (T.call_intrin("int64", "tessera.dltensor_shape", a, 0) == T.int64(1)
                              or T.call_intrin("int64", "tessera.dltensor_stride", a, 0) == T.int64(1))),
                      "main.a.strides: expected to be compact array"):
            T.evaluate(0)
        with T.Assert(T.call_intrin("int32", "tessera.dltensor_get", a, 6) == 1,
                      T.call_intrin("handle", "tessera.format",
                                    "Argument main.a.device_type has an unsatisfied constraint: "
                                    "1 == a.device_type (got %lld)",
                                    T.Cast("int64", T.call_intrin("int32", "tessera.dltensor_get", a, 6)))):
            T.evaluate(0)
        with T.Assert(not T.call_intrin("bool", "tessera.isnullptr",
                                        T.call_intrin("handle", "tessera.dltensor_get", a, 1))
                      or T.call_intrin("int64", "tessera.dltensor_shape", a, 0) == T.int64(0),
                      "main.a has a NULL data pointer"):
            T.evaluate(0)
        A: T.handle("float32", "global") = T.call_intrin("handle", "tessera.dltensor_get", a, 0)
        A_1 = T.Buffer((n,), "float32", data=A)
        with T.attr(0, "compute_scope", "main_compute_"):
            for i in range(n):
                A_1[i] = A_1[i] + T.float32(1.0)
        return 0

    after = tt.MakePackedAPI()(_module(before, "c")).lookup("main")
    assert_structural_equal(after, expected.with_attr("global_symbol", _core.StringImm("main")))


def test_make_packed_api_entry_targets_the_host():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "main", "target": T.target("cuda", host="c")})
        A[0] = T.float32(0)

    after = tt.MakePackedAPI()(_core.IRModule.from_func(before, "main")).lookup("main")
    assert_structural_equal(dict(after.attrs)["target"], T.target("c"))


def test_make_packed_api_lowers_private_functions_without_checks():
    @T.prim_func(private=True)
    def helper(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(0)

    @T.prim_func(private=True)
    def expected(A: T.handle("float32", "global")):
        T.func_attr({"target": "c"})
        A_1 = T.Buffer((4,), "float32", data=A)
        A_1[0] = T.float32(0.0)

    # A private function keeps its calling convention: no packed arguments, no checks; its
    # buffer parameters become data pointers.
    mod = _core.IRModule.from_func(helper.with_attr("target", _core.StringImm("c")), "helper")
    after = tt.MakePackedAPI()(mod).lookup("helper")
    assert_structural_equal(after, expected)


def test_split_thread_kernels_moves_the_kernel_out():
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                A[bx * 32 + tx] = A[bx * 32 + tx] * T.float32(2)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64,), "float32")):
            T.func_attr({"target": "c", "tessera.device_type": 2})
            T.evaluate(cls.main_kernel(A.data))

        @T.prim_func(private=True)
        def main_kernel(A: T.handle("float32", "global")):
            T.func_attr({"calling_conv": "device_kernel", "target": "cuda",
                         "tessera.kernel_name": "main_kernel",
                         "tessera.thread_extents": ["blockIdx.x", 2, "threadIdx.x", 32]})
            A_1 = T.Buffer((64,), "float32", data=A)
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    A_1[bx * 32 + tx] = A_1[bx * 32 + tx] * T.float32(2.0)

    after = Pass("tir.SplitThreadKernels")(_module(before, "cuda"))
    assert sorted(gv.name_hint for gv, _ in after.functions) == ["main", "main_kernel"]
    assert_structural_equal(after.lookup("main_kernel"), Expected.lookup("main_kernel"))
    # The host function: the same attributes and one call of the kernel with A's data pointer.
    # (Compared piecewise: the pass types the call int32, as TVM does, while the parser types a
    # call of a GlobalVar void.)
    host, want = after.lookup("main"), Expected.lookup("main")
    assert dict(host.attrs)["tessera.device_type"].value == 2
    assert dict(host.attrs)["target"].value == "c"
    call = host.body.value
    assert call.op.name_hint == "main_kernel" and str(call.dtype) == "int32"
    assert len(call.args) == 1 and call.args[0].same_as(dict(host.buffer_map)[host.params[0]].data)
    assert want.body.value.op.name_hint == "main_kernel"


def test_split_thread_kernels_leaves_host_code():
    @T.prim_func
    def host(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)

    mod = _module(host, "c")
    assert_structural_equal(Pass("tir.SplitThreadKernels")(mod), mod)


def test_thread_sync_between_shared_write_and_read():
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            S = T.allocate([32], "float32", "shared")
            S_1 = T.decl_buffer((32,), "float32", data=S, scope="shared")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                S_1[tx] = A[bx * 32 + tx]
                B[bx * 32 + tx] = S_1[31 - tx]

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"target": "cuda"})
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            S = T.allocate([32], "float32", "shared")
            S_1 = T.decl_buffer((32,), "float32", data=S, scope="shared")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                S_1[tx] = A[bx * 32 + tx]
                # T.tvm_storage_sync("shared") parses as a handle-typed call today; the pass
                # builds the int32 call that TVM prints.
                T.evaluate(T.call_intrin("int32", "tir.tvm_storage_sync", "shared"))
                B[bx * 32 + tx] = S_1[31 - tx]

    after = tt.ThreadSync()(_module(before, "cuda")).lookup("main")
    assert_structural_equal(after, expected.with_attr("global_symbol", _core.StringImm("main")))


def test_thread_sync_takes_the_storage_scope():
    # As TVM's tir.ThreadSync(storage_scope): barriers only for memory of that scope.
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            S = T.allocate([32], "float32", "shared")
            S_1 = T.decl_buffer((32,), "float32", data=S, scope="shared")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                S_1[tx] = A[bx * 32 + tx]
                B[bx * 32 + tx] = S_1[31 - tx]

    mod = _module(before, "cuda")
    assert_structural_equal(tt.ThreadSync("shared")(mod), tt.ThreadSync()(mod))
    assert "tvm_storage_sync" in tt.ThreadSync("shared")(mod).script()
    assert "tvm_storage_sync" not in tt.ThreadSync("warp")(mod).script()
    with pytest.raises(TypeError, match="storage scope name"):
        tt.ThreadSync(3)
