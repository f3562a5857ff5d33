"""Run AKG's operator tests on tessera, unchanged, with AKG's own sources.

AKG (MindSpore's kernel generator) ships a Python package ``akg`` (operators written in te,
helpers, and a build/run interface over its C++ library and its TVM fork, reachable as
``akg.tvm``/``akg.topi`` and as top-level ``tvm``/``topi``) and a test harness (``tests/common``).
``install(checkout)`` makes an AKG source checkout importable on tessera:

* ``import akg`` gives a package whose modules come from ``checkout/python/akg`` (AKG's operator
  definitions and helpers, run as they are), except AKG's build and runtime interface, which is
  tessera's: ``akg.build``/``akg.lower``/``akg.build_config`` (:mod:`.build_module`),
  ``akg.utils.kernel_exec`` (``op_build_test``, ``mod_launch``; :mod:`.kernel_exec`);
* ``akg.tvm`` and ``tvm`` are the names of AKG's TVM fork on tessera's te/tir/runtime
  (:mod:`.fork_tvm`), ``akg.topi`` and ``topi`` its operator library on ``tessera.topi``
  (:mod:`.fork_topi`);
* AKG's Ascend (cce) and profiling back ends are present as names that fail when used;
* the checkout's root is put on ``sys.path``, so that ``tests.common`` (AKG's harness) imports.

>>> import tessera.compat.akg as akg_compat
>>> akg_compat.install("/path/to/akg")
>>> from akg.ops.nn.cpu import pooling        # AKG's operator, from the checkout

From the shell: ``python -m tessera.compat.akg /path/to/akg -m pytest tests/st/ops/cpu``
(see ``tests/compat/run_akg_tests.py``). Nothing is written into the checkout.
"""

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

_MARK = "__tessera_akg_compat__"

# AKG modules whose contents are tessera's (AKG's build and run interface).
SHIMS = {
    "akg.build_module": "tessera.compat.akg.build_module",
    "akg.utils.kernel_exec": "tessera.compat.akg.kernel_exec",
}

# AKG modules of hardware tessera does not target, or of AKG's C++ library: importing them works,
# using their names fails saying so.
NOT_AVAILABLE = {
    "akg.backend": "AKG's Ascend back end (runtime, simulator and profiler)",
    "akg.utils.tbe_codegen_utils": "AKG's Ascend TBE code generation",
    "akg.utils.ascend_profilier": "AKG's Ascend profiler",
    "akg.ms": "AKG's MindSpore kernel-building entry (its C++ library)",
    "akg.composite.build_module": "AKG's build of fused (composite) kernels, in its C++ library",
}

_state = {"checkout": None, "modules": None}


def _fork_modules():
    """Module name -> module object of the fork's surfaces (``tvm``, ``topi`` and their ``akg.``
    names: the same objects, as in AKG, where ``akg.tvm`` is the ``tvm`` package)."""
    if _state["modules"] is None:
        from . import fork_topi, fork_tvm

        mods = {}
        for made in (fork_tvm.make_modules("tvm"), fork_topi.make_modules("topi")):
            for name, module in made.items():
                setattr(module, _MARK, True)
                mods[name] = mods["akg." + name] = module
        _state["modules"] = mods
    return _state["modules"]


