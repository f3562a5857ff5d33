"""TVM's ``tvm.runtime.Executable``: what ``tvm.compile`` returns, a module that ``jit()`` makes
runnable. A tessera module is compiled and linked when it is built; ``jit()`` of a C-source
module (kind "c") loads its library afresh, as TVM compiles and loads C source, and gives back
any other module as it is."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Optional

from ..error import TesseraValueError
from .module import Module, load_module

__all__ = ["Executable"]


class Executable:
    """``Executable(lib)``: ``ex["add"](a, b, c)``, ``ex(a, b, c)`` (the entry),
    ``ex.jit()``, ``ex.export_library(path)``."""

    def __init__(self, mod: Module) -> None:
        if not isinstance(mod, Module):
            raise TesseraValueError(f"Executable wraps a built module (tessera.runtime.Module), got "
                                    f"{type(mod).__name__}")
        self.mod: Module = mod
        self._jitted_mod: Optional[Module] = None

    def jit(self, *, fcompile: Any = None, addons: Any = None, force_recompile: bool = False,
            **kwargs: Any) -> Module:
        """The runnable module, made once (again with ``force_recompile=True``)."""
        if self._jitted_mod is not None and not force_recompile:
            return self._jitted_mod
        if self.mod.kind not in ("c", "static_library"):
            self._jitted_mod = self.mod
            return self.mod
        workspace = tempfile.mkdtemp(prefix="tessera-jit-")
        try:
            path = os.path.join(workspace, "exported.so")
            self.export_library(path, fcompile=fcompile, addons=addons, **kwargs)
            self._jitted_mod = load_module(path)  # the loaded library keeps its own mapping
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        return self._jitted_mod

    def __getitem__(self, name: str) -> Any:
        return self.jit().get_function(name, query_imports=True)

    def __call__(self, *args: Any) -> Any:
        return self.jit()(*args)

    def export_library(self, file_name: Any, *, fcompile: Any = None, addons: Any = None,
                       workspace_dir: Any = None, **kwargs: Any) -> str:
        """Write the module's library to ``file_name`` (``Module.export_library``)."""
        return self.mod.export_library(file_name, fcompile=fcompile, addons=addons,
                                       workspace_dir=workspace_dir, **kwargs)

    def __repr__(self) -> str:
        return f"<tessera.runtime.Executable {self.mod!r}>"
