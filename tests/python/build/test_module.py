"""Runtime modules: entry and named functions, export/load round trip, time_evaluator, NDArray."""

import os

import numpy as np
import pytest

import tessera as ts
from tessera.script import ir as I
from tessera.script import tir as T


@I.ir_module
class Mod:
    @T.prim_func
    def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in T.parallel(16):
            C[i] = A[i] + B[i]

    @T.prim_func
    def scale(A: T.Buffer((16,), "float32"), s: T.float32):
        for i in T.vectorized(16):
            A[i] = A[i] * s


def test_named_functions_and_missing_entry():
    lib = ts.build(Mod)
    a, b, c = (ts.nd.array(np.arange(16, dtype="float32")) for _ in range(3))
    lib["add"](a, b, c)
    np.testing.assert_allclose(c.numpy(), np.arange(16) * 2)
    with pytest.raises(AttributeError, match="no function 'mul'"):
        lib["mul"]
    with pytest.raises(AttributeError, match="no entry function"):
        lib(a, b, c)


def test_export_and_load_round_trip(tmp_path):
    lib = ts.build(Mod)
    path = lib.export_library(tmp_path / "mod.so")
    loaded = ts.runtime.load_module(path)
    assert sorted(loaded.function_names) == ["add", "scale"]
    a = np.arange(16, dtype="float32")
    loaded["scale"](a, 0.5)
    np.testing.assert_allclose(a, np.arange(16) * 0.5)
    with pytest.raises(TypeError, match=r"^scale\.s must be a number \(float32\), got ndarray$"):
        loaded["scale"](a, a)
    with pytest.raises(RuntimeError, match=r"^scale: Expect arg\[0\] to be pointer$"):
        loaded["scale"](1, 1.0)
    assert "__tessera_packed_scale" in loaded.get_source()
    assert loaded.get_source() == lib.get_source()


def test_load_rejects_a_foreign_library(tmp_path):
    with pytest.raises(RuntimeError, match="cannot load"):
        ts.runtime.load_module(tmp_path / "missing.so")


def test_time_evaluator_returns_sane_numbers():
    lib = ts.build(Mod)
    a = ts.nd.array(np.ones(16, "float32"))
    timer = lib.time_evaluator("scale", ts.cpu(0), number=5, repeat=3)
    result = timer(a, 1.0)
    assert len(result.results) == 3
    assert 0 < result.min <= result.median <= result.max < 1.0
    assert result.min <= result.mean <= result.max and result.std >= 0
    slow = lib.time_evaluator("scale", ts.cpu(0), number=1, repeat=1, min_repeat_ms=20)(a, 1.0)
    assert slow.mean > 0
    with pytest.raises(AttributeError):
        lib.time_evaluator("nope", ts.cpu(0))


def test_ndarray_api():
    x = np.arange(12, dtype="int16").reshape(3, 4)
    a = ts.nd.array(x, device=ts.cpu(0))
    assert a.shape == (3, 4) and a.dtype == "int16" and a.device == ts.cpu(0)
    np.testing.assert_array_equal(a.numpy(), x)
    a.copyfrom(x * 2)
    np.testing.assert_array_equal(a.numpy(), x * 2)
    with pytest.raises(ValueError, match="shape mismatch"):
        a.copyfrom(np.zeros((4, 3), "int16"))
    e = ts.nd.empty((2, 2), "float64")
    assert e.shape == (2, 2) and e.dtype == "float64"
    assert ts.device("cpu", 0) == ts.cpu(0)
    b = ts.nd.array(np.array([True, False]))
    assert b.dtype == "bool" and b.numpy().tolist() == [True, False]


def test_bool_and_float16_buffers():
    @T.prim_func
    def g(A: T.Buffer((8,), "float16"), M: T.Buffer((8,), "bool"), B: T.Buffer((8,), "float16")):
        for i in T.serial(8):
            B[i] = T.Select(M[i], A[i] * T.float16(2), A[i])

    lib = ts.build(g)
    a = np.arange(8, dtype="float16")
    m = np.array([True, False] * 4)
    b = np.zeros(8, "float16")
    lib(a, m, b)
    np.testing.assert_array_equal(b, np.where(m, a * 2, a))


def test_export_to_a_bare_file_name_loads_from_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lib = ts.build(Mod)
    path = lib.export_library("bare.so")
    assert path == str(tmp_path / "bare.so")
    loaded = ts.runtime.load_module("bare.so")
    a = np.arange(16, dtype="float32")
    loaded["scale"](a, 2.0)
    np.testing.assert_allclose(a, np.arange(16) * 2.0)


def test_exported_library_is_readable_like_a_normal_file(tmp_path):
    old = os.umask(0o022)
    try:
        path = ts.build(Mod).export_library(tmp_path / "mode.so")
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o755


def test_get_source_formats():
    lib = ts.build(Mod)
    asm = lib.get_source("asm")
    assert "__tessera_packed_scale" in asm and ".text" in asm
    assert lib.get_source("c") == lib.get_source()
    with pytest.raises(ValueError, match="no LLVM IR"):
        lib.get_source("ll")
    with pytest.raises(ValueError, match="unknown source format 'xyz'"):
        lib.get_source("xyz")
