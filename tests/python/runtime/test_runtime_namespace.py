"""The names of TVM's tvm.runtime that tessera.runtime provides: enabled, num_threads,
DataType, DataTypeCode, Object, Executable."""

import pytest

import tessera as ts
from tessera import runtime


def test_enabled_answers_for_host_and_device_targets():
    assert runtime.enabled("llvm") and runtime.enabled("c") and runtime.enabled("cpu")
    assert runtime.enabled(ts.target.Target("llvm -mcpu=skylake"))
    assert runtime.enabled("cuda") == ts.cuda(0).exist
    assert not runtime.enabled("vulkan") and not runtime.enabled("opencl")


def test_num_threads_follows_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert runtime.num_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "5,2")  # nested levels: the outer one
    assert runtime.num_threads() == 5
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert runtime.num_threads() >= 1


def test_ir_type_names():
    assert runtime.DataType is ts.ir.DataType and runtime.DataType("int8").bits == 8
    assert runtime.DataTypeCode is ts.ir.DataTypeCode
    assert isinstance(ts.tir.const(1, "int32"), runtime.Object)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        runtime.nothing
