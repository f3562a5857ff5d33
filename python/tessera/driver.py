"""Building: ``ts.build`` compiles a module for a target; ``ts.lower`` stops after a stage."""

import os

from . import _core
from .runtime.module import Module

_INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
_HOST_TARGETS = ("c", "llvm")
_TARGETS = _HOST_TARGETS + ("cuda",)


def _cache_dir():
    root = os.environ.get("TESSERA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tessera")
    return os.path.join(root, "host")


def _target_name(target):
    if target is None:
        return "c"
    if hasattr(target, "_tessera_target_string"):  # a tessera.target.Target
        target = target._tessera_target_string()
    text = str(getattr(target, "kind", target)).strip()
    return text.split()[0] if text else "c"


def _as_module(mod):
    """An IRModule whose public functions carry "global_symbol"."""
    if isinstance(mod, _core.PrimFunc):
        func = mod
        if "global_symbol" not in func.attrs:
            func = func.with_attr("global_symbol", _core.StringImm("main"))
        return _core.IRModule.from_func(func, func.attrs["global_symbol"].value)
    if not isinstance(mod, _core.IRModule):
        raise TypeError(f"expected an IRModule or a PrimFunc, got {type(mod).__name__}")
    # A module built by hand without symbols: every function is public under its name.
    if not any("global_symbol" in f.attrs for _, f in mod.functions):
        mod = _core.IRModule([(gv, f.with_attr("global_symbol", _core.StringImm(gv.name_hint)))
                              for gv, f in mod.functions], mod.attrs)
    return mod


def _target_string(target):
    """The whole target string ("cuda -arch=sm_80"): the kind and its options."""
    if target is None:
        return "c"
    if hasattr(target, "_tessera_target_string"):  # a tessera.target.Target
        target = target._tessera_target_string()
    return " ".join(str(getattr(target, "kind", target)).split()) or "c"


def _lowerer(mod, target):
    mod = _as_module(mod)
    names = [gv.name_hint for gv, _ in mod.functions]
    entry = "main" if "main" in names else (names[0] if names else "module")
    return _core.StageLowerer(mod, _target_string(target), "", entry, _INCLUDE_DIR, _cache_dir())


def lower(mod, target="c", stage="cleanup"):
    """The IRModule after lowering ``mod`` for ``target`` through ``stage``.

    >>> print(ts.lower(Module, target="c", stage="flatten").script())
    """
    lw = _lowerer(mod, target)
    lw.run_to(stage)
    return lw.mod


def build(mod, target="c", pipeline="default", name=None):
    """Compile ``mod`` (an IRModule or a PrimFunc) for ``target`` and load it.

    ``"c"`` and ``"llvm"`` build C for the host CPU. The result is called with arrays
    (``ts.nd.array`` or DLPack-capable arrays such as numpy) and Python numbers:

    >>> lib = ts.build(Module, target="c")
    >>> lib(a, b, c)

    ``"cuda"`` (or ``"cuda -arch=sm_80"``) compiles the loops bound to blockIdx/threadIdx into
    CUDA kernels with NVRTC (no GPU needed to build) and a host launcher; calling it needs a GPU
    and arrays on it (``ts.nd.array(x, device=ts.cuda(0))``, torch or cupy tensors):

    >>> lib = ts.build(Module, target="cuda")
    >>> print(lib.imported_modules[0].get_source())
    """
    if name is not None and isinstance(mod, _core.PrimFunc):
        mod = mod.with_attr("global_symbol", _core.StringImm(name))
    if target is None:  # as TVM: the target of an enclosing `with Target(...):`
        from .target import Target

        target = Target.current() or "c"
    tname = _target_name(target)
    if tname not in _TARGETS:
        raise ValueError(f"ts.build does not support target '{tname}'; use 'c', 'llvm' or 'cuda'")
    if pipeline not in ("default", None):
        raise ValueError(f"unknown pipeline '{pipeline}'; tessera has the 'default' pipeline")
    lw = _lowerer(mod, target if tname == "cuda" else tname)
    lw.run_to("end")
    return Module(lw.result)
