"""Running built modules: devices, arrays, host library modules, timing.

>>> lib = ts.build(mod, target="c")
>>> a = ts.nd.array(np.ones(16, "float32")); b = ts.nd.empty((16,), "float32")
>>> lib(a, b)
>>> ts.runtime.load_module("f.so")  # after lib.export_library("f.so")
"""

from .device import Device, cpu, cuda, device
from .module import BenchmarkResult, Module, load_module
from .ndarray import NDArray, array, empty, from_dlpack
from .registry import get_global_func, list_global_func_names, register_func, remove_global_func

# TVM v0.23 names: tvm.runtime.tensor(np_array, device) makes an array (tvm.nd.array before).
tensor = array
Tensor = NDArray

__all__ = ["BenchmarkResult", "Device", "Module", "NDArray", "array", "cpu", "cuda", "device",
           "empty", "from_dlpack", "load_module", "tensor", "Tensor", "register_func", "get_global_func",
           "remove_global_func", "list_global_func_names"]
