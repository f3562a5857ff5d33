"""tessera.target.Target: parsing, export, the current target, and ts.build with a Target."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.script import tir as T
from tessera.target import Target


def test_parse_and_print():
    t = Target("cuda -arch=sm_80 -max_num_threads=1024")
    assert t.kind.name == "cuda" and t.kind == "cuda" and t.arch == "sm_80"
    assert t.attrs["max_num_threads"] == 1024 and t.keys == ("cuda", "gpu")
    assert str(t) == "cuda -arch=sm_80 -max_num_threads=1024"
    assert Target(t.export()) == t and Target(str(t)) == t
    llvm = Target("llvm -mcpu=skylake -mattr=+avx2,+fma")
    assert llvm.keys == ("cpu",) and llvm.mcpu == "skylake" and llvm.mattr == ["+avx2", "+fma"]
    assert Target({"kind": "cuda", "arch": "sm_90"}, host="llvm").host.kind.name == "llvm"


def test_errors():
    with pytest.raises(ValueError, match="tessera does not support the target kind 'rocm'") as info:
        Target("rocm")
    assert isinstance(info.value, TesseraError)
    with pytest.raises(ValueError, match="does not start with '-'"):
        Target("llvm mcpu")
    with pytest.raises(TypeError):
        Target(3)


def test_current():
    assert Target.current() is None
    with Target("llvm") as outer:
        with Target("cuda") as inner:
            assert Target.current() is inner
        assert Target.current() is outer
    assert Target.current() is None
    with pytest.raises(ValueError, match="no target is current"):
        Target.current(allow_none=False)


def test_build_with_a_target():
    @T.prim_func
    def inc(A: T.Buffer((4,), "int32")):
        for i in range(4):
            A[i] = A[i] + 1

    a = np.arange(4, dtype="int32")
    ts.build(inc, target=Target("llvm"))(a)
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
