"""Executor: runs a built DSL kernel on numpy arrays and scalars, checking every argument."""

import numpy as np

from .. import _core
from .types import DType, PtrType

_NP_NAMES = {"bfloat16": "bfloat16"}


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if name == "void":
        return None
    return np.dtype(name)


class Executor:
    """A compiled kernel. Call it with one argument per parameter: numpy arrays for pointers
    (used in place, without copies; ``None`` passes a null pointer), numbers for scalars."""

    def __init__(self, module, prim_func, entry):
        self._module = module
        self.name = entry
        params, _ = prim_func.signature()
        self._params = []
        kinds = []
        extents = _core.pointer_access_extents(module.ir, entry)
        for (name, ann, _default), extent in zip(params, extents):
            if isinstance(ann, PtrType):
                elem = ann.element
                self._params.append((name, "ptr", elem, _np_dtype(elem.split("x")[0] if "x" in elem and not elem.startswith("bool") else elem), extent))
                kinds.append(-1)
            else:
                t = _core.DataType(ann.name)
                self._params.append((name, "scalar", ann.name, None, extent))
                kinds.append(t.type_code * 256 + t.bits)
        self._kinds = kinds

    @property
    def c_code(self):
        """The generated OpenCL-C-style source."""
        return self._module.source

    @property
    def lib_path(self):
        return self._module.lib_path

    def _check(self, args):
        if len(args) != len(self._params):
            names = ", ".join(p[0] for p in self._params)
            raise TypeError(f"{self.name}() takes {len(self._params)} arguments ({names}) but {len(args)} were given")
        values = []
        for (name, kind, dtype, np_dtype, extent), arg in zip(self._params, args):
            if kind == "ptr":
                if arg is None or (isinstance(arg, int) and arg == 0):
                    values.append(0)
                    continue
                if not isinstance(arg, np.ndarray):
                    raise TypeError(f"argument '{name}' of {self.name}() must be a numpy array, got {type(arg).__name__}")
                if np_dtype is not None and arg.dtype != np_dtype:
                    raise TypeError(f"argument '{name}' of {self.name}() must have dtype {dtype}, got {arg.dtype}")
                if not arg.flags.c_contiguous:
                    raise ValueError(f"argument '{name}' of {self.name}() must be a C-contiguous array")
                if extent > 0 and arg.size * arg.itemsize < extent * (arg.itemsize if np_dtype is None else np_dtype.itemsize):
                    raise ValueError(f"argument '{name}' of {self.name}() has {arg.size} elements but the kernel accesses {extent}")
                values.append(arg.ctypes.data)
            else:
                if isinstance(arg, np.ndarray) and arg.ndim == 0:
                    arg = arg.item()
                elif isinstance(arg, np.generic):
                    arg = arg.item()
                if dtype.startswith(("int", "uint", "bool")):
                    if isinstance(arg, float) or not isinstance(arg, int):
                        raise TypeError(f"argument '{name}' of {self.name}() must be an integer ({dtype}), got {type(arg).__name__}")
                    info = np.iinfo(dtype) if dtype != "bool" else None
                    if info is not None and not info.min <= arg <= info.max:
                        raise ValueError(f"argument '{name}' of {self.name}() = {arg} is out of range for {dtype}")
                elif not isinstance(arg, (int, float)) or isinstance(arg, bool):
                    raise TypeError(f"argument '{name}' of {self.name}() must be a number ({dtype}), got {type(arg).__name__}")
                values.append(arg)
        return values

    def __call__(self, *args):
        _core.call_dsl(self._module, self._kinds, self._check(args))

    run = __call__

    def __repr__(self):
        return f"<Executor {self.name} at {self.lib_path}>"
