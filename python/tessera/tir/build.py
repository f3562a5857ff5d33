"""``tir.build``: the entry that compiles TensorIR into a loaded module, as TVM v0.23's
``tvm.tir.build(mod, target=None, pipeline="default")``.

It resolves the target the way TVM does and then builds with :func:`tessera.build`:

- ``target`` given: that target; else the target of an enclosing ``with Target(...):``;
  else the ``"target"`` attribute of the first function of ``mod`` that has one; else
  ``"llvm"`` (tessera builds "llvm" with the host C compiler, as "c").
- ``pipeline`` ``"default"`` or None: tessera's lowering for the target. A pass (a
  ``tessera.transform.Pass`` or any callable taking and returning an IRModule) runs on the
  module first, then tessera's lowering finishes it (a module that the pass already lowered
  passes through the lowering unchanged). Any other name is an error.

``tvm.compile(mod, target, *, relax_pipeline=..., tir_pipeline=...)`` is :func:`compile`: the
TIR path of TVM's compile (tessera has no Relax, so a module with Relax functions cannot occur).
"""

from __future__ import annotations

from typing import Any, Optional

from .. import _core
from ..error import TesseraTypeError, TesseraValueError

__all__ = ["build", "compile"]

# The pipelines ``pipeline=`` names: TVM's "default" is tessera's lowering.
_PIPELINES = ("default",)


def _as_ir_module(mod: Any) -> Any:
    if isinstance(mod, _core.PrimFunc):
        func = mod
        if "global_symbol" not in func.attrs:
            func = func.with_attr("global_symbol", _core.StringImm("main"))
        return _core.IRModule.from_func(func, func.attrs["global_symbol"].value)
    if isinstance(mod, _core.IRModule):
        return mod
    raise TesseraTypeError(f"tir.build: expected a PrimFunc or an IRModule, got {type(mod).__name__}")


def _function_target(mod: Any) -> Any:
    """The "target" attribute of the first function of ``mod`` that carries one, or None."""
    for _, func in mod.functions:
        attrs = getattr(func, "attrs", None)
        if attrs is not None and "target" in attrs:
            return attrs["target"]
    return None


def resolve_target(mod: Any, target: Any = None) -> Any:
    """The target ``tir.build`` compiles ``mod`` for (see the module doc), as a Target."""
    from ..target import Target

    if target is None:
        target = Target.current()
    if target is None:
        target = _function_target(mod)
    if target is None:
        target = "llvm"
    if isinstance(target, _core.StringImm):
        target = target.value
    return target if isinstance(target, Target) else Target(target)


def build(mod: Any, target: Optional[Any] = None, pipeline: Any = "default") -> Any:
    """Compile ``mod`` (a PrimFunc or an IRModule) for ``target`` and load it: TVM's
    ``tvm.tir.build``. See the module doc for how the target and the pipeline are chosen.

    >>> lib = tir.build(func, target="llvm")
    >>> lib["main"](a, b)
    """
    from ..driver import build as _driver_build

    mod = _as_ir_module(mod)
    target = resolve_target(mod, target)
    if isinstance(pipeline, str):
        if pipeline not in _PIPELINES:
            raise TesseraValueError(f"tir.build: unknown pipeline '{pipeline}'; tessera has "
                                    + ", ".join(f"'{p}'" for p in _PIPELINES)
                                    + " (or pass a Pass, or None)")
    elif pipeline is not None:
        if not callable(pipeline):
            raise TesseraTypeError(f"tir.build: pipeline must be a name, a Pass or None, got "
                                   f"{type(pipeline).__name__}")
        out = pipeline(mod)
        if not isinstance(out, _core.IRModule):
            raise TesseraTypeError(f"tir.build: the pipeline {pipeline!r} returned "
                                   f"{type(out).__name__}, not an IRModule")
        mod = out
    return _driver_build(mod, target=target)


def compile(mod: Any, target: Optional[Any] = None, *, relax_pipeline: Any = "default",  # noqa: A001
            tir_pipeline: Any = "default") -> Any:
    """TVM's ``tvm.compile``: a PrimFunc or an IRModule of TIR functions built by
    :func:`build` with ``pipeline=tir_pipeline``, as an :class:`~tessera.runtime.Executable`.
    ``relax_pipeline`` applies to Relax functions, which tessera does not have; it is accepted
    and unused."""
    from ..runtime.executable import Executable

    del relax_pipeline
    return Executable(build(mod, target, pipeline=tir_pipeline))
