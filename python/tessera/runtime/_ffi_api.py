"""The functions of TVM's ``tvm.runtime._ffi_api`` that its tests call directly."""

from .module import CSourceModule

__all__ = ["CSourceModuleCreate"]


def CSourceModuleCreate(code, fmt="c", func_names=(), const_vars=None):  # noqa: N802 - TVM's name
    """A module holding C source ``code`` (:class:`CSourceModule`); ``const_vars`` (constants
    linked in by TVM's AOT flow) must be empty."""
    if const_vars:
        from ..error import TesseraValueError

        raise TesseraValueError("CSourceModuleCreate: const_vars are not supported (tessera has no "
                                "AOT constant linking)")
    return CSourceModule(code, "c" if fmt in ("", "c") else fmt, func_names or ())
