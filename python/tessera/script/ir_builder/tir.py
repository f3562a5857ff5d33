"""The T names of the imperative IR builder (``from tessera.script.ir_builder import tir as T``).

The same vocabulary as the script dialect (``tessera.script.tir``), run as Python under
``with IRBuilder():``; what differs is how a function is made: ``with T.prim_func():`` with
``T.arg``, ``T.func_name``, ``T.func_ret`` instead of a decorated ``def``.
"""

from ... import _core
from ...error import TesseraTypeError, TesseraValueError
from .. import tir as _script_tir
from ..tir import _state
from ..tir.frames import Frame
from ..tir.ops import DType, dtype_name

# Everything the script dialect names (types, buffers, blocks, loops, intrinsics, ...).
globals().update({k: v for k, v in vars(_script_tir).items() if not k.startswith("__")})


def _builder(what):
    builder = _state.current()
    if builder is None or not hasattr(builder, "begin_function"):
        raise TesseraValueError(f"{what} needs an active IRBuilder (with IRBuilder() as ib: ...)")
    return builder


class PrimFuncFrame(Frame):
    """``with T.prim_func():``: a PrimFunc whose parameters come from ``T.arg``."""

    def __init__(self, private):
        self.private = private

    def enter(self, builder, node, name):
        builder.begin_function(self.private)

    def exit(self, builder):
        builder.end_function()


def prim_func(is_private=False):
    """``with T.prim_func():``: open a function; the body's statements become its body."""
    return PrimFuncFrame(bool(is_private))


def arg(name, obj):
    """``a = T.arg("a", T.handle())``: a parameter named ``name``. A buffer parameter is a handle
    (``<name>_handle``) bound to the buffer in the function's buffer map."""
    builder = _builder("T.arg")
    if not isinstance(name, str):
        raise TesseraTypeError(f"T.arg takes the parameter name first, got {name!r}")
    cpp = builder.builder
    if cpp.depth != 1:
        raise TesseraValueError("T.arg belongs directly in T.prim_func()")
    if isinstance(obj, DType):
        obj = _core.Var(name, obj.name)
    if isinstance(obj, _core.Buffer):
        _core.set_name_hint(obj, name)
        handle = _core.Var(name + "_handle", "handle")
        cpp.add_param(handle)
        cpp.bind_param_buffer(handle, obj)
        builder.params[id(handle)] = handle
        builder.set_param_matched(handle)
        return obj
    if isinstance(obj, _core.Var):
        _core.set_name_hint(obj, name)
        cpp.add_param(obj)
        builder.params[id(obj)] = obj
        return obj
    raise TesseraTypeError(f"T.arg takes a Var (T.int32(), T.handle()) or a T.Buffer, got {obj!r}")


def func_ret(ret_type):
    """``T.func_ret(T.int64)``: the function's return type (a dtype, its name or a PrimType)."""
    builder = _builder("T.func_ret")
    dtype = getattr(ret_type, "dtype", ret_type)
    builder.builder.set_return_type(dtype_name(dtype))
    return ret_type


__all__ = sorted(k for k in globals() if not k.startswith("_") and k not in ("annotations",))


def __getattr__(name):
    return getattr(_script_tir, name)
