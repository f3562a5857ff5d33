"""DSL type objects: scalar, vector and mask dtypes (annotations and constructors), pointer types.

Native vectors are 256 bits wide (``int8x32`` ... ``float32x8``, ``bfloat16x16``); masks are
``boolx8/16/32``. Any ``(i|u|fp|bf|int|uint|float|bfloat|bool)(8|16|32)x<N>`` name is a virtual
(flexible- or multiple-width) vector type: ``S.i32x30``, ``S.fp16x48``.
"""

import linecache
import os
import re
import sys

from .. import _core
from ..error import PointerTypeError, TesseraError, TesseraValueError, executing_position

SCOPES = ("global", "global.1", "global.2", "global.3", "private", "lsram", "shared", "constant")
_VIRTUAL_RE = re.compile(r"^(i|u|fp|bf|int|uint|float|bfloat|bool)(8|16|32)?x(\d+)$")
_SCALAR_NAMES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "float32",
                 "bfloat16", "bool")


def canonical(dtype):
    """Canonical long dtype name of a DType, a string ("i32", "fp16x16") or ``void``."""
    if isinstance(dtype, DType):
        return dtype.name
    if not isinstance(dtype, str):
        raise TypeError(f"expected a dtype name, got {dtype!r}")
    if dtype == "void":
        return "void"
    name = _core.canonical_dtype(dtype)
    if str(_core.DataType(name).with_lanes(1)) not in _SCALAR_NAMES:
        raise TypeError(f'unknown DSL data type "{dtype}"; the DSL has no 64-bit or sub-byte types')
    return name


def element_of(dtype):
    """``"int32x8"`` -> ``"int32"``."""
    return str(_core.DataType(canonical(dtype)).with_lanes(1))


def lanes_of(dtype):
    return _core.DataType(canonical(dtype)).lanes


def with_lanes(dtype, lanes):
    return str(_core.DataType(canonical(dtype)).with_lanes(lanes))


def bits_of(dtype):
    return _core.DataType(canonical(dtype)).bits


def native_lanes(dtype):
    """Lanes of the 256-bit native vector of a scalar dtype (``int32`` -> 8)."""
    return 256 // _core.DataType(element_of(dtype)).bits


def hw_native_vdtype(dtype):
    """The native vector type of a scalar type: ``hw_native_vdtype("int16")`` is ``"int16x16"``."""
    return with_lanes(dtype, native_lanes(dtype))


def is_native(dtype):
    """Whether a vector or mask type has a hardware register: 256 bits, or 8/16/32 mask lanes."""
    t = _core.DataType(canonical(dtype))
    if t.lanes == 1:
        return True
    if element_of(dtype) == "bool":
        return t.lanes in (8, 16, 32)
    return t.bits * t.lanes == 256


def is_virtual_vector(dtype):
    """Whether ``dtype`` is a vector type of no hardware register (``"float32x32"``,
    ``"int32x3"``): a multiple or flexible width vector."""
    return dtype != "void" and lanes_of(dtype) > 1 and not is_native(dtype)


def is_float(dtype):
    return element_of(dtype).startswith(("float", "bfloat"))


def is_int(dtype):
    return element_of(dtype).startswith(("int", "uint"))


def is_signed(dtype):
    return element_of(dtype).startswith("int")


def is_bool(dtype):
    return element_of(dtype) == "bool"


def with_sign(dtype, signed):
    """The integer type of the same width and lanes with the given signedness."""
    elem = element_of(dtype)
    base = elem.lstrip("u") if signed else ("u" + elem if elem.startswith("int") else elem)
    return with_lanes(base, lanes_of(dtype))


