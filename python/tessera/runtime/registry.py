"""Global functions by name: Python functions that generated code calls with ``T.call_packed``.

>>> @tessera.register_func("my.add_one")
... def add_one(x, y):          # buffers arrive as NDArray views of the caller's memory
...     y.copyfrom(x.numpy() + 1)
>>> B = te.extern((n,), [A], lambda ins, outs: tir.call_packed("my.add_one", ins[0], outs[0]))

Arguments arrive as Python ints, floats and bools, pointers as ints, and buffers as
:class:`~tessera.runtime.NDArray` views (writes go to the caller's memory). A function returns
None, an int or a float; an exception it raises becomes the error of the generated function's
call.
"""

import ctypes

import numpy as np

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from .ndarray import NDArray, _np_dtype

_PY_FUNCS = {}


class _HostView:
    """The handle behind an NDArray that views memory owned by the caller of a packed call."""

    def __init__(self, data, shape, strides, dtype, byte_offset, device_type, device_id):
        self.shape = tuple(shape)
        self.dtype = _core.canonical_dtype(dtype)
        self.device_type, self.device_id = device_type, device_id
        np_dtype = _np_dtype(self.dtype)
        itemsize = np_dtype.itemsize
        count = int(np.prod(self.shape)) if self.shape else 1
        if strides is None:
            elem_strides = []
            acc = 1
            for s in reversed(self.shape):
                elem_strides.insert(0, acc)
                acc *= s
        else:
            elem_strides = list(strides)
        span = 1 + sum((s - 1) * st for s, st in zip(self.shape, elem_strides)) if count else 0
        base = data + byte_offset
        raw = (ctypes.c_byte * max(span * itemsize, 1)).from_address(base) if base else None
        if raw is None or count == 0:
            self.array = np.empty(self.shape, np_dtype)
        else:
            flat = np.frombuffer(raw, dtype=np_dtype, count=max(span, 1))
            self.array = np.lib.stride_tricks.as_strided(
                flat, self.shape, [st * itemsize for st in elem_strides])
        self.nbytes = count * itemsize
        self.data_ptr = base

    def copy_to_ptr(self, ptr, nbytes):
        out = np.frombuffer((ctypes.c_byte * nbytes).from_address(ptr), dtype=self.array.dtype)
        out[:] = self.array.reshape(-1)

    def copy_from_ptr(self, ptr, nbytes):
        src = np.frombuffer((ctypes.c_byte * nbytes).from_address(ptr), dtype=self.array.dtype)
        self.array[...] = src.reshape(self.shape)


def _convert(arg):
    if isinstance(arg, tuple) and len(arg) == 8 and arg[0] == "dltensor":
        _, data, shape, strides, dtype, byte_offset, device_type, device_id = arg
        if device_type != 1:
            raise TesseraValueError("a packed function received a device tensor; only host "
                                    "arrays can be passed to Python functions")
        return NDArray(_HostView(data, shape, strides, dtype, byte_offset, device_type, device_id))
    return arg


def _wrap(f):
    def call(*args):
        return f(*[_convert(a) for a in args])

    return call


def register_func(func_name, f=None, override=False):
    """Register ``f`` under ``func_name`` for ``T.call_packed(func_name, ...)``; as TVM's,
    usable as ``register_func("name")(f)``, ``@register_func("name")`` or ``register_func(f)``
    (named after the function)."""
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str) or not func_name:
        raise TesseraTypeError(f"register_func: the name must be a non-empty string, got {func_name!r}")

    def register(fn):
        if not callable(fn):
            raise TesseraTypeError(f"register_func: {fn!r} is not callable")
        _core.register_global_func(func_name, _wrap(fn), bool(override))
        _PY_FUNCS[func_name] = fn
        return fn

    return register if f is None else register(f)


def get_global_func(name, allow_missing=False):
    """The function registered as ``name`` (None when missing and ``allow_missing``)."""
    if name in _PY_FUNCS and _core.has_global_func(name):
        return _PY_FUNCS[name]
    if allow_missing:
        return None
    raise TesseraValueError(f"no global function named '{name}' is registered")


def remove_global_func(name):
    """Unregister ``name``."""
    _PY_FUNCS.pop(name, None)
    if not _core.remove_global_func(name):
        raise TesseraValueError(f"no global function named '{name}' is registered")


def list_global_func_names():
    """The registered names."""
    return list(_core.list_global_funcs())


__all__ = ["register_func", "get_global_func", "remove_global_func", "list_global_func_names"]
