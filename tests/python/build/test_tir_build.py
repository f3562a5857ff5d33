"""tir.build (TVM v0.23's tvm.tir.build) and tvm.compile's TIR path: how the target and the
pipeline are chosen, the Executable, and their errors; results against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.runtime import Executable, Module
from tessera.script import tir as T
from tessera.target import Target
from tessera.tir.build import compile as tvm_compile
from tessera.tir.build import resolve_target


def _add_one(n=13, dtype="float32"):
    A = te.placeholder((n,), dtype, name="A")
    B = te.compute((n,), lambda i: A[i] + tir.const(1, dtype), name="B")
    return te.create_prim_func([A, B])


def _run(lib, n=13, dtype="float32"):
    a = np.arange(n).astype(dtype) * 3
    b = np.zeros(n, dtype)
    lib(a, b)
    np.testing.assert_allclose(b, a + 1)


def test_tir_build_is_the_function_and_builds_a_prim_func():
    assert callable(tir.build)
    lib = tir.build(_add_one(), target="llvm")
    assert isinstance(lib, Module) and lib.type_key == "llvm"
    _run(lib)


def test_tir_build_of_a_module_with_several_functions():
    @ts.script.ir.ir_module
    class Mod:
        @T.prim_func
        def twice(A: T.Buffer((7,), "int32"), B: T.Buffer((7,), "int32")):
            for i in range(7):
                B[i] = A[i] * 2

        @T.prim_func
        def neg(A: T.Buffer((7,), "int32"), B: T.Buffer((7,), "int32")):
            for i in range(7):
                B[i] = 0 - A[i]

    lib = tir.build(Mod, target="c")
    a = np.arange(-3, 4).astype("int32")
    b = np.zeros(7, "int32")
    lib["twice"](a, b)
    np.testing.assert_array_equal(b, a * 2)
    lib["neg"](a, b)
    np.testing.assert_array_equal(b, -a)


def test_target_order_argument_then_current_then_function_attribute_then_llvm():
    func = _add_one()
    mod = ts.ir.IRModule.from_expr(func.with_attr("target", Target("c")))
    assert resolve_target(mod).kind.name == "c"
    assert resolve_target(mod, "llvm").kind.name == "llvm"
    with Target("llvm"):
        assert resolve_target(mod).kind.name == "llvm"
    assert resolve_target(ts.ir.IRModule.from_expr(func)).kind.name == "llvm"
    # Built with the target of its attribute.
    lib = tir.build(mod)
    assert lib.type_key == "c"
    _run(lib)


def test_pipeline_default_none_and_a_pass():
    func = _add_one(9, "int32")
    _run(tir.build(func, "llvm", pipeline=None), 9, "int32")
    seen = []

    def record(mod):
        seen.append(sorted(gv.name_hint for gv, _ in mod.functions))
        return mod

    _run(tir.build(func, "llvm", pipeline=record), 9, "int32")
    assert seen == [["main"]]
    # A tessera Pass runs on the module before the lowering.
    _run(tir.build(func, "llvm", pipeline=ts.transform.Sequential([tir.transform.Simplify()])), 9, "int32")


def test_pipeline_errors():
    func = _add_one()
    with pytest.raises(TesseraValueError, match="unknown pipeline 'fast'.*'default'"):
        tir.build(func, "llvm", pipeline="fast")
    with pytest.raises(TesseraTypeError, match="pipeline must be a name, a Pass or None, got int"):
        tir.build(func, "llvm", pipeline=3)
    with pytest.raises(TesseraTypeError, match="returned NoneType, not an IRModule"):
        tir.build(func, "llvm", pipeline=lambda mod: None)


def test_build_refuses_what_is_not_tir():
    with pytest.raises(TesseraTypeError, match="expected a PrimFunc or an IRModule, got str"):
        tir.build("main", "llvm")


def test_compile_returns_an_executable():
    exe = tvm_compile(_add_one(), "c", tir_pipeline="default")
    # TVM's Executable wraps the runtime module: callable and indexable, with mod and jit().
    assert isinstance(exe, Executable) and not isinstance(exe, Module)
    _run(exe)
    _run(exe["main"])
    assert isinstance(exe.mod, Module)
    assert "main" in exe.mod.function_names
    assert exe.mod.inspect_source() == exe.mod.get_source() == exe.mod.get_source("c")
    _run(exe.jit())
    with pytest.raises(ValueError, match="fcompile"):
        exe.jit(fcompile=lambda *a: None, force_recompile=True)
    with pytest.raises(TypeError):
        tvm_compile(_add_one(), "c", "default")  # the pipelines are keyword-only, as in TVM


def test_target_object_options_reach_the_compiler():
    # A cross -mtriple is refused for a Target object as for the same string.
    cross = "llvm -mtriple=armv7l-none-linux-gnueabihf -mattr=+neon"
    for target in (cross, Target(cross)):
        with pytest.raises(ValueError, match="is a cross target"):
            tir.build(_add_one(), target)
    # -opt-level of a Target object becomes the compiler's -O.
    lib = tir.build(_add_one(), Target("llvm -opt-level=1"))
    _run(lib)


def test_buffer_vstore_outside_a_prim_func_returns_the_store():
    A = tir.decl_buffer((8,), "float32", name="A")
    B = tir.decl_buffer((8,), "float32", name="B")
    i = tir.Var("i", "int32")
    store = B.vstore(i * 2, A.vload(i * 2, "float32x2") + tir.const(1, "float32x2"))
    assert isinstance(store, tir.BufferStore)
    assert isinstance(store.indices[0], tir.Ramp) and store.indices[0].lanes == 2
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL, store)
    lib = tir.build(tir.PrimFunc([A, B], body), "c")
    a = np.random.default_rng(0).random(8).astype("float32")
    b = np.zeros(8, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a + 1)


def test_stepped_loop_builds_with_canonicalize_loop_disabled():
    @T.prim_func
    def stepped(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
        for i in T.serial(3, 100, step=7):
            B[i] = A[i] * 2.0

    a = np.random.default_rng(1).random(100).astype("float32")
    for disabled in ([], ["tir.CanonicalizeLoop"]):
        with ts.transform.PassContext(disabled_pass=disabled):
            lib = tvm_compile(stepped, "llvm")
        b = np.zeros(100, "float32")
        lib(a, b)
        want = np.zeros(100, "float32")
        want[3:100:7] = a[3:100:7] * 2
        np.testing.assert_allclose(b, want)


def test_predicated_vector_store_and_load_on_the_c_target():
    # TVM's C code generator refuses predicated accesses; tessera's host C writes the lanes the
    # predicate keeps.
    @T.prim_func
    def masked(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        B.vstore([T.Ramp(0, 2, 4)], A.vload([T.Ramp(1, 1, 4)], predicate=T.Broadcast(T.bool(True), 4)),
                 predicate=T.Shuffle([T.Broadcast(T.bool(True), 2), T.Broadcast(T.bool(False), 2)],
                                     [0, 1, 2, 3]))

    a = np.arange(8).astype("float32") + 1
    b = np.zeros(8, "float32")
    tvm_compile(masked, "c")(a, b)
    np.testing.assert_array_equal(b, [2, 0, 3, 0, 0, 0, 0, 0])
