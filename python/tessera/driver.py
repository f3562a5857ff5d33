"""Building: ``ts.build`` compiles a module for a target; ``ts.lower`` stops after a stage."""

from __future__ import annotations

import os
from typing import Any, List, Optional, Union

from . import _core
from .runtime.module import Module

_INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
_HOST_TARGETS = ("c", "llvm")
_TARGETS = _HOST_TARGETS + ("cuda",)


def _cache_dir() -> str:
    root = os.environ.get("TESSERA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tessera")
    return os.path.join(root, "host")


def _core_target(target: Any) -> Any:
    """The C++ Target (``_core.Target``) of a target argument, parsed once: None and "" are "c";
    a tessera.target.Target gives the one it holds; a string ("cuda -arch=sm_80") or an object
    with a ``kind`` is parsed."""
    if isinstance(target, _core.Target):
        return target
    if hasattr(target, "_core_target"):  # a tessera.target.Target
        return target._core_target()
    text = "" if target is None else " ".join(str(getattr(target, "kind", target)).split())
    return _core.Target(text or "c")


def _target_name(target: Any) -> str:
    """The kind of a target argument ("c", "llvm", "cuda", ...)."""
    return str(_core_target(target).kind)


def _as_module(mod: Any) -> Any:
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


# Options of TVM's llvm/c targets that describe the target without changing the code.
_DESCRIPTIVE_OPTIONS = ("-keys", "-tag", "-device", "-model", "-system-lib", "-link-params")