class DType:
    """A scalar, vector or mask type, used as an annotation (``n: S.i32``) and as a constructor
    (``S.int8(100)``, ``S.int32x8(1)``, ``S.int32x8([1, 2, 3, 4, 5, 6, 7, 8])``)."""

    def __init__(self, name):
        self.name = canonical(name)
        t = _core.DataType(self.name)
        self.lanes = t.lanes
        self.bits = t.bits

    @property
    def is_vector(self):
        return self.lanes > 1

    @property
    def element(self):
        return element_of(self.name)

    def __repr__(self):
        return f"S.{self.name}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                return canonical(other) == self.name
            except TypeError:
                return False
        return isinstance(other, DType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __call__(self, *args):
        from .intrinsics import call_outside_kernel

        return call_outside_kernel(repr(self), self, args, {})


class PtrType:
    """``S.ptr(dtype, scope)``: a pointer parameter annotation. ``dtype`` is a scalar type, a
    native vector type or ``"void"``."""

    def __init__(self, dtype, scope="private"):
        try:
            self.element = canonical(dtype)
        except (TesseraError, TypeError) as err:  # an unknown name, or one the DSL lacks
            raise _located_at_caller(PointerTypeError, getattr(err, "message", str(err))) from None
        if self.element != "void" and is_bool(self.element) and not is_native(self.element):
            raise _located_at_caller(
                PointerTypeError, f'a pointer cannot point to the virtual mask type "{self.element}"')
        if scope not in SCOPES:
            raise _located_at_caller(
                TesseraValueError, f"unknown memory scope '{scope}'; scopes are: {', '.join(SCOPES)}")
        self.scope = scope

    def __repr__(self):
        return f'S.ptr("{self.element}", "{self.scope}")'


def _located_at_caller(cls, message, needle="ptr("):
    """``cls(message)`` located at the user's code that called into tessera.dsl: an annotation
    such as ``S.ptr("int7")`` runs when Python defines the function, before the DSL parser sees
    it, so the error takes the location from the calling frame."""
    frame = sys._getframe(1)
    package = os.path.dirname(os.path.abspath(__file__))
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    if frame is None:
        return cls(message)
    file, line = frame.f_code.co_filename, frame.f_lineno
    lines = linecache.getlines(file)
    if lines:
        _core.register_source(file, "".join(lines))
    where = executing_position(frame, lines)
    if where is not None:
        line, column, end_line, end = where
    else:
        # No column table (Python < 3.11, or code without positions): the first match on the line.
        text = linecache.getline(file, line)
        column = max(text.find(needle), 0)
        if needle == "ptr(" and column >= 2 and text[column - 2:column] == "S.":
            column -= 2
        end_line = line
        end = (text.find(")", column) + 1 or len(text.rstrip())) if needle == "ptr(" else column + len(needle)
    if end_line == line:
        end = max(end, column + 1)
    span = _core.Span(file, line, column, end_line, end)
    return cls(_core.render_diagnostic(span, message), message, file, line, column)


def ptr(dtype, scope="private"):
    """Annotation of a pointer parameter: ``a: S.ptr("int32", "global")``."""
    return PtrType(dtype, scope)


_SCALARS = {
    "int8": ("i8",), "uint8": ("u8",), "int16": ("i16",), "uint16": ("u16",),
    "int32": ("i32",), "uint32": ("u32",), "float16": ("fp16",), "float32": ("fp32",),
    "bfloat16": ("bf16",), "bool": (),
}
_VECTORS = {
    "int8x32": "i8x32", "uint8x32": "u8x32", "int16x16": "i16x16", "uint16x16": "u16x16",
    "int32x8": "i32x8", "uint32x8": "u32x8", "float16x16": "fp16x16", "float32x8": "fp32x8",
    "bfloat16x16": "bf16x16", "boolx8": None, "boolx16": None, "boolx32": None,
}


def all_types():
    """Every named type object: long and short names of scalars, vectors and masks."""
    out = {}
    for long, shorts in _SCALARS.items():
        t = DType(long)
        out[long] = t
        for s in shorts:
            out[s] = t
    for long, short in _VECTORS.items():
        t = DType(long)
        out[long] = t
        if short:
            out[short] = t
    return out


def virtual_type(name):
    """The DType named like ``i32x30`` or ``fp16x48``, or None when the name is not one."""
    m = _VIRTUAL_RE.match(name)
    if not m or int(m.group(3)) < 1:
        return None
    if m.group(2) is None and m.group(1) != "bool":
        return None
    try:
        return DType(name)
    except (TypeError, ValueError, Exception):
        return None
