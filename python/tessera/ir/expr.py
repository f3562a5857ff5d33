"""IR expression classes under TVM's module name (``tvm.ir.expr.Range``); the same classes as
``tessera.ir.Range`` etc."""

from .. import _core

PrimExpr = _core.PrimExpr
Range = _core.Range
GlobalVar = _core.GlobalVar

__all__ = ["GlobalVar", "PrimExpr", "Range"]
