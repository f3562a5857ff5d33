"""``tvm_ffi.access_path``: paths into IR objects (tessera.ir.access_path)."""

from ...ir.access_path import AccessPath

__all__ = ["AccessPath"]
