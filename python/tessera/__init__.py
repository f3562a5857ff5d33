"""tessera: a tensor-kernel compiler with a C++ core and Python front ends.

Submodules load on first use so that ``import tessera`` stays fast.
"""

import importlib as _importlib
import os as _os

# A build of the extension elsewhere (the sanitizer build of `make test-asan`) takes precedence.
if _os.environ.get("TESSERA_CORE_DIR"):
    __path__.insert(0, _os.path.abspath(_os.environ["TESSERA_CORE_DIR"]))  # noqa: F821
try:
    from . import _core
except ImportError as _e:  # pragma: no cover - exercised by a subprocess test
    import glob as _glob

    if not _glob.glob(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "_core*")):
        raise ImportError(
            "tessera's C++ extension (tessera._core) is not built: run `make build` in the source "
            "tree (or install the package with `pip install .`), then import tessera again") from None
    raise ImportError(f"tessera's C++ extension (tessera._core) failed to load: {_e}") from _e
from . import error
from .ir.dtype import DataType, DataTypeCode  # dtypes returned by _core are DataType instances

# The CUDA emulator (TESSERA_CUDA_EMULATOR=1) compiles kernels against the shipped headers.
_core.cuda_emulator_set_include_dir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include"))

__version__ = _core.__version__


def _not_callable(self, *args, **kwargs):
    kind = type(self).__name__
    raise TypeError(
        f"a {kind} is a program, not a compiled function: build it first with "
        f"lib = tessera.build(f, target=\"c\") and call lib(...) with arrays")


# TVMScript functions and modules are IR; calling one is a common first mistake.
_core.PrimFunc.__call__ = _not_callable
_core.IRModule.__call__ = _not_callable


class _BufferMap(list):
    """A PrimFunc's ``buffer_map``: the (param, buffer) pairs in parameter order, also indexed by
    parameter as TVM's Map is (``func.buffer_map[func.params[0]]``, ``.items()``, ``.get``)."""

    def _find(self, key):
        for var, buf in list.__iter__(self):
            if var.same_as(key):
                return buf
        raise KeyError(key)

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            return list.__getitem__(self, key)
        return self._find(key)

    def __contains__(self, key):
        if isinstance(key, tuple):
            return list.__contains__(self, key)
        try:
            self._find(key)
            return True
        except KeyError:
            return False

    def get(self, key, default=None):
        try:
            return self._find(key)
        except KeyError:
            return default

    def keys(self):
        return [var for var, _ in list.__iter__(self)]

    def values(self):
        return [buf for _, buf in list.__iter__(self)]

    def items(self):
        return [(var, buf) for var, buf in list.__iter__(self)]


# As TVM's: int(IntImm), float(IntImm / FloatImm).
_core.IntImm.__int__ = lambda self: int(self.value)
_core.IntImm.__float__ = lambda self: float(self.value)
_core.FloatImm.__float__ = lambda self: float(self.value)

# As TVM's: seq[i] and iteration over the statements of a SeqStmt.
_core.SeqStmt.__getitem__ = lambda self, i: self.seq[i]
_core.SeqStmt.__iter__ = lambda self: iter(self.seq)

_core_buffer_map = _core.PrimFunc.buffer_map
_core.PrimFunc.buffer_map = property(lambda self: _BufferMap(_core_buffer_map.__get__(self)),
                                     doc=_core_buffer_map.__doc__)

_SUBMODULES = ("ir", "tir", "te", "transform", "script", "dsl", "lower", "runtime", "nd", "driver",
               "target", "testing", "compat", "tune", "cli", "topi", "autoschedule")
# Attributes that live in a submodule: ts.build, ts.lower, ts.cpu, ...
_ATTRIBUTES = {
    "build": "driver",
    "cpu": "runtime",
    "cuda": "runtime",
    "device": "runtime",
    "Device": "runtime",
    "register_func": "runtime",
    "get_global_func": "runtime",
}


def __getattr__(name):
    if name in _SUBMODULES:
        return _importlib.import_module("." + name, __name__)
    if name in _ATTRIBUTES:
        return getattr(_importlib.import_module("." + _ATTRIBUTES[name], __name__), name)
    raise AttributeError(f"module 'tessera' has no attribute '{name}'")
