"""tessera.target.Target: parsing, export, the current target, and ts.build with a Target."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.script import tir as T
from tessera.target import Target


@T.prim_func
def _noop(A: T.Buffer((1,), "int32")):
    A[0] = 0


def test_parse_and_print():
    t = Target("cuda -arch=sm_80 -max_num_threads=1024")
    assert t.kind.name == "cuda" and t.arch == "sm_80"
    assert t.attrs["max_num_threads"] == 1024 and list(t.keys) == ["cuda", "gpu"]
    # As TVM prints it: the kind, its keys, then the options with the kind's defaults.
    assert str(t) == "cuda -keys=cuda,gpu -arch=sm_80 -max_num_threads=1024 -thread_warp_size=32"
    assert Target(t.export()) == t and Target(str(t)) == t
    llvm = Target("llvm -mcpu=skylake -mattr=+avx2,+fma")
    assert list(llvm.keys) == ["cpu"] and llvm.mcpu == "skylake" and list(llvm.mattr) == ["+avx2", "+fma"]
    assert Target({"kind": "cuda", "arch": "sm_90"}, host="llvm").host.kind.name == "llvm"


def test_errors():
    # TVM knows rocm, so the Target exists; tessera cannot build for it.
    assert Target("rocm").kind.name == "rocm"
    with pytest.raises(ValueError, match="tessera cannot build for the 'rocm' target") as info:
        ts.build(_noop, target=Target("rocm"))
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError, match="must look like -key=value") as info:
        Target("llvm mcpu")
    assert isinstance(info.value, TesseraError)
    with pytest.raises(ValueError, match="made from a string, a dict or a Target"):  # TVM: ValueError
        Target(3)


def test_current():
    assert Target.current() is None
    with Target("llvm") as outer:
        with Target("cuda") as inner:
            assert Target.current() is inner
        assert Target.current() is outer
    assert Target.current() is None
    with pytest.raises(ValueError, match="no target is set"):
        Target.current(allow_none=False)


def test_build_with_a_target():
    @T.prim_func
    def inc(A: T.Buffer((4,), "int32")):
        for i in range(4):
            A[i] = A[i] + 1

    a = np.arange(4, dtype="int32")
    ts.build(inc, target=Target("llvm"))(a)
    np.testing.assert_array_equal(a, [1, 2, 3, 4])


def test_target_holds_the_parsed_cpp_target():
    from tessera import _core, driver

    t = Target("cuda -arch=sm_80")
    core = t._core_target()
    assert isinstance(core, _core.Target) and core is t._core_target()  # made once
    assert core.kind == "cuda" and core.get_attr("arch") == "sm_80" and core.is_gpu
    assert driver._core_target(t) is core  # ts.build / ts.lower use the same object
    assert t.facts["warp_size"] == 32 and t.facts["kind"] == "cuda"
    # The host's facts are detected once, in C++; every reader agrees.
    host = Target("llvm").facts
    assert host["vector_bits"] == ts._core.host_vector_bits()
    assert host == ts.autoschedule.target_facts("llvm")
    parsed = driver._core_target("c -opt-level=2  -fast-math")
    assert parsed.kind == "c" and list(parsed.attrs) == [("opt-level", "2"), ("fast-math", "")]
    assert str(parsed) == "c -opt-level=2 -fast-math"
    with pytest.raises(ValueError, match="must look like -key=value"):
        _core.Target("llvm mcpu")


def test_fact_overrides_do_not_change_the_target():
    t = Target("llvm")
    bits = t.facts["vector_bits"]
    assert ts.autoschedule.target_facts(t, {"vector_bits": 1024})["vector_bits"] == 1024
    assert t.facts["vector_bits"] == bits
    with pytest.raises(ValueError, match="unknown target fact 'lanes'"):
        ts.autoschedule.target_facts(t, {"lanes": 4})
