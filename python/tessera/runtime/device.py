"""Devices: ``ts.cpu(0)``, ``ts.cuda(0)``, ``ts.device("cpu", 0)``."""

# DLPack device types by the names TVM gives them (target kinds included).
_TYPES = {"cpu": 1, "llvm": 1, "c": 1, "test": 1, "composite": 1, "cuda": 2, "nvptx": 2, "gpu": 2,
          "cl": 4, "opencl": 4, "vulkan": 7, "metal": 8, "vpi": 9, "rocm": 10, "ext_dev": 12,
          "webgpu": 15, "hexagon": 16}
_NAMES = {1: "cpu", 2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
          12: "ext_dev", 15: "webgpu", 16: "hexagon"}


class Device:
    """A device: DLPack device type (1 CPU, 2 CUDA, 4 OpenCL, 7 Vulkan, 8 Metal, 10 ROCm, ...)
    and index. tessera runs code on CPU and CUDA devices; the others exist as names (for
    targets and VirtualDevice) and report ``exist`` False."""

    _DEVICE_NAME_TO_TYPE = dict(_TYPES)

    def __init__(self, device_type, device_id=0):
        self.device_type = int(device_type)
        self.device_id = int(device_id)

    def dlpack_device_type(self):
        """The DLPack device type code (1 CPU, 2 CUDA), as TVM's ``Device.dlpack_device_type()``."""
        return self.device_type

    @property
    def type_name(self):
        return _NAMES.get(self.device_type, str(self.device_type))

    def sync(self):
        """Wait for the device's work to finish (host work is synchronous)."""
        if self.device_type == 2:
            from .. import _core

            _core.cuda_sync(self.device_id)

    @property
    def exist(self):
        """Whether the device is present (a CUDA device needs a GPU and its driver)."""
        if self.device_type == 1:
            return True
        if self.device_type != 2:
            return False
        from .. import _core

        ok, _ = _core.cuda_driver_status()
        return ok

    def __eq__(self, other):
        return (isinstance(other, Device) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self.type_name}({self.device_id})"


def device(name, index=0):
    """A device by name: ``device("cpu", 0)``, ``device("cuda", 1)``."""
    if isinstance(name, Device):
        return name
    key = str(name).split()[0].lower()
    if key not in _TYPES:
        raise ValueError(f"unknown device '{name}'; known devices: {', '.join(sorted(_TYPES))}")
    return Device(_TYPES[key], index)


def cpu(index=0):
    """The host CPU."""
    return Device(1, index)


def cuda(index=0):
    """CUDA GPU number ``index``."""
    return Device(2, index)


def rocm(index=0):
    """ROCm GPU number ``index`` (a name only: tessera does not run code on it)."""
    return Device(10, index)


def opencl(index=0):
    """OpenCL device number ``index`` (a name only)."""
    return Device(4, index)


def vulkan(index=0):
    """Vulkan device number ``index`` (a name only)."""
    return Device(7, index)


def metal(index=0):
    """Metal device number ``index`` (a name only)."""
    return Device(8, index)
