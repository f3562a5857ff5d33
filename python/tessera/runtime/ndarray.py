"""NDArray: a compact tensor owned by tessera (``ts.nd.array``, ``ts.nd.empty``)."""

import numpy as np

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from .device import Device, cpu


def _np_dtype(name):
    if name == "bfloat16" or name.startswith(("float8_", "float6_", "float4_")):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
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
        """Copy ``source`` in (a numpy array, an NDArray, a DLPack-capable tensor or anything
        ``np.asarray`` accepts); values are converted to this array's dtype, as in TVM."""
        if isinstance(source, NDArray):
            source = source.numpy()
        elif not isinstance(source, np.ndarray) and hasattr(source, "__dlpack__"):
            source = from_dlpack(source).numpy()
        src = np.asarray(source)
        if src.shape != self.shape:
            raise TesseraValueError(f"array shape mismatch: copying {src.shape} into {self.shape}")
        src = np.ascontiguousarray(src, dtype=_np_dtype(self.dtype))
        self._handle.copy_from_ptr(src.ctypes.data, src.nbytes)
        return self

    def copyto(self, target):
        """Copy into another NDArray, or to a device (a new array)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return array(self.numpy(), device=target)
        raise TesseraTypeError(f"copyto expects an NDArray or a Device, got {type(target).__name__}")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export (``np.from_dlpack(a)``, ``torch.from_dlpack(a)``): a view without a copy
        unless ``copy=True``. Returns a "dltensor" capsule that keeps the array alive."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"cannot export an array of {self.device} to device {tuple(dl_device)} "
                              "through DLPack; copy it with copyto() first")
        source = self
        if copy:
            source = empty(self.shape, self.dtype, self.device)
            source.copyfrom(self)
        return _core.nd_to_dlpack(source._handle)

    def __dlpack_device__(self):
        return (self._handle.device_type, self._handle.device_id)

    def __setitem__(self, key, value):
        """``a[:] = value``: copy ``value`` in (the whole array only)."""
        if not isinstance(key, slice) or key != slice(None):
            raise TesseraValueError("NDArray only supports a[:] = value (the whole array)")
        self.copyfrom(value)

    def to_dlpack(self):
        """A DLPack capsule of this array (as ``__dlpack__()``)."""
        return self.__dlpack__()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"<tessera.nd.NDArray shape={self.shape}, dtype={self.dtype}, {self.device}>\n{self.numpy()!r}"


def from_dlpack(tensor):
    """A copy of a DLPack-capable tensor (numpy, torch, cupy, an NDArray) on the tensor's own
    device. A strided host tensor is made compact first."""
    if isinstance(tensor, NDArray):
        return tensor.copyto(tensor.device)
    if not hasattr(tensor, "__dlpack__"):
        raise TesseraTypeError(f"from_dlpack expects a tensor with __dlpack__ (numpy, torch, ...), "
                               f"got {type(tensor).__name__}")
    try:
        return NDArray(_core.nd_from_dlpack(tensor))
    except (TypeError, ValueError) as err:
        # A strided (or otherwise unusual) host tensor: let numpy read it, then copy it compact.
        device = tensor.__dlpack_device__() if hasattr(tensor, "__dlpack_device__") else (1, 0)
        if device[0] != 1:
            raise (TesseraTypeError if isinstance(err, TypeError) else TesseraValueError)(
                f"from_dlpack: {err} (a device tensor must be compact)") from None
        try:
            host = np.from_dlpack(tensor)
        except (TypeError, ValueError, BufferError, RuntimeError) as np_err:
            raise TesseraTypeError(f"from_dlpack: {err}; numpy: {np_err}") from None
        return array(np.asarray(host, order="C"))


def empty(shape, dtype="float32", device=None):
    """An uninitialised array: ``empty((4, 4), "float32", ts.cpu(0))``."""
    dev = device or cpu(0)
    if isinstance(dev, str):
        from .device import device as _device

        dev = _device(dev)
    if isinstance(shape, int):
        shape = (shape,)
    handle = _core.nd_empty([int(s) for s in shape], _core.canonical_dtype(str(dtype)), dev.device_type, dev.device_id)
    return NDArray(handle)


def array(data, device=None, dtype=None):
    """A copy of ``data`` (numpy array or anything np.asarray accepts) on ``device``."""
    if isinstance(data, NDArray):
        data = data.numpy()
    elif not isinstance(data, np.ndarray) and hasattr(data, "__dlpack__") and hasattr(data, "__dlpack_device__"):
        # torch / cupy tensors: through DLPack (a GPU tensor is copied to ``device`` from there).
        imported = from_dlpack(data)
        if (device is None or device == imported.device) and dtype is None:
            return imported
        data = imported.numpy()
    src = np.asarray(data, dtype=_np_dtype(dtype) if dtype else None, order="C")  # keeps 0-d arrays 0-d
    arr = empty(src.shape, _ts_dtype(src.dtype), device)
    arr._handle.copy_from_ptr(src.ctypes.data, src.nbytes)
    return arr
