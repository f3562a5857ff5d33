"""Static initialisation in host code: a "coproc_uop_scope" of "TVMBackendRunOnce" runs its body
on the first call only; tir.tvm_static_handle is a slot that keeps its value across calls; a
packed callback receives opaque handles as ctypes.c_void_p and may return one."""

import ctypes

import numpy as np
import pytest

import tessera as ts
from tessera import error, te, tir
from tessera.runtime import register_func, remove_global_func


def _run_once_func(value="TVMBackendRunOnce"):
    Ab = tir.decl_buffer((te.size_var("n"),), "int64", name="A")
    ib = tir.ir_builder.create()
    A = ib.buffer_ptr(Ab)
    with ib.new_scope():
        ib.scope_attr(te.thread_axis((0, 1), "cop"), "coproc_uop_scope", tir.StringImm(value))
        with ib.for_range(0, Ab.shape[0], "i", kind="parallel") as i:
            A[i] = A[i] + 1
    with ib.for_range(0, Ab.shape[0], "j") as j:  # after the scope: runs on every call
        A[j] = A[j] * 2
    return tir.PrimFunc([Ab], ib.get())


def test_run_once_scope_runs_on_the_first_call_only():
    lib = ts.build(_run_once_func(), "llvm")
    a = np.zeros(9, "int64")
    lib(a)
    np.testing.assert_array_equal(a, np.full(9, 2))
    lib(a)
    np.testing.assert_array_equal(a, np.full(9, 4))


def test_run_once_scope_needs_the_runtime_function_name():
    with pytest.raises(error.TesseraError, match="coproc_uop_scope whose value is not \"TVMBackendRunOnce\""):
        ts.build(_run_once_func("MyInit"), "llvm")


def test_static_handle_keeps_its_value_across_calls():
    seen = []

    def callback(handle, array):
        assert isinstance(handle, ctypes.c_void_p)
        slot = ctypes.cast(handle, ctypes.POINTER(ctypes.c_void_p))
        seen.append(slot[0])
        slot[0] = 1234
        return handle

    register_func("tessera_test_static_slot", callback, override=True)
    try:
        Ab = tir.decl_buffer((4,), "float32", name="A")
        ib = tir.ir_builder.create()
        ib.emit(tir.call_packed("tessera_test_static_slot",
                                tir.call_intrin("handle", "tir.tvm_static_handle"), Ab))
        lib = ts.build(tir.PrimFunc([Ab], ib.get()), "c")
        assert "static void* tessera_static_handle_0" in lib.get_source()
        a = np.zeros(4, "float32")
        lib(a)
        lib(a)
        assert seen == [None, 1234]
    finally:
        remove_global_func("tessera_test_static_slot")
