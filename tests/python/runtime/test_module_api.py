"""Module as TVM's runtime exposes it: kind, implements_function, the is_* properties,
export_library's keywords, Executable (jit, [], export), and C source modules."""

import ctypes
import os

import numpy as np
import pytest

import tessera as ts
from tessera.runtime import Executable
from tessera.runtime._ffi_api import CSourceModuleCreate
from tessera.script import ir as I
from tessera.script import tir as T


@I.ir_module
class Mod:
    @T.prim_func
    def add(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        for i in range(10):
            C[i] = A[i] + B[i]


def _check_add(fn):
    a = ts.nd.array(np.arange(10, dtype="float32"))
    b = ts.nd.array(np.full(10, 2.5, "float32"))
    c = ts.nd.empty((10,), "float32")
    fn(a, b, c)
    np.testing.assert_array_equal(c.numpy(), np.arange(10, dtype="float32") + 2.5)


def test_module_properties_of_a_build_and_a_loaded_library(tmp_path):
    lib = ts.build(Mod, target="llvm")
    assert lib.kind == "llvm" and lib.imports == []
    assert lib.implements_function("add") and not lib.implements_function("sub")
    assert lib.is_runnable() and lib.is_compilation_exportable() and not lib.is_binary_serializable()
    path = lib.export_library(tmp_path / "lib.so", workspace_dir=str(tmp_path))
    loaded = ts.runtime.load_module(path)
    assert loaded.kind == "library" and loaded.implements_function("add")
    assert loaded.is_runnable() and not loaded.is_compilation_exportable()
    _check_add(loaded.get_function("add", query_imports=True))


def test_export_library_refuses_what_it_cannot_honour(tmp_path):
    lib = ts.build(Mod)
    with pytest.raises(ValueError, match="fcompile not supported"):
        lib.export_library(tmp_path / "a.so", fcompile=lambda *a: None)
    with pytest.raises(ValueError, match="addons, options not supported"):
        lib.export_library(tmp_path / "a.so", addons=["x.o"], options=["-O3"])
    assert not os.path.exists(tmp_path / "a.so")


def test_executable_of_a_native_module_is_that_module():
    lib = ts.build(Mod, target="llvm")
    ex = Executable(lib)
    assert ex.mod is lib and ex._jitted_mod is None
    assert ex.jit() is lib and ex.jit(force_recompile=True) is lib
    _check_add(ex["add"])
    _check_add(ex)  # the entry: the module's only function


def test_executable_of_a_c_module_loads_its_library_on_jit(tmp_path):
    ex = Executable(ts.build(Mod, target="c"))
    first = ex.jit()
    assert first is ex.jit() and first.kind == "library"
    again = ex.jit(force_recompile=True)
    assert again is not first
    _check_add(again["add"])
    path = ex.export_library(str(tmp_path / "ex.so"))
    _check_add(ts.runtime.load_module(path)["add"])
    with pytest.raises(ValueError, match="wraps a built module"):
        Executable("lib.so")


def test_c_source_module_compiles_on_export(tmp_path):
    code = "int tessera_rt14_twice(int x) { return 2 * x; }\n"
    mod = CSourceModuleCreate(code, "c", ["tessera_rt14_twice"], None)
    assert mod.kind == "c" and mod.get_source() == code
    assert not mod.is_runnable() and mod.is_binary_serializable() and mod.is_compilation_exportable()
    assert mod.implements_function("tessera_rt14_twice")
    path = mod.export_library(tmp_path / "twice.so")
    assert ctypes.CDLL(path).tessera_rt14_twice(21) == 42
    # "cc" is C++ source.
    cpp = 'template <int N> int scale(int x) { return N * x; }\nextern "C" int tessera_rt14_thrice(int x) { return scale<3>(x); }\n'
    path = CSourceModuleCreate(cpp, "cc", [], None).export_library(tmp_path / "thrice.so")
    assert ctypes.CDLL(path).tessera_rt14_thrice(5) == 15


def test_c_source_module_errors(tmp_path):
    with pytest.raises(RuntimeError, match="the C compiler failed"):
        CSourceModuleCreate("int broken(", "c", [], None).export_library(tmp_path / "b.so")
    with pytest.raises(ValueError, match="unknown source format 'ptx'"):
        CSourceModuleCreate("", "ptx", [], None)
    with pytest.raises(ValueError, match="const_vars"):
        CSourceModuleCreate("", "c", [], ["p0"])
    with pytest.raises(TypeError, match="must be a str"):
        CSourceModuleCreate(b"int x;", "c", [], None)
