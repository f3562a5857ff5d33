"""NDArray: a compact tensor owned by tessera (``ts.nd.array``, ``ts.nd.empty``)."""

import numpy as np

from .. import _core
from .device import Device, cpu


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _ts_dtype(np_dtype):
    name = np.dtype(np_dtype).name
    return _core.canonical_dtype(name)


class NDArray:
    """A tensor in device memory; pass it to a built module, read it back with ``numpy()``.

    >>> a = ts.nd.array(np.arange(4, dtype="float32"))
    >>> a.shape, a.dtype, a.device
    ((4,), 'float32', cpu(0))
    """

    def __init__(self, handle):
        self._handle = handle

    @property
    def shape(self):
        return tuple(self._handle.shape)

    @property
    def dtype(self):
        return self._handle.dtype

    @property
    def device(self):
        return Device(self._handle.device_type, self._handle.device_id)

    @property
    def ndim(self):
        return len(self.shape)

    def numpy(self):
        """A numpy copy of the contents."""
        out = np.empty(self.shape, _np_dtype(self.dtype))
        self._handle.copy_to_ptr(out.ctypes.data, out.nbytes)
        return out

    asnumpy = numpy

    def copyfrom(self, source):
        """Copy ``source`` (a numpy array, an NDArray or anything np.asarray accepts) in."""
        if isinstance(source, NDArray):
            source = source.numpy()
        src = np.ascontiguousarray(source, dtype=_np_dtype(self.dtype) if not isinstance(source, np.ndarray) else None)
        if src.shape != self.shape:
            raise ValueError(f"array shape mismatch: copying {src.shape} into {self.shape}")
        if _ts_dtype(src.dtype) != self.dtype:
            raise ValueError(f"array dtype mismatch: copying {src.dtype} into {self.dtype}")
        self._handle.copy_from_ptr(src.ctypes.data, src.nbytes)
        return self

    def copyto(self, target):
        """Copy into another NDArray, or to a device (a new array)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        return array(self.numpy(), device=target)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"<tessera.nd.NDArray shape={self.shape}, dtype={self.dtype}, {self.device}>\n{self.numpy()!r}"


def empty(shape, dtype="float32", device=None):
    """An uninitialised array: ``empty((4, 4), "float32", ts.cpu(0))``."""
    dev = device or cpu(0)
    if isinstance(shape, int):
        shape = (shape,)
    handle = _core.nd_empty([int(s) for s in shape], _core.canonical_dtype(str(dtype)), dev.device_type, dev.device_id)
    return NDArray(handle)


def array(data, device=None, dtype=None):
    """A copy of ``data`` (numpy array or anything np.asarray accepts) on ``device``."""
    if isinstance(data, NDArray):
        data = data.numpy()
    src = np.ascontiguousarray(np.asarray(data, dtype=_np_dtype(dtype) if dtype else None))
    arr = empty(src.shape, _ts_dtype(src.dtype), device)
    arr._handle.copy_from_ptr(src.ctypes.data, src.nbytes)
    return arr
