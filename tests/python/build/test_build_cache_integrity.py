"""The build cache never loads a wrong library: entries are checked against SHA-256 digests."""

import glob
import os
import stat

import numpy as np

import tessera as ts
from tessera import te


def _func(scale):
    A = te.placeholder((8,), name="A", dtype="float32")
    B = te.compute((8,), lambda i: A[i] * scale, name="B")
    return te.create_prim_func([A, B])


def _run(lib, scale):
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a * scale)


def _entry(cache):
    libs = glob.glob(os.path.join(cache, "host", "*.so"))
    assert len(libs) == 1
    return libs[0]


def test_keys_are_sha256_and_folders_private(tmp_path, monkeypatch):
    cache = str(tmp_path / "c")
    monkeypatch.setenv("TESSERA_CACHE_DIR", cache)
    _run(ts.build(_func(2.0)), 2.0)
    so = _entry(cache)
    key = os.path.basename(so)[:-3]
    assert len(key) == 64 and all(c in "0123456789abcdef" for c in key)
    assert os.path.exists(so[:-3] + ".sha256")
    for d in (cache, os.path.join(cache, "host")):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


def _plant_and_rebuild(tmp_path, monkeypatch, corrupt):
    cache = str(tmp_path / "c")
    monkeypatch.setenv("TESSERA_CACHE_DIR", cache)
    _run(ts.build(_func(2.0)), 2.0)
    so = _entry(cache)
    corrupt(so, cache)
    # The corrupted entry is detected, rebuilt and the right function computed.
    _run(ts.build(_func(2.0)), 2.0)


def test_truncated_library_is_rebuilt(tmp_path, monkeypatch):
    def truncate(so, cache):
        with open(so, "r+b") as f:
            f.truncate(100)
    _plant_and_rebuild(tmp_path, monkeypatch, truncate)


def test_garbage_library_is_rebuilt(tmp_path, monkeypatch):
    def garbage(so, cache):
        with open(so, "wb") as f:
            f.write(os.urandom(4096))
    _plant_and_rebuild(tmp_path, monkeypatch, garbage)


def test_swapped_library_is_rebuilt(tmp_path, monkeypatch):
    def swap(so, cache):
        other = str(tmp_path / "other")
        os.environ["TESSERA_CACHE_DIR"] = other
        ts.build(_func(3.0))
        os.environ["TESSERA_CACHE_DIR"] = cache
        os.replace(_entry(other), so)
    _plant_and_rebuild(tmp_path, monkeypatch, swap)


def test_missing_manifest_is_rebuilt(tmp_path, monkeypatch):
    def drop(so, cache):
        os.remove(so[:-3] + ".sha256")
    _plant_and_rebuild(tmp_path, monkeypatch, drop)
