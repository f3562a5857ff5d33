"""``tvm.contrib`` under ``tessera.compat``: only ``tvm.contrib.utils`` (temporary directories,
which TVM's tests use to export and load libraries). Every other name of ``tvm.contrib``
(TVM's helpers for external compilers and libraries: ``cc``, ``nvcc``, ``clang``, ...) can be
imported and named, and fails with an error saying tessera lacks it when used."""

from .._unsupported import Missing

_FEATURE = "tvm.contrib (TVM's helpers for external compilers and libraries)"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "utils":
        import importlib

        return importlib.import_module(".utils", __name__)
    return Missing(f"tvm.contrib.{name}", _FEATURE)
