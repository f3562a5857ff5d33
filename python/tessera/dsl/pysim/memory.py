"""PySim's values and memory: Region byte arrays, Pointers into them, and the numpy types of
DSL type names. Below the interpreter and the op handlers, which both use them."""

import functools

import numpy as np

from ... import _core
from ...error import DiagnosticError


class PySimError(DiagnosticError):
    """A runtime error of a kernel under PySim (an out-of-bounds access, a bad barrier)."""


class PySimIndexError(PySimError, IndexError, AssertionError):
    """An access outside the memory a pointer points into, or a lane index outside its vector
    (S.vreplic's index known at run time), under PySim. It is also an IndexError
    and an AssertionError: Compass's PySim raises the first for an index past the end and the
    second for an access through a pointer moved past the end (``p += 1`` in a loop), a
    distinction that tessera's IR, where a moved pointer is an offset in the index, does not
    keep."""


class PySimZeroDivisionError(PySimError, ZeroDivisionError):
    """A scalar integer division or remainder by zero under PySim (also a ZeroDivisionError, as
    Python's own integer division raises)."""


def np_dtype(name):
    """The numpy type of the elements of a DSL type name ("int32x8" -> int32)."""
    return _np_dtype(name if isinstance(name, str) else str(name))


@functools.lru_cache(maxsize=None)
def _np_dtype(name):
    if name.startswith("bfloat16"):
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if name.startswith("bool"):
        return np.dtype(np.bool_)
    base = name.split("x")[0]
    return np.dtype(base)


def split_type(name):
    """(element, lanes) of a type name such as "int32x8"."""
    return _split_type(name if isinstance(name, str) else str(name))


@functools.lru_cache(maxsize=None)
def _split_type(name):
    t = _core.DataType(name)
    return str(t.with_lanes(1)), t.lanes


class Region:
    """A block of bytes that pointers point into."""

    def __init__(self, data, name, array=None):
        self.data = data  # 1-D uint8
        self.name = name
        self.array = array

    @classmethod
    def of_array(cls, arr, name):
        if arr.flags.c_contiguous:
            return cls(arr.reshape(-1).view(np.uint8), name)
        copy = np.ascontiguousarray(arr)
        return cls(copy.reshape(-1).view(np.uint8), name, array=(arr, copy))

    def write_back(self):
        if self.array is not None:
            self.array[0][...] = self.array[1]


class Pointer:
    __slots__ = ("region", "offset")

    def __init__(self, region, offset):
        self.region = region
        self.offset = offset  # bytes

    def moved(self, nbytes):
        return Pointer(self.region, self.offset + nbytes)

    def __eq__(self, other):
        return isinstance(other, Pointer) and self.region is other.region and self.offset == other.offset
