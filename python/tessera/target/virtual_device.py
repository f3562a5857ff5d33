"""VirtualDevice: where a value lives, as TVM describes it: a device (type and id), the target
that compiles for it and a memory scope ("" for the device's global memory)."""

from ..error import TesseraValueError

__all__ = ["VirtualDevice"]


class VirtualDevice:
    """``VirtualDevice(tvm.device("cuda"), Target("cuda"), "global")``; every part may be left
    out (a device type of -1 means "not fixed")."""

    def __init__(self, device=None, target=None, memory_scope=""):
        from .target import Target

        if target is not None and not isinstance(target, Target):
            target = Target(target)
        if not isinstance(memory_scope, str):
            raise TesseraValueError(f"VirtualDevice: memory_scope is a string, got {memory_scope!r}")
        if device is None:
            self.device_type_int, self.virtual_device_id = -1, -1
        else:
            self.device_type_int, self.virtual_device_id = int(device.device_type), int(device.device_id)
        self.target = target
        self.memory_scope = memory_scope

    def dlpack_device_type(self):
        """The DLPack device type (1 CPU, 2 CUDA, ...; -1 when not fixed)."""
        return self.device_type_int

    def __eq__(self, other):
        return (isinstance(other, VirtualDevice) and self.device_type_int == other.device_type_int
                and self.virtual_device_id == other.virtual_device_id and self.target == other.target
                and self.memory_scope == other.memory_scope)

    def __hash__(self):
        return hash((self.device_type_int, self.virtual_device_id, self.memory_scope))

    def __repr__(self):
        return (f"VirtualDevice(device_type={self.device_type_int}, virtual_device_id={self.virtual_device_id}, "
                f"target={self.target}, memory_scope={self.memory_scope!r})")
