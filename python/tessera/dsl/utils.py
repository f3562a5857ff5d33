"""Data type helpers of the vector DSL, as Compass DSL's ``dsl.utils`` offers them.

>>> get_binary_op_result_type("int8", "uint16")      # the type an operator gives
'uint16'
>>> double_elem_width("int8x32")                   # widening keeps 256 bits: int16x16
>>> half_elem_width("int32x8")                     # int16x16

Results are :class:`tessera.ir.DataType` values when that class is a ``str`` (with ``lanes``,
``bits``, ``element_of`` ...), otherwise plain strings; both compare equal to the type's name.
"""

import numpy as np

from .. import ir
from . import types as T
from . import typing as TY

__all__ = [
    "double_elem_width", "get_binary_op_result_type", "half_elem_width", "hw_native_vdtype",
    "is_hw_native_dtype", "is_hw_native_scalar_dtype", "is_hw_native_vdtype",
    "resolve_dtype_alias", "int_within_range", "get_range",
]

HW_NATIVE_SCALAR_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16",
                           "float32", "bfloat16", "bool")


def as_dtype(name):
    """``name`` as the DataType of this build (a ``str`` subclass) or as its canonical string."""
    cls = ir.DataType
    name = T.canonical(str(name))
    if isinstance(cls, type) and issubclass(cls, str):
        return cls(name)
    return name


def resolve_dtype_alias(dtype):
    """The long name of a dtype or one of its DSL aliases (``"i8x32"`` -> ``int8x32``)."""
    if isinstance(dtype, T.DType):
        return as_dtype(dtype.name)
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype).name
    return as_dtype(str(dtype))


def is_hw_native_scalar_dtype(dtype):
    """Whether ``dtype`` is one of the scalar types of the hardware (no 64-bit types)."""
    try:
        return str(resolve_dtype_alias(dtype)) in HW_NATIVE_SCALAR_DTYPES
    except (TypeError, ValueError):
        return False


def is_hw_native_vdtype(dtype):
    """Whether ``dtype`` is a vector type with a hardware register (256 bits; masks 8/16/32)."""
    try:
        name = str(resolve_dtype_alias(dtype))
    except (TypeError, ValueError):
        return False
    return T.lanes_of(name) > 1 and T.is_native(name)


def is_hw_native_dtype(dtype):
    return is_hw_native_scalar_dtype(dtype) or is_hw_native_vdtype(dtype)


def hw_native_vdtype(dtype):
    """The native vector type of a scalar type: ``hw_native_vdtype("int16")`` is ``int16x16``."""
    name = str(resolve_dtype_alias(dtype))
    if T.is_bool(name):
        raise ValueError("hw_native_vdtype: there is no native vector of bool; masks are "
                         "boolx8, boolx16 and boolx32")
    return as_dtype(T.hw_native_vdtype(T.element_of(name)))


def double_elem_width(vdtype, allow_64bit=False):
    """The type with elements twice as wide and at most 256 bits (``uint8x8`` -> ``uint16x8``,
    ``int8x32`` -> ``int16x16``); 32-bit elements stay as they are unless ``allow_64bit``."""
    name = str(resolve_dtype_alias(vdtype))
    bits, lanes = T.bits_of(name), T.lanes_of(name)
    if bits == 32 and not allow_64bit:
        return as_dtype(name)
    if bits == 32:
        raise ValueError(f'double_elem_width: the DSL has no 64-bit type (from "{name}")')
    if 2 * bits * lanes > 256:
        lanes //= 2
    return as_dtype(_with_bits(name, 2 * bits, lanes))


def half_elem_width(vdtype, double_lanes=True):
    """The type with elements half as wide, with twice the lanes unless ``double_lanes`` is
    False (``int32x8`` -> ``int16x16``)."""
    name = str(resolve_dtype_alias(vdtype))
    bits, lanes = T.bits_of(name), T.lanes_of(name)
    if bits <= 8:
        raise ValueError(f'half_elem_width: "{name}" has no narrower element type')
    return as_dtype(_with_bits(name, bits // 2, lanes * 2 if double_lanes else lanes))


def _with_bits(name, bits, lanes):
    elem = T.element_of(name)
    kind = elem.rstrip("0123456789")
    if kind in ("float", "bfloat") and bits == 8:
        raise ValueError(f'there is no 8-bit {kind} type (from "{name}")')
    if kind == "bfloat" and bits != 16:
        kind = "float"
    return T.with_lanes(f"{kind}{bits}", lanes)


def get_range(dtype):
    """The smallest and the largest value of ``dtype``'s element type, as Python numbers:
    ``get_range("int8x32")`` is ``(-128, 127)``; floats give their largest finite magnitude
    (``get_range("float16")`` is ``(-65504.0, 65504.0)``); ``bool`` is ``(0, 1)``."""
    name = T.element_of(str(resolve_dtype_alias(dtype)))
    if T.is_bool(name):
        return (0, 1)
    kind = name.rstrip("0123456789")
    bits = int(name[len(kind):] or 0)
    if kind == "int":
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if kind == "uint":
        return (0, (1 << bits) - 1)
    if kind == "bfloat" and bits == 16:
        # The largest finite bfloat16, rounded to 6 digits as Compass writes it.
        return (-3.38953e38, 3.38953e38)
    if kind == "float" and bits in (16, 32, 64):
        top = float(np.finfo(f"float{bits}").max)
        return (-top, top)
    raise ValueError(f'get_range: "{name}" is not a numeric data type')


def int_within_range(value, dtype):
    """Whether the integer ``value`` is a value of the integer type ``dtype``."""
    return TY.fits(int(value), str(resolve_dtype_alias(dtype)))


def get_binary_op_result_type(ltype_or_lhs, rtype_or_rhs):
    """The scalar type a binary operator gives for two operands, each a dtype or a Python literal.

    An integer literal takes the type of an integer operand when it fits (else it is int32), a
    float literal is float32; two literals give int32. Otherwise: equal types stay; integers of
    one signedness and floats of one kind promote to the wider; an integer meets a float (or
    bfloat) as that float; a signed and an unsigned integer give the wider, and for equal widths
    the unsigned one.
    """
    def classify(x):
        if isinstance(x, (bool, np.bool_, float, np.floating, int, np.integer)):
            return x
        return str(resolve_dtype_alias(x))

    return as_dtype(TY.result_type(classify(ltype_or_lhs), classify(rtype_or_rhs)))
