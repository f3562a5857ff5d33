"""PrimFunc methods that take Python values: ``func.specialize({param: value})``."""

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
