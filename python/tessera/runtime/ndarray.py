"""NDArray: a compact tensor owned by tessera (``ts.nd.array``, ``ts.nd.empty``)."""

import operator

import numpy as np

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from .device import Device, cpu


def _split_lanes(name):
    """("float32", 4) for "float32x4"; (name, 1) for a scalar dtype."""
    name = str(name)
    base, sep, lanes = name.rpartition("x")
    if sep and lanes.isdigit() and base and base[-1].isdigit():
        return base, int(lanes)
    return name, 1


def _np_dtype(name):
    name = str(name)
    if name == "bool":
        return np.dtype("bool")
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

    @property
    def strides(self):
        """None: a tessera array is compact (row-major), as DLPack says with no strides."""
        return None

    @property
    def byte_offset(self):
        """Bytes from the start of the memory this array lives in to its first element (0 but
        for a view made by ``_create_view``)."""
        return self._handle.byte_offset

    def _host_shape(self):
        # A vector dtype ("float32x4") reads as a trailing axis of its lanes, as in TVM.
        base, lanes = _split_lanes(self.dtype)
        return (self.shape + (lanes,) if lanes > 1 else self.shape), base

    def numpy(self):
        """A numpy copy of the contents."""
        shape, base = self._host_shape()
        out = np.empty(shape, _np_dtype(base))
        self._handle.copy_to_ptr(out.ctypes.data, out.nbytes)
        return out

    def _create_view(self, shape, dtype=None, relative_byte_offset=0):
        """A view of this array's memory with another shape (and dtype), starting
        ``relative_byte_offset`` bytes into this array, as TVM's ``Tensor._create_view``.
        It shares the memory (writes through one show in the other) and keeps it alive. A view
        that would reach past the end of this array is a ValueError giving the bytes it would
        cover."""
        if isinstance(shape, int):
            shape = (shape,)
        dims = []
        for i, d in enumerate(shape):
            try:
                dims.append(int(d.value) if hasattr(d, "value") else operator.index(d))
            except TypeError:
                raise TesseraTypeError(f"_create_view: dimension {i} must be an integer, got "
                                       f"{type(d).__name__} {d!r}") from None
        dtype = self.dtype if dtype is None else _core.canonical_dtype(str(dtype))
        try:
            offset = operator.index(relative_byte_offset)
        except TypeError:
            raise TesseraTypeError("_create_view: relative_byte_offset must be an integer, got "
                                   f"{type(relative_byte_offset).__name__}") from None
        return NDArray(self._handle.create_view(dims, dtype, offset))

    def same_as(self, other):
        """Whether ``other`` is this very array object (TVM's ``Object.same_as``)."""
        return other is self

    def _copyto(self, target):
        return self.copyto(target)

    asnumpy = numpy

    def copyfrom(self, source):
        """Copy ``source`` in (a numpy array, an NDArray, a DLPack-capable tensor or anything
        ``np.asarray`` accepts); values are converted to this array's dtype, as in TVM."""
        if isinstance(source, NDArray):
            source = source.numpy()
        elif not isinstance(source, np.ndarray) and hasattr(source, "__dlpack__"):
            source = from_dlpack(source).numpy()
        shape, base = self._host_shape()
        try:
            src = np.asarray(source)
        except (TypeError, ValueError) as err:
            raise TesseraTypeError(f"copyfrom expects an array-like value, got "
                                   f"{type(source).__name__}: {err}") from None
        if src.shape != shape:
            raise TesseraValueError(f"array shape mismatch: copying {src.shape} into {shape}")
        src = np.ascontiguousarray(src, dtype=_np_dtype(base))
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
