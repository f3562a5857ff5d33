"""The parser core: source and spans, diagnostics, scoped variable tables, node dispatch.

The dialects are reachable from here too, as in TVM's layout (``tvm.script.parser.tir``,
``tvm.script.parser.ir``, ``tvm.script.parser.ir_module``).
"""

import importlib
import sys

from .core import Parser, Source, VarTable


def __getattr__(name):
    if name in ("tir", "ir"):
        return importlib.import_module(".." + name, __name__)
    if name == "ir_module":
        return importlib.import_module("..ir", __name__).ir_module
    compat = sys.modules.get("tessera.compat")
    if compat is not None and compat.installed() and "tvm.script.parser." + name in compat.UNSUPPORTED:
        return importlib.import_module("tvm.script.parser." + name)
    raise AttributeError(f"module 'tessera.script.parser' has no attribute '{name}'")


__all__ = ["Parser", "Source", "VarTable"]
