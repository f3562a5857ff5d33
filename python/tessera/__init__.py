"""tessera: a tensor-kernel compiler with a C++ core and Python front ends.

Submodules load on first use so that ``import tessera`` stays fast.
"""

import importlib as _importlib
import os as _os

from . import _core
from . import error

# The CUDA emulator (TESSERA_CUDA_EMULATOR=1) compiles kernels against the shipped headers.
_core.cuda_emulator_set_include_dir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include"))

__version__ = _core.__version__

_SUBMODULES = ("ir", "tir", "te", "transform", "script", "dsl", "lower", "runtime", "nd", "driver",
               "target")
# Attributes that live in a submodule: ts.build, ts.lower, ts.cpu, ...
_ATTRIBUTES = {
    "build": "driver",
    "cpu": "runtime",
    "cuda": "runtime",
    "device": "runtime",
    "Device": "runtime",
}


def __getattr__(name):
    if name in _SUBMODULES:
        return _importlib.import_module("." + name, __name__)
    if name in _ATTRIBUTES:
        return getattr(_importlib.import_module("." + _ATTRIBUTES[name], __name__), name)
    raise AttributeError(f"module 'tessera' has no attribute '{name}'")