def _host_machine() -> str:
    """The C compiler's target triple (``cc -dumpmachine``), e.g. "x86_64-linux-gnu"."""
    import shutil
    import subprocess

    cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), "cc")
    try:
        return subprocess.run([cc, "-dumpmachine"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return ""


def _arch(triple: str) -> str:
    arch = triple.split("-")[0]
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


def host_compile_options(target: Any) -> List[str]:
    """The C compiler flags that the options of a host target string ask for.

    ``-mcpu=NAME`` (``-march`` on x86), ``-mattr=+avx2,-fma`` (``-mavx2 -mno-fma``),
    ``-opt-level=N`` (``-ON``), ``-fast-math``; options that only describe the target
    (``-keys``, ``-tag``, ``-device``, ``-model``) change nothing. A ``-mtriple`` for another
    machine needs a cross compiler, which tessera does not drive: it is refused, and so is every
    other option, with a message saying why."""
    parsed = _core_target(target)
    text = str(parsed)
    flags = []
    host = _host_machine()
    for name, value in parsed.attrs:
        key = "-" + name
        if key == "-mtriple":
            if host and _arch(value) != _arch(host):
                raise ValueError(
                    f"target '{text}' is a cross target ({value}) but this machine's C compiler "
                    f"builds for {host}: a library for {value} needs a cross compiler such as "
                    f"{value}-gcc (Debian: apt-get install gcc-{_arch(value).replace('_', '-')}-linux-gnu) "
                    "and could not be loaded here; tessera builds host targets for this machine only")
        elif key == "-mcpu":
            if not value:
                raise ValueError(f"target '{text}': -mcpu needs a value, e.g. -mcpu=skylake-avx512")
            flags.append(("-march=" if _arch(host).startswith(("x86", "i686")) else "-mcpu=") + value)
        elif key == "-mattr":
            for feature in filter(None, value.split(",")):
                if feature[0] not in "+-":
                    raise ValueError(f"target '{text}': -mattr features start with + or -, got '{feature}'")
                flags.append(("-m" if feature[0] == "+" else "-mno-") + feature[1:])
        elif key == "-opt-level":
            if value not in ("0", "1", "2", "3"):
                raise ValueError(f"target '{text}': -opt-level is 0, 1, 2 or 3, got '{value}'")
            flags.append("-O" + value)
        elif key in ("-fast-math", "-fast-math-nnan", "-fast-math-ninf", "-fast-math-contract"):
            flags.append({"-fast-math": "-ffast-math", "-fast-math-nnan": "-ffinite-math-only",
                          "-fast-math-ninf": "-ffinite-math-only",
                          "-fast-math-contract": "-ffp-contract=fast"}[key])
        elif key in _DESCRIPTIVE_OPTIONS:
            continue
        else:
            raise ValueError(
                f"target '{text}': the option '{key}' is not supported by tessera's host targets; "
                "supported: -mcpu, -mattr, -mtriple (this machine only), -opt-level, -fast-math, "
                + ", ".join(_DESCRIPTIVE_OPTIONS))
    return flags


# The options of a Target object that change the host code (host_compile_options reads them).
_CODE_OPTIONS = ("mtriple", "mcpu", "mattr", "opt-level", "fast-math", "fast-math-nnan",
                 "fast-math-ninf", "fast-math-contract")


def _host_options_target(target: Any, parsed: Any) -> Any:
    """What host_compile_options reads for a build target: a target string as given; a
    tessera.target.Target (already checked against its kind's options) gives its kind with the
    options that change the code (-mtriple, -mcpu, -mattr, -opt-level, -fast-math*), so that
    ``Target("llvm -mcpu=...")`` builds as the string does and a cross ``-mtriple`` is refused."""
    attrs = getattr(target, "attrs", None)
    if not hasattr(target, "_core_target") or not isinstance(attrs, dict):
        return parsed
    parts = [str(parsed.kind)]
    for key in _CODE_OPTIONS:
        value = attrs.get(key)
        if value is None or value is False or value == "" or value == []:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        parts.append(f"-{key}" if value is True else f"-{key}={value}")
    return _core.Target(" ".join(parts))


def _tuning_database_possible() -> bool:
    """Whether a tuning database may apply: tessera.tune was imported (its ``apply`` blocks need
    it) or the PassContext names one. Keeps tessera.tune out of builds that never tune."""
    import sys

    if __package__ + ".tune" in sys.modules:
        return True
    from .transform import PassContext

    return bool(PassContext.current().config.get("tessera.tune.database"))


def register_target_intrinsics(target: Any) -> None:
    """Register the tensor intrinsics the automatic schedule of ``target`` uses (CUDA: the wmma
    fragment intrinsics of tessera.tir.tensor_intrin.cuda, which the tensor-core rule needs)."""
    if _target_name(target) == "cuda":
        from .tir.tensor_intrin import cuda as _wmma  # noqa: F401 - registers on import


def _lowerer(mod: Any, target: Any, auto_schedule: bool = False) -> Any:
    mod = _as_module(mod)
    if auto_schedule:
        register_target_intrinsics(target)
    names = [gv.name_hint for gv, _ in mod.functions]
    entry = "main" if "main" in names else (names[0] if names else "module")
    return _core.StageLowerer(mod, _core_target(target), "", entry, _INCLUDE_DIR, _cache_dir(),
                              auto_schedule)


def lower(mod: Any, target: Any = "c", stage: str = "cleanup", auto_schedule: bool = False) -> Any:
    """The IRModule after lowering ``mod`` for ``target`` through ``stage``.

    ``auto_schedule=True`` runs the automatic schedule first, as ``build`` does, on the
    functions that carry no schedule (see :func:`tessera.autoschedule`).

    >>> print(ts.lower(Module, target="c", stage="flatten").script())
    """
    lw = _lowerer(mod, target, auto_schedule)
    lw.run_to(stage)
    return lw.mod


def build(mod: Any, target: Any = "c", pipeline: Optional[str] = "default",
          name: Optional[str] = None) -> Module:
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

    A function that carries no schedule (every loop serial and unannotated, every block bound
    one to one to the loops above it, as ``te.create_prim_func`` and ``T.grid`` write them) is
    scheduled automatically first by the pass ``tir.AutoSchedule`` (see
    :func:`tessera.autoschedule`); a function scheduled by hand is left alone. Disable it with
    ``PassContext(disabled_pass=["tir.AutoSchedule"])`` or
    ``PassContext(config={"tir.auto_schedule": False})``.
    """
    if name is not None and isinstance(mod, _core.PrimFunc):
        mod = mod.with_attr("global_symbol", _core.StringImm(name))
    if target is None:  # as TVM: the target of an enclosing `with Target(...):`
        from .target import Target

        target = Target.current() or "c"
    parsed = _core_target(target)
    tname = str(parsed.kind)
    if tname in _HOST_TARGETS and _tuning_database_possible():
        # Functions with a record in the tuning database of `with tessera.tune.apply(db):` (or
        # the PassContext's "tessera.tune.database") are built with their best schedule.
        from .tune import apply_best

        mod = apply_best(mod, target)
    if tname not in _TARGETS:
        raise ValueError(f"ts.build does not support target '{tname}'; use 'c', 'llvm' or 'cuda'")
    if pipeline not in ("default", None):
        raise ValueError(f"unknown pipeline '{pipeline}'; tessera has the 'default' pipeline")
    if tname == "cuda":
        lw = _lowerer(mod, parsed, auto_schedule=True)
        lw.run_to("end")
        return Module(lw.result)
    flags = host_compile_options(_host_options_target(target, parsed))
    if not flags:
        lw = _lowerer(mod, parsed, auto_schedule=True)
        lw.run_to("end")
        return Module(lw.result)
    from .transform import PassContext

    outer = PassContext.current()
    config = dict(outer.config)
    config["tessera.cc_options"] = " ".join(filter(None, [config.get("tessera.cc_options", ""), *flags]))
    with PassContext(opt_level=outer.opt_level, required_pass=outer.required_pass,
                     disabled_pass=outer.disabled_pass, config=config):
        lw = _lowerer(mod, parsed, auto_schedule=True)
        lw.run_to("end")
    return Module(lw.result)
