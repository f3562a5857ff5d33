"""DSL type objects: scalar and vector dtypes (annotations and constructors) and pointer types."""

import re

from .. import _core

_C_SCOPES = ("global", "global.1", "global.2", "global.3", "private", "lsram", "shared", "constant")
_VECTOR_RE = re.compile(r"^(i|u|fp|bf|int|uint|float|bfloat|bool)(8|16|32)?x(\d+)$")


def canonical(dtype):
    """Canonical long dtype name of a DType, a string ("i32", "fp16x16") or ``void``."""
    if isinstance(dtype, DType):
        return dtype.name
    if not isinstance(dtype, str):
        raise TypeError(f"expected a dtype name, got {dtype!r}")
    return _core.canonical_dtype(dtype)


class DType:
    """A scalar or vector type, used as an annotation (``n: S.i32``) and as a constructor
    (``S.int8(100)``, ``S.int32x8(1)``)."""

    def __init__(self, name):
        self.name = _core.canonical_dtype(name)
        t = _core.DataType(self.name)
        self.lanes = t.lanes
        self.bits = t.bits

    @property
    def is_vector(self):
        return self.lanes > 1

    def __repr__(self):
        return f"S.{self.name}"

    def __eq__(self, other):
        return isinstance(other, DType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __call__(self, *args):
        raise TypeError(f"{self!r}(...) can only be used inside a @S.prim_func")


class PtrType:
    """``S.ptr(dtype, scope)``: a pointer parameter annotation."""

    def __init__(self, dtype, scope="private"):
        self.element = "void" if dtype == "void" else canonical(dtype)
        if scope not in _C_SCOPES:
            raise ValueError(f"unknown memory scope '{scope}'; scopes are: {', '.join(_C_SCOPES)}")
        self.scope = scope

    def __repr__(self):
        return f'S.ptr("{self.element}", "{self.scope}")'


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
