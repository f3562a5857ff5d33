"""Data layouts named by strings (TVM's ``tir.layout`` / ``tir.bijective_layout``).

>>> nchw16c = tir.layout("NCHW16c")
>>> nchw16c.factor_of("c"), nchw16c.index_of("H")        # (16, 2)
>>> convert = tir.bijective_layout("NCHW", "NCHW16c")
>>> convert.forward_shape((1, 32, 7, 7))                  # [1, 2, 7, 7, 16]
>>> convert.forward_index([0, 18, 6, 6])                  # [0, 1, 6, 6, 2]

The layouts and their conversions are C++ (``tessera/te/data_layout.h``); this module gives them
TVM's Python spelling.
"""

import numbers

from .. import _core
from ..error import TesseraTypeError
from . import expr_ops

Layout = _core.te.Layout
BijectiveLayout = _core.te.BijectiveLayout


def layout(layout_str, dtype="int32"):
    """The Layout named ``layout_str`` ("NCHW", "NCHW16c": upper-case letters are axes, a number
    and a lower-case letter split the axis of that letter), with ``dtype`` index variables; None
    for ``"__undef__"``. A TypeError when ``dtype`` is not an integer type."""
    if isinstance(layout_str, Layout):
        return layout_str
    if not isinstance(dtype, str):
        raise TesseraTypeError(f"layout: dtype must be an integer type name, got {dtype!r}")
    return _core.te.layout(str(layout_str), dtype)


def bijective_layout(src_layout, dst_layout):
    """The conversion between two layouts of the same axes (strings or Layouts), or None when
    either is empty or undefined or an axis of one is missing from the other."""
    src = layout(src_layout) if isinstance(src_layout, str) else src_layout
    dst = layout(dst_layout) if isinstance(dst_layout, str) else dst_layout
    if src is None or dst is None:
        return None
    return _core.te.bijective_layout(src, dst)


def _contains(self, axis):
    return isinstance(axis, str) and len(axis) == 1 and axis.isalpha() and axis in self.name


def _getitem(self, index):
    """The name of axis ``index`` (negative counts from the end)."""
    count = len(self.axes)
    if not -count <= index < count:
        raise IndexError(f"layout {self.name} has {count} axes, index {index} is out of range")
    return self.axes[index].var.name


Layout.__contains__ = _contains
Layout.__getitem__ = _getitem


def _exprs(self_layout, values):
    dtype = str(self_layout.axes[0].var.dtype) if len(self_layout.axes) else "int32"
    return [expr_ops.const(int(v), dtype) if isinstance(v, numbers.Integral) else expr_ops.convert(v)
            for v in values]


def _converter(name, source):
    method = getattr(BijectiveLayout, name)

    def convert(self, values):
        return method(self, _exprs(getattr(self, source), list(values)))

    convert.__name__ = name
    convert.__doc__ = method.__doc__
    return convert


if not hasattr(BijectiveLayout, "_wrapped"):
    for _name, _source in (("forward_index", "src_layout"), ("forward_shape", "src_layout"),
                           ("backward_index", "dst_layout"), ("backward_shape", "dst_layout")):
        setattr(BijectiveLayout, _name, _converter(_name, _source))
    BijectiveLayout._wrapped = True

__all__ = ["BijectiveLayout", "Layout", "bijective_layout", "layout"]
