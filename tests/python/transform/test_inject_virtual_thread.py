"""tir.InjectVirtualThread (TVM v0.23's rules): a virtual thread's body is repeated per thread at
the outermost statement that depends on it (unrolled below 16 threads and no inner loop, a serial
loop otherwise); allocations written with thread-dependent values get one copy per thread;
"cthread" shares nothing."""

import pytest

import tessera as ts
from tessera.script import tir as T

from conftest import run_pass


def test_vthread_copies_only_the_buffers_it_writes(golden):
    # B is written with values that depend on v: one copy per thread, side by side. R is only
    # read: shared. Each store is repeated for v = 0, 1 inside its loop.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        v = T.env_thread("vthread")
        T.launch_thread(v, 2)
        B_data = T.allocate([8], "float32", "shared")
        B = T.Buffer([8], "float32", data=B_data, scope="shared")
        R_data = T.allocate([8], "float32", "shared")
        R = T.Buffer([8], "float32", data=R_data, scope="shared")
        for i in range(8):
            B[i] = A[v * 8 + i] + R[i]
        for i in range(8):
            C[v * 8 + i] = B[i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B_data = T.allocate([16], "float32", "shared")
        B = T.Buffer([16], "float32", data=B_data, scope="shared")
        R_data = T.allocate([8], "float32", "shared")
        R = T.Buffer([8], "float32", data=R_data, scope="shared")
        for i in range(8):
            B[T.Mul(0, 8) + i] = A[T.Mul(0, 8) + i] + R[i]
            B[T.Mul(1, 8) + i] = A[T.Mul(1, 8) + i] + R[i]
        for i in range(8):
            C[T.Mul(0, 8) + i] = B[T.Mul(0, 8) + i]
            C[T.Mul(1, 8) + i] = B[T.Mul(1, 8) + i]

    golden("InjectVirtualThread", before, expected)


def test_sixteen_threads_become_a_serial_loop(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        v = T.env_thread("vthread")
        T.launch_thread(v, 16)
        A[v * 4] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        for v_s in range(16):
            A[v_s * 4] = T.float32(1)

    golden("InjectVirtualThread", before, expected)


def _cthread_func(tag):
    c = ts.te.thread_axis(tag)
    ib = ts.tir.ir_builder.create()
    A = ib.pointer("int32", name="A")
    ib.scope_attr(c, "virtual_thread", 2)
    B = ib.allocate("int32", 4, name="B", scope="local")
    B[0] = ts.tir.call_intrin("int32", "tir.tvm_context_id")
    A[c] = B[0]
    return ts.tir.PrimFunc([], ib.get())


def test_cthread_copies_every_allocation_and_names_the_context():
    func = run_pass("InjectVirtualThread", _cthread_func("cthread"))
    alloc = func.body
    assert [int(e) for e in alloc.extents] == [8]
    stores = list(alloc.body.seq)
    assert len(stores) == 4
    # Each thread writes its own copy of B (at 4 * c) with its context id, c itself.
    assert [int(s.value) for s in stores[:2]] == [0, 1]
    assert [str(s.indices[0]) for s in stores[:2]] == ["T.Mul(0, 4)", "T.Mul(1, 4)"]
    assert [str(s.indices[0]) for s in stores[2:]] == ["0", "1"]
    assert "tvm_context_id" not in func.script()


def test_vthread_keeps_the_context_call_and_shares_an_untouched_buffer():
    # B's value (the context id) does not depend on the thread: one B, one store, read twice.
    func = run_pass("InjectVirtualThread", _cthread_func("vthread"))
    assert [int(e) for e in func.body.extents] == [4]
    stores = list(func.body.body.seq)
    assert len(stores) == 3
    assert "tvm_context_id" in str(stores[0].value)


def test_while_inside_a_virtual_thread_is_an_error():
    @T.prim_func
    def func(A: T.Buffer((8,), "int32")):
        v = T.env_thread("vthread")
        T.launch_thread(v, 2)
        while A[v] < 10:
            A[v] = A[v] + 1

    with pytest.raises(ValueError, match="while loop inside a virtual thread"):
        run_pass("InjectVirtualThread", func)


def test_a_copied_allocation_must_be_flat():
    @T.prim_func
    def func(A: T.Buffer((8,), "float32")):
        v = T.env_thread("vthread")
        T.launch_thread(v, 2)
        B_data = T.allocate([2, 4], "float32", "shared")
        B = T.Buffer([2, 4], "float32", data=B_data, scope="shared")
        B[0, 0] = A[v]

    with pytest.raises(ValueError, match="must be flat"):
        run_pass("InjectVirtualThread", func)


def test_a_function_without_virtual_threads_is_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(0)

    unchanged("InjectVirtualThread", func)
