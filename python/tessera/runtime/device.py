"""Devices: ``ts.cpu(0)``, ``ts.cuda(0)``, ``ts.device("cpu", 0)``."""

_TYPES = {"cpu": 1, "llvm": 1, "c": 1, "cuda": 2, "gpu": 2}
_NAMES = {1: "cpu", 2: "cuda"}


class Device:
    """A device: DLPack device type (1 CPU, 2 CUDA) and index."""

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
        if self.device_type != 2:
            return True
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
        raise ValueError(f"unknown device '{name}'; known devices: cpu, cuda")
    return Device(_TYPES[key], index)


def cpu(index=0):
    """The host CPU."""
    return Device(1, index)


def cuda(index=0):
    """CUDA GPU number ``index``."""
    return Device(2, index)
