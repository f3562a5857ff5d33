"""PrimFunc methods that take Python values: ``func.specialize({param: value})``,
``func.with_attr("target", Target("llvm"))``."""

from .. import _core


def specialize(self, param_map):
    """This function with parameters fixed (TVM's ``PrimFunc.specialize``): ``param_map`` maps a
    handle parameter of the buffer_map to a Buffer (the variables of its buffer's shape,
    strides, offset and data take that buffer's values), or another parameter to a value (an
    expression or a number of the parameter's dtype). Specialized scalar parameters leave the
    signature; constant operations fold. The function itself when nothing changes.

    >>> a, _, _, n = matmul.params
    >>> matmul.specialize({n: 128})                            # A: [m, 128]
    >>> matmul.specialize({a: tir.decl_buffer((128, 128))})    # every size 128
    """
    from ..error import TesseraTypeError
    from . import const

    pairs = []
    for param, value in dict(param_map).items():
        if not isinstance(value, (_core.Buffer, _core.PrimExpr)):
            if str(param.dtype) == "handle":
                raise TesseraTypeError(f"specialize: parameter '{param.name}' is a handle; give it a "
                                       f"Buffer or a handle expression, not {value!r}")
            value = const(value, param.dtype)
        pairs.append((param, value))
    return _core.specialize(self, pairs)


_core.PrimFunc.specialize = specialize


_core_with_attr = _core.PrimFunc.with_attr


def with_attr(self, key, value=None):
    """This function with attribute ``key`` set to ``value``, or with each attribute of a dict
    set (TVM's ``PrimFunc.with_attr``). A value is a Python number, string, bool, list, dict, a
    ``Target`` (kept as the dict of its settings, as ``T.target`` keeps it) or an IR object."""
    from ..script.tir.frames import to_attr

    if isinstance(key, dict):
        if value is not None:
            raise TypeError("with_attr({...}) takes the attributes as one dict and no value")
        return _core_with_attr(self, {k: to_attr(v) for k, v in key.items()})
    return _core_with_attr(self, key, to_attr(value))


_core.PrimFunc.with_attr = with_attr