class _ObjectLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _AliasLoader(importlib.abc.Loader):
    """An AKG name served by a tessera module (its object; tessera keeps its own identity)."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._saved = {k: module.__dict__[k] for k in ("__spec__", "__loader__") if k in module.__dict__}
        return module

    def exec_module(self, module):
        for key, value in self._saved.items():
            setattr(module, key, value)


class _AkgPackage(types.ModuleType):
    """The ``akg`` package: AKG's modules from the checkout, tessera's build interface."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in ("build", "lower", "build_config", "build_to_func"):
            return getattr(importlib.import_module("tessera.compat.akg.build_module"), name)
        if name in ("differentiate", "get_variables", "register_variables"):
            return getattr(importlib.import_module("akg.autodiff"), name)
        try:
            return importlib.import_module(f"akg.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"akg.{name}":
                raise
            raise AttributeError(f"module 'akg' has no attribute '{name}'") from None


def schedule(sch, target="cuda"):
    """``@akg.schedule(sch)``: an operator whose result carries its own (GPU) schedule: calling it
    returns a dict of the schedule, target, outputs and binds (``op_build`` then refuses it:
    AKG's GPU schedule templates are not available on tessera)."""

    def decorator(func):
        def wrapper(*args, **kwargs):
            output = func(*args, **kwargs)
            binds = None
            if isinstance(output, tuple):
                for item in output:
                    if isinstance(item, dict) and "binds" in item:
                        binds = item["binds"]
                output = tuple(t for t in output if not isinstance(t, dict))
            return {"schedule": sch, "target": target, "output": output, "binds": binds, "op_name": func.__name__}

        wrapper.__name__ = func.__name__
        return wrapper

    return decorator


class _PackageLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _AkgPackage("akg", "AKG's package on tessera (tessera.compat.akg)")
        module.__path__ = [os.path.join(_state["checkout"], "python", "akg")]
        setattr(module, _MARK, True)
        return module

    def exec_module(self, module):
        module.schedule = schedule
        module.__file__ = os.path.join(module.__path__[0], "__init__.py")


class _NotAvailableLoader(importlib.abc.Loader):
    def __init__(self, why):
        self.why = why

    def create_module(self, spec):
        from .fork_tvm import NotProvided

        module = NotProvided(spec.name, self.why)
        setattr(module, _MARK, True)
        return module

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".", 1)[0]
        if top not in ("akg", "tvm", "topi") or _state["checkout"] is None:
            return None
        if fullname == "akg":
            return importlib.machinery.ModuleSpec(fullname, _PackageLoader(), is_package=True)
        if fullname in SHIMS:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(SHIMS[fullname]))
        for prefix, why in NOT_AVAILABLE.items():
            if fullname == prefix or fullname.startswith(prefix + "."):
                return importlib.machinery.ModuleSpec(fullname, _NotAvailableLoader(why), is_package=True)
        mods = _fork_modules()
        if fullname in mods:
            return importlib.machinery.ModuleSpec(fullname, _ObjectLoader(mods[fullname]), is_package=True)
        if top in ("tvm", "topi") or fullname.startswith(("akg.tvm.", "akg.topi.")):
            from .fork_tvm import not_provided

            module = not_provided(fullname)
            setattr(module, _MARK, True)
            return importlib.machinery.ModuleSpec(fullname, _ObjectLoader(module), is_package=True)
        return None  # AKG's own module: found in the checkout through akg.__path__


_finder = _Finder()


def installed():
    """The AKG checkout :func:`install` mapped, or None."""
    return _state["checkout"] if _finder in sys.meta_path else None


def install(checkout):
    """Make ``import akg`` (and ``tvm``/``topi``, ``tests.common``) resolve to AKG's checkout at
    ``checkout`` on tessera. Raises ValueError when it is not an AKG source tree, ImportError when
    another ``akg`` or ``tvm`` is already imported."""
    checkout = os.path.abspath(checkout)
    if not os.path.isfile(os.path.join(checkout, "python", "akg", "__init__.py")):
        raise ValueError(f"tessera.compat.akg.install: {checkout} is not an AKG source checkout "
                         "(no python/akg/__init__.py)")
    current = installed()
    if current is not None:
        if current != checkout:
            raise ImportError(f"tessera.compat.akg.install: AKG at {current} is already installed")
        return
    for name in ("akg", "tvm", "topi"):
        existing = sys.modules.get(name)
        if existing is not None and not getattr(existing, _MARK, False):
            raise ImportError(f"tessera.compat.akg.install: a module '{name}' is already imported "
                              f"({getattr(existing, '__file__', existing)}); install before importing it")
    _state["checkout"] = checkout
    sys.meta_path.insert(0, _finder)
    if checkout not in sys.path:
        sys.path.insert(0, checkout)


def uninstall():
    """Remove the hook and forget the modules it made or loaded from the checkout."""
    checkout = _state["checkout"]
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    if checkout is not None and checkout in sys.path:
        sys.path.remove(checkout)
    for name in list(sys.modules):
        top = name.split(".", 1)[0]
        module = sys.modules[name]
        mine = top == "akg" or (top in ("tvm", "topi") and getattr(module, _MARK, False)) or (
            top == "tests" and checkout is not None
            and (getattr(module, "__file__", None) or "").startswith(checkout + os.sep))
        if mine:
            del sys.modules[name]
    _state["checkout"] = None


__all__ = ["install", "installed", "uninstall", "SHIMS", "NOT_AVAILABLE"]
