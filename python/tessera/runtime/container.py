"""TVM's ``tvm.runtime.container`` names: ``String`` is a ``str`` (as tvm_ffi's is), so it
works wherever a string does."""

__all__ = ["String"]


class String(str):
    """An IR string: a ``str`` subclass (``String("cuda") == "cuda"``)."""
