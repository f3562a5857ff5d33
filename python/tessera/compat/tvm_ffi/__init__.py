"""``tvm_ffi`` as TVM v0.23's tests use it: the container classes of IR values
(``tvm_ffi.container.Map`` / ``Array`` are tessera's Map and Array nodes)."""

import types

from ... import _core

container = types.SimpleNamespace(Map=_core.Map, Array=_core.Array)
Map = _core.Map
Array = _core.Array

__all__ = ["container", "Map", "Array"]
