"""Running built modules: devices, arrays, host library modules, timing.

>>> lib = ts.build(mod, target="c")
>>> a = ts.nd.array(np.ones(16, "float32")); b = ts.nd.empty((16,), "float32")
>>> lib(a, b)
>>> ts.runtime.load_module("f.so")  # after lib.export_library("f.so")
"""

from . import container
from .container import ShapeTuple, String
from .device import Device, cpu, cuda, device, metal, opencl, rocm, vulkan
from .module import BenchmarkResult, Module, load_module
from .executable import Executable
from .ndarray import NDArray, array, empty, from_dlpack
from .registry import get_global_func, list_global_func_names, register_func, remove_global_func

def convert(value):
    """TVM v0.23's ``tvm.runtime.convert`` (``tvm_ffi.convert``): a Python value as a value of the
    IR's object system. Numbers, strings and IR objects are values already and come back as
    they are; lists and tuples become an Array, dicts a Map, whose numbers become constants
    (int32, or int64 when too large; float32)."""
    from .. import _core
    from ..tir.expr_ops import convert as to_expr

    from ..target import Target

    def item(v):
        if isinstance(v, (list, tuple, dict)):
            return convert(v)
        if isinstance(v, (bool, int, float)):
            return to_expr(v)
        if isinstance(v, str):
            return _core.StringImm(v)
        if isinstance(v, Target):  # as a function's "target" attribute: its settings
            from ..script.tir.frames import to_attr

            return to_attr(v)
        return v

    def key(k):
        # A Map key: a str by value, an IR object by identity, a number as a constant.
        return str(k) if isinstance(k, str) else item(k)

    if isinstance(value, (list, tuple)):
        return _core.Array([item(v) for v in value])
    if isinstance(value, dict):
        return _core.Map({key(k): item(v) for k, v in value.items()})
    return value


# TVM v0.23 names: tvm.runtime.tensor(np_array, device) makes an array (tvm.nd.array before).
tensor = array
Tensor = NDArray

__all__ = ["BenchmarkResult", "convert", "Device", "Executable", "Module", "NDArray", "array", "cpu", "cuda", "device",
           "metal", "opencl", "rocm", "vulkan", "container", "ShapeTuple", "String",
           "empty", "from_dlpack", "load_module", "tensor", "Tensor", "register_func", "get_global_func",
           "remove_global_func", "list_global_func_names", "const"]


def const(value, dtype=None, span=None):
    """TVM's ``tvm.runtime.const``: the constant ``tir.const(value, dtype)``."""
    from ..tir.expr_ops import const as _const

    return _const(value, None if dtype is None else str(dtype), span)
