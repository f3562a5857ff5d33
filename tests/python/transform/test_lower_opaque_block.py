"""tir.LowerOpaqueBlock: blocks are removed; allocations become T.allocate + T.decl_buffer."""

import pytest

from tessera import _core
from tessera.error import TesseraError
from tessera.script import tir as T
from tessera.tir import transform as tt


def test_blocks_removed_and_allocation_declared(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            Y = T.alloc_buffer((16,))
            for i in T.serial(16):
                with T.block("Y"):
                    T.reads(A[i])
                    T.writes(Y[i])
                    Y[i] = A[i] + T.float32(1)
            for i in T.serial(16):
                with T.block("B"):
                    T.reads(Y[i])
                    T.writes(B[i])
                    B[i] = Y[i] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        for i in T.serial(16):
            Y_1[i] = A[i] + T.float32(1)
        for i in T.serial(16):
            B[i] = Y_1[i] * T.float32(2)

    golden("LowerOpaqueBlock", before, expected)


def test_predicate_becomes_if(golden):
    @T.prim_func
    def before(A: T.Buffer((10,), "float32")):
        for io, ii in T.grid(3, 4):
            with T.block("A"):
                T.where(io * 4 + ii < 10)
                T.reads()
                T.writes(A[io * 4 + ii])
                A[io * 4 + ii] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((10,), "float32")):
        for io, ii in T.grid(3, 4):
            if io * 4 + ii < 10:
                A[io * 4 + ii] = T.float32(0)

    golden("LowerOpaqueBlock", before, expected)


def test_unit_loop_removed_and_its_variable_replaced(golden):
    @T.prim_func
    def before(A: T.Buffer((12,), "float32")):
        for i in T.serial(3):
            for u in T.serial(2, 3):
                for k in T.serial(4):
                    A[i * 4 + k] = T.Cast("float32", u)

    @T.prim_func
    def expected(A: T.Buffer((12,), "float32")):
        for i in T.serial(3):
            for k in T.serial(4):
                A[i * 4 + k] = T.Cast("float32", 2)

    golden("LowerOpaqueBlock", before, expected)


def test_annotated_unit_loop_stays(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        for u in T.serial(1, annotations={"keep_me": 1}):
            for k in T.serial(4):
                A[k + u] = T.float32(0)

    golden("LowerOpaqueBlock", before, before)


def test_thread_loops_become_launch_thread(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for vt in T.thread_binding(2, thread="vthread"):
                for tx in T.thread_binding(2, thread="threadIdx.x"):
                    A[bx * 4 + vt * 2 + tx] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        bx = T.launch_thread("blockIdx.x", 2)
        vt = T.launch_thread("vthread", 2)
        tx = T.launch_thread("threadIdx.x", 2)
        A[bx * 4 + vt * 2 + tx] = T.float32(1)

    golden("LowerOpaqueBlock", before, expected)


def test_pragmas_become_attributes_in_key_order():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        for k in T.serial(4, annotations={"pragma_b": 2, "pragma_a": "x", "other": 1}):
            with T.block("blk"):
                T.reads()
                T.writes(A[k])
                T.block_attr({"pragma_z": 3, "dropped": 1})
                A[k] = T.float32(0)

    # The loop's pragmas wrap the loop (on its variable, which TVMScript cannot name outside the
    # loop), so they are checked on the IR.
    out = _lower(before)
    assert out.body.attr_key == "pragma_a" and out.body.value.value == "x"
    assert out.body.body.attr_key == "pragma_b" and out.body.body.value.value == 2
    inner = out.body.body.body
    assert list(inner.annotations) == ["other"] and inner.annotations["other"].value == 1
    attr = inner.body
    assert attr.attr_key == "pragma_z" and attr.value.value == 3


def test_strided_allocation_keeps_dimensions(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 16), "float32")):
        B = T.alloc_buffer((4, 16), strides=(17, 1))
        for i, j in T.grid(4, 16):
            B[i, j] = A[i, j]

    @T.prim_func
    def expected(A: T.Buffer((4, 16), "float32")):
        B = T.allocate([4, 17], "float32", "global")
        B_1 = T.decl_buffer((4, 16), data=B, strides=(17, 1))
        for i, j in T.grid(4, 16):
            B_1[i, j] = A[i, j]

    golden("LowerOpaqueBlock", before, expected)


def test_pragma_that_is_not_a_value_is_refused():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        for k in T.serial(4, annotations={"pragma_bad": [1, 2]}):
            A[k] = T.float32(0)

    with pytest.raises(TesseraError, match="pragma_bad must be a number or a string"):
        _lower(before)


def _lower(func):
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return tt.LowerOpaqueBlock()(mod)["main"]
