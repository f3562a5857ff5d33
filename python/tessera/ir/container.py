"""TVM's container classes (``tvm.ir.container.Array``, also ``tvm.container``): the IR's
array and map nodes."""

from .. import _core

Array = _core.Array
Map = _core.Map

__all__ = ["Array", "Map"]
