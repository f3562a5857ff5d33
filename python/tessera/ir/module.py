"""``tessera.ir.module``: where TVM code imports IRModule from (``from tvm.ir.module import IRModule``)."""

from .. import _core

IRModule = _core.IRModule

__all__ = ["IRModule"]
