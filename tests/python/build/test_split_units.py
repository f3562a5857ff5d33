"""Large host C is compiled as several units in parallel at -O2 (instead of one file at -O0):
the library computes the same results, get_source() is the same one file, the units share
the library's error state, and a failing unit reports its compiler error."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.error import BuildError, TesseraRuntimeError
from tessera.script import tir as T


def _wide(n):
    A = te.placeholder((n,), name="A", dtype="float32")
    outs = [te.compute((1,), lambda i, s=s: A[s] * 2.0 + 1.0, name=f"O{s}") for s in range(n)]
    return te.create_prim_func([A] + outs)


def _build(func, split_bytes, tmp_path, **extra):
    config = {"tir.OutlineLargeBody": {"max_nodes": 200}, "tessera.host_split_bytes": split_bytes,
              "tessera.dump_ir": str(tmp_path)}
    config.update(extra)
    with ts.transform.PassContext(config=config):
        return ts.build(func, target="c")


def _units(tmp_path):
    return sorted(str(p) for p in tmp_path.rglob("*_codegen_unit*.c"))


def test_split_library_computes_what_the_single_file_computes(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_BUILD_JOBS", "2")
    n = 80
    func = _wide(n)
    whole = _build(func, 0, tmp_path / "whole")
    split = _build(func, 3000, tmp_path / "split")
    assert not _units(tmp_path / "whole")
    units = _units(tmp_path / "split")
    assert len(units) >= 3, units
    # One source as far as the user sees it; the private parts lose `static` only in the units.
    assert split.get_source() == whole.get_source()
    texts = [open(u).read() for u in units]
    definitions = [re.findall(r"\nvoid (main_part\d+)\(void\* args\) \{", t) for t in texts]
    defined = sorted(name for names in definitions for name in names)
    assert defined == sorted(re.findall(r"\nstatic void (main_part\d+)\(void\* args\) \{", whole.get_source()))
    assert len(defined) == len(set(defined)) >= 3
    assert all(t.startswith("#define TESSERA_SPLIT_UNIT 1\n") for t in texts)
    assert sum("TESSERA_SPLIT_UNIT_OWNER" in t for t in texts) == 1
    a = np.random.rand(n).astype("float32")
    for lib in (whole, split):
        outs = [np.zeros(1, "float32") for _ in range(n)]
        lib(a, *outs)
        np.testing.assert_array_equal(np.concatenate(outs), a * np.float32(2) + np.float32(1))
    # The exported library loads back with its embedded source and metadata.
    path = str(tmp_path / "split.so")
    split.export_library(path)
    again = ts.runtime.load_module(path)
    assert again.get_source() == whole.get_source()
    outs = [np.zeros(1, "float32") for _ in range(n)]
    again(a, *outs)
    np.testing.assert_array_equal(np.concatenate(outs), a * np.float32(2) + np.float32(1))


def test_errors_raised_in_another_unit_reach_the_caller(tmp_path):
    # A bound check fails in the packed entry; __tessera_get_last_error, which the runtime
    # reads the message through, is defined in another unit: the units share one error state.
    n = 64

    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), k: T.int32):
        for i in range(64):
            B[i] = A[i] * T.float32(2)
        for i in range(64):
            A[i] = B[i] + T.float32(1)
        for i in range(64):
            B[(i + k) % 128] = A[i]

    lib = _build(f, 200, tmp_path, **{"tir.instrument_bound_checkers": True,
                                      "tir.OutlineLargeBody": {"max_nodes": 20}})
    assert len(_units(tmp_path)) >= 2
    a = np.ones(n, "float32")
    b = np.zeros(n, "float32")
    lib(a, b, 0)
    np.testing.assert_array_equal(b, np.full(n, 3, "float32"))
    with pytest.raises(TesseraRuntimeError, match="out of bounds|outside"):
        lib(a, b, 64)
    # The state is reset after the error: the next call succeeds.
    lib(np.ones(n, "float32"), b, 0)
    np.testing.assert_array_equal(b, np.full(n, 3, "float32"))


def test_a_unit_that_does_not_compile_names_its_command(tmp_path):
    with pytest.raises(BuildError, match=r"C compilation failed \(exit status 1\)(.|\n)*command: .* -c -fPIC"):
        _build(_wide(40), 2000, tmp_path, **{"tessera.cc_options": "-DTESSERA_HAVE_LIBMVEC=1 -include /nonexistent.h"})
