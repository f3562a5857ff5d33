"""DataType: a dtype name that is also a ``str``, as TVM's ``tvm.DataType`` is.

A DataType works wherever a dtype string does (``np.zeros(4, dtype=t)``, ``te.placeholder(shape,
t)``, ``t == "int32"``, dict keys) and answers questions about the type::

    >>> t = DataType("fp16x16")
    >>> t, t.bits, t.lanes, t.is_floating16, t.element_of
    (dtype('float16x16'), 16, 16, True, dtype('float16'))

The string value is the canonical long name (``"fp16x16"`` becomes ``"float16x16"``). Comparing
with a string compares canonical names, so ``DataType("i32") == "int32"`` and ``== "i32"`` hold.
Every ``dtype`` attribute of IR objects (expressions, buffers, tensors, arrays) is a DataType.
"""

from enum import IntEnum

from .. import _core

__all__ = ["DataType", "DataTypeCode"]


class DataTypeCode(IntEnum):
    """Type codes as DLPack (and TVM) number them."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    Float8E3M4 = 7
    Float8E4M3 = 8
    Float8E4M3B11FNUZ = 9
    Float8E4M3FN = 10
    Float8E4M3FNUZ = 11
    Float8E5M2 = 12
    Float8E5M2FNUZ = 13
    Float8E8M0FNU = 14
    Float6E2M3FN = 15
    Float6E3M2FN = 16
    Float4E2M1FN = 17


# The narrow float formats by code (the C++ codes are DLPack's for these).
_NARROW = {DataTypeCode(c): n for c, n in zip(range(7, 18), (
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
    "float4_e2m1fn"))}


# tessera's C++ codes (include/tessera/ir/dtype.h) -> DLPack codes. bool is uint1 in DLPack;
# void is a handle of 0 bits.
_DL_CODE = {0: DataTypeCode.INT, 1: DataTypeCode.UINT, 2: DataTypeCode.FLOAT, 3: DataTypeCode.BFLOAT,
            4: DataTypeCode.UINT, 5: DataTypeCode.HANDLE, 6: DataTypeCode.HANDLE, **{int(c): c for c in _NARROW}}
_CODE_PREFIX = {DataTypeCode.INT: "int", DataTypeCode.UINT: "uint", DataTypeCode.FLOAT: "float",
                DataTypeCode.BFLOAT: "bfloat"}
# Names TVM accepts without a width.
_DEFAULT_BITS = {"int": "int32", "uint": "uint32", "float": "float32", "bfloat": "bfloat16"}


def _name_of(value):
    """The dtype name of a string, a numpy dtype or scalar type, or a Python scalar type."""
    if isinstance(value, str):
        return value
    if value is bool:
        return "bool"
    if value is int:
        return "int64"
    if value is float:
        return "float64"
    name = getattr(value, "name", None)  # numpy.dtype
    if isinstance(name, str) and hasattr(value, "itemsize"):
        return name
    try:
        import numpy as np

        if isinstance(value, type) and issubclass(value, np.generic):
            return np.dtype(value).name
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    raise TypeError(f"expected a dtype name, got {value!r}")


class DataType(str):
    """A scalar or vector element type; a ``str`` whose value is the canonical dtype name."""

    __slots__ = ("_code", "_bits", "_lanes", "_void", "_scalable")
    _cache = {}

    def __new__(cls, dtype="float32"):
        if type(dtype) is cls:
            return dtype
        key = dtype if isinstance(dtype, str) else _name_of(dtype)
        hit = cls._cache.get(key) if cls is DataType else None
        if hit is not None:
            return hit
        name = _DEFAULT_BITS.get(key, key)
        core = _core.DataType(name)  # raises TypeError on an unknown name
        self = str.__new__(cls, str(core))
        code = int(core.type_code)
        self._void = code == 6
        self._code = _DL_CODE[code]
        self._bits = 0 if self._void else core.bits
        # A scalable vector ("float32xvscalex4": vscale * 4 lanes) keeps its vscale factor.
        self._scalable = core.is_scalable_vector
        self._lanes = core.lanes_or_vscale_factor
        if cls is DataType and len(cls._cache) < 4096:
            cls._cache[key] = self
        return self

    def __reduce__(self):
        return (type(self), (str(self),))

    def __repr__(self):
        return f"dtype('{str.__str__(self)}')"

    def __str__(self):
        return str.__str__(self)

    def __eq__(self, other):
        if isinstance(other, str) and not isinstance(other, DataType):
            try:
                other = DataType(other)
            except (TypeError, ValueError):
                return False
        return str.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__

    # ---- components ----
    @property
    def type_code(self):
        """The DLPack type code (:class:`DataTypeCode`); bool is UINT with 1 bit."""
        return self._code

    @property
    def bits(self):
        return self._bits

    @property
    def lanes(self):
        """The lane count; a scalable vector's (vscale * k) is not a number: see vscale_factor."""
        if self._scalable:
            raise TypeError(f"the lane count of the scalable vector {self} (vscale * "
                            f"{self._lanes} lanes) is not known at compile time; use vscale_factor")
        return self._lanes

    @property
    def vscale_factor(self):
        """k of a scalable vector's vscale * k lanes."""
        if not self._scalable:
            raise TypeError(f"{self} is not a scalable vector and has no vscale factor")
        return self._lanes

    def get_lanes_or_vscale_factor(self):
        """The vscale factor of a scalable vector, the lane count of any other type."""
        return self._lanes

    @property
    def bytes(self):
        """Bytes of one element (rounded up)."""
        return (self._bits + 7) // 8

    @property
    def total_bits(self):
        return self._bits * self.lanes

    @property
    def total_bytes(self):
        return self.bytes * self.lanes

    @property
    def itemsize(self):
        """Bytes of one value, all lanes packed together, rounded up to whole bytes (as TVM's:
        four float6 lanes are 3 bytes). A scalable vector has no size known at compile time:
        ValueError."""
        if self._scalable:
            raise ValueError(f"the size of the scalable vector {self} (vscale * {self._lanes} "
                             f"lanes) is not known at compile time")
        return (self._bits * self._lanes + 7) // 8

    # ---- derived types ----
    def _make(self, code, bits, lanes):
        if code == DataTypeCode.HANDLE:
            if lanes != 1:
                raise TypeError(f"a handle has no vector form (asked for {lanes} lanes)")
            return DataType("void" if bits == 0 else "handle")
        if code == DataTypeCode.UINT and bits == 1:
            base = "bool"
        elif code in _NARROW:
            if bits != self._bits:
                raise TypeError(f"{_NARROW[code]} has {self._bits} bits, not {bits}")
            base = _NARROW[code]
        elif code in _CODE_PREFIX:
            base = f"{_CODE_PREFIX[code]}{bits}"
        else:
            raise TypeError(f"unknown type code {code!r}")
        if not isinstance(lanes, int) or isinstance(lanes, bool) or lanes < 1:
            raise TypeError(f"lanes must be a positive int, got {lanes!r}")
        return DataType(base if lanes == 1 else f"{base}x{lanes}")

    def with_scalable_vscale_factor(self, vscale_factor):
        """The same element type as a scalable vector of vscale * ``vscale_factor`` lanes."""
        if not isinstance(vscale_factor, int) or isinstance(vscale_factor, bool) or vscale_factor < 2:
            raise TypeError(f"a vscale factor must be an int > 1, got {vscale_factor!r}")
        return DataType(f"{self.element_of}xvscalex{vscale_factor}")

    def with_lanes(self, lanes):
        """The same element type with ``lanes`` lanes: ``DataType("int8").with_lanes(32)`` is int8x32."""
        return self._make(self._code, self._bits, lanes)

    def with_bits(self, bits):
        """The same kind of type with ``bits``-bit elements: int32x8 -> int16x8 for 16."""
        if self._scalable:
            return self._make(self._code, bits, 1).with_scalable_vscale_factor(self._lanes)
        return self._make(self._code, bits, self._lanes)

    def with_type_code(self, type_code):
        if self._scalable:
            elem = self._make(DataTypeCode(type_code), self._bits, 1)
            return elem.with_scalable_vscale_factor(self._lanes)
        return self._make(DataTypeCode(type_code), self._bits, self._lanes)

    def with_int(self):
        """The signed integer type of the same width and lanes (float32x8 -> int32x8)."""
        return self.with_type_code(DataTypeCode.INT)

    def with_uint(self):
        """The unsigned integer type of the same width and lanes (int16x16 -> uint16x16)."""
        return self.with_type_code(DataTypeCode.UINT)

    @property
    def element_of(self):
        """The scalar element type (float16x16 -> float16)."""
        return self if self._lanes == 1 and not self._scalable else self.with_lanes(1)

    # ---- predicates ----
    @property
    def is_void(self):
        return self._void

    @property
    def is_handle(self):
        return self._code == DataTypeCode.HANDLE and not self._void

    @property
    def is_int(self):
        return self._code == DataTypeCode.INT

    @property
    def is_uint(self):
        """Unsigned integers, bool included (bool is uint1, as in TVM)."""
        return self._code == DataTypeCode.UINT

    @property
    def is_bool(self):
        return self._code == DataTypeCode.UINT and self._bits == 1

    @property
    def is_integer(self):
        return self._code in (DataTypeCode.INT, DataTypeCode.UINT)

    @property
    def is_float(self):
        """IEEE floats (float16/32/64); bfloat16 is not one (see :attr:`is_floating`)."""
        return self._code == DataTypeCode.FLOAT

    @property
    def is_bfloat(self):
        return self._code == DataTypeCode.BFLOAT

    @property
    def is_bfloat16(self):
        return self._code == DataTypeCode.BFLOAT and self._bits == 16

    @property
    def is_floating(self):
        """Any floating-point type, bfloat16 and the float8/6/4 formats included."""
        return self._code in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT) or self._code in _NARROW

    @property
    def is_float8(self):
        """One of the float8 formats (float8_e4m3fn, float8_e5m2, ...)."""
        return self._code in _NARROW and self._bits == 8

    @property
    def is_float6(self):
        return self._code in _NARROW and self._bits == 6

    @property
    def is_float4(self):
        return self._code in _NARROW and self._bits == 4

    @property
    def is_floating16(self):
        """float16 or bfloat16."""
        return self.is_floating and self._bits == 16

    @property
    def is_scalar(self):
        return self._lanes == 1 and not self._scalable

    @property
    def is_vector(self):
        return self._lanes > 1

    @property
    def is_scalable(self):
        """Whether the lanes scale with the hardware (vscale * k, TVM's SVE vectors)."""
        return self._scalable

    @property
    def is_scalable_vector(self):
        return self._scalable

    @property
    def is_scalable_or_fixed_length_vector(self):
        return self._lanes > 1

    @property
    def is_fixed_length_vector(self):
        return self._lanes > 1 and not self._scalable

    @property
    def is_float_vector(self):
        return self.is_float and self.is_vector

    @property
    def is_floating16_vector(self):
        return self.is_floating16 and self.is_vector

    @property
    def is_bool_vector(self):
        return self.is_bool and self.is_vector

    @property
    def is_integer_vector(self):
        return self.is_integer and self.is_vector

    @property
    def is_integer_scalar(self):
        return self.is_integer and self.is_scalar

    @property
    def is_float_scalar(self):
        return self.is_float and self.is_scalar

    @property
    def is_bfloat16_scalar(self):
        return self.is_bfloat16 and self.is_scalar

    @property
    def is_floating_scalar(self):
        return self.is_floating and self.is_scalar


def _width_predicate(code, bits):
    def get(self):
        return self._code == code and self._bits == bits

    return property(get, doc=f"Whether the element type is {_CODE_PREFIX[code]}{bits}.")


for _bits in (8, 16, 32, 64):
    setattr(DataType, f"is_int{_bits}", _width_predicate(DataTypeCode.INT, _bits))
    setattr(DataType, f"is_uint{_bits}", _width_predicate(DataTypeCode.UINT, _bits))
for _bits in (16, 32, 64):
    setattr(DataType, f"is_float{_bits}", _width_predicate(DataTypeCode.FLOAT, _bits))
del _bits

_core._set_dtype_class(DataType)
