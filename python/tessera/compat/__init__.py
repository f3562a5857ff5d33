"""Run code written for Apache TVM v0.23 on tessera, unchanged.

``tessera.compat.install()`` (before ``import tvm``) puts an import hook in front of Python's
finders that maps ``tvm`` and its submodules onto tessera's modules: ``import tvm.tir`` gives the
module object ``tessera.tir`` itself (not a copy), ``from tvm.script import tir as T`` gives
``tessera.script.tir``. From the shell, ``python -m tessera.compat script.py [args]`` runs a
script with the hook installed, and ``python -m tessera.compat -m pytest tests/...`` runs TVM's
test files.

>>> import tessera.compat
>>> tessera.compat.install()
>>> import tvm
>>> from tvm import tir
>>> tir is tessera.tir
True

Without ``install()`` nothing is mapped, so a real TVM installation is never shadowed. A TVM
module that tessera does not implement (``tvm.relax``, ``tvm.meta_schedule``, ...) raises an
ImportError naming it. ``uninstall()`` removes the hook and the ``tvm`` modules it made.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

# TVM module -> tessera module. A submodule of a mapped module maps to the same submodule of its
# tessera counterpart (``tvm.tir.schedule.testing`` -> ``tessera.tir.schedule.testing``); the
# longest prefix wins. Targets are imported only when the TVM name is, so a tessera module that
# does not exist yet (or fails to import) affects only the imports that need it.
MODULE_MAP = {
    "tvm.script": "tessera.script",
    "tvm.tir": "tessera.tir",
    "tvm.te": "tessera.te",
    "tvm.topi": "tessera.topi",
    "tvm.ir": "tessera.ir",
    "tvm.runtime": "tessera.runtime",
    "tvm.nd": "tessera.nd",
    "tvm.target": "tessera.target",
    "tvm.testing": "tessera.testing",
    "tvm.error": "tessera.error",
    "tvm.arith": "tessera.arith",
    "tvm.transform": "tessera.transform",
    "tvm.ir.transform": "tessera.transform",  # TVM's home of PassContext, Sequential, ...
    "tvm.container": "tessera.ir.container",  # TVM re-exports tvm.ir.container there
    "tvm.driver": "tessera.driver",
    "tvm.base": "tessera.base",
    "tvm.compass.dsl": "tessera.dsl",
    # Only testing (get_imagenet_input: the input image of Compass's image-kernel tests); no Relax.
    "tvm.compass.relax": "tessera.compat.compass_relax",
    # Only testing.te_workload (the TE programs TVM's schedule tests build); no tuner.
    "tvm.meta_schedule": "tessera.compat.meta_schedule",
    # Only utils.tempdir; the other names of tvm.contrib fail when used.
    "tvm.contrib": "tessera.compat.contrib",
}

# TVM modules whose contents tessera keeps in the package above them: used when tessera has no
# module of the TVM name (``from tvm.tir.expr import IntImm`` finds ``tessera.tir.IntImm``).
FALLBACK_MAP = {
    "tvm.tir.expr": "tessera.tir",
    "tvm.tir.stmt": "tessera.tir",
    "tvm.tir.function": "tessera.tir",
    "tvm.tir.buffer": "tessera.tir",
    "tvm.tir.op": "tessera.tir",
    "tvm.tir.block_scope": "tessera.tir.schedule",  # BlockScope, DepKind, StmtSRef
    "tvm.ir.expr": "tessera.ir",
    "tvm.ir.module": "tessera.ir",
    "tvm.ir.type": "tessera.ir",
    "tvm.runtime.ndarray": "tessera.runtime.ndarray",
    "tvm.runtime._tensor": "tessera.runtime.ndarray",
    "tvm.runtime.module": "tessera.runtime.module",
    "tvm.runtime.device": "tessera.runtime.device",
    "tvm.te.operation": "tessera.te",
    "tvm.script.parser.tir": "tessera.script.tir",
    "tvm.script.parser.ir": "tessera.script.ir",
    "tvm.base": "tessera.error",
    "tvm.te.tensor": "tessera.te",
}

# Names of the ``tvm`` package itself that are not submodules: the TVM name -> (tessera module,
# attribute).
TOP_LEVEL = {
    "IRModule": ("tessera.ir", "IRModule"),
    "GlobalVar": ("tessera.ir", "GlobalVar"),
    "DataType": ("tessera.ir", "DataType"),
    "Op": ("tessera.ir", "Op"),
    "Span": ("tessera.ir", "Span"),
    "structural_equal": ("tessera.ir", "structural_equal"),
    "structural_hash": ("tessera.ir", "structural_hash"),
    "assert_structural_equal": ("tessera.ir", "assert_structural_equal"),
    "build": ("tessera.driver", "build"),
    "compile": ("tessera.tir.build", "compile"),
    "lower": ("tessera.lower", None),
    "cpu": ("tessera.runtime", "cpu"),
    "cuda": ("tessera.runtime", "cuda"),
    "rocm": ("tessera.runtime", "rocm"),
    "opencl": ("tessera.runtime", "opencl"),
    "vulkan": ("tessera.runtime", "vulkan"),
    "metal": ("tessera.runtime", "metal"),
    "device": ("tessera.runtime", "device"),
    "Device": ("tessera.runtime", "Device"),
    "TVMError": ("tessera.error", "TesseraError"),
    "DiagnosticError": ("tessera.error", "DiagnosticError"),
    "get_range": ("tessera.dsl", "get_range"),
    "register_func": ("tessera.runtime", "register_func"),
    "register_global_func": ("tessera.runtime", "register_func"),
    "get_global_func": ("tessera.runtime", "get_global_func"),
}

# Names of the ``tvm.compass`` package that are not submodules (``from tvm.compass import
# CompassInfo``).
COMPASS_TOP_LEVEL = {
    "CompassInfo": ("tessera.dsl", "CompassInfo"),
}

# Synthetic packages: TVM packages with no tessera module of their own; their attributes are
# their mapped submodules (``tvm.compass.dsl``).
_SYNTHETIC = ("tvm", "tvm.compass")

_MARK = "__tessera_compat__"


def _target_name(fullname):
    """The tessera module ``fullname`` maps to, or None."""
    best = None
    for prefix in MODULE_MAP:
        if fullname == prefix or fullname.startswith(prefix + "."):
            if best is None or len(prefix) > len(best):
                best = prefix
    if best is None:
        return None
    return MODULE_MAP[best] + fullname[len(best):]


def _not_provided(fullname, why=""):
    err = ModuleNotFoundError(
        f"No module named '{fullname}': tessera does not provide {fullname}"
        + (f" ({why})" if why else "")
        + "; tessera.compat maps only the parts of TVM tessera implements (see the README, "
        "'Running TVM code: tessera.compat')")
    # No `name`: `from tvm import topi` then reports this message instead of a bare
    # "cannot import name 'topi'" (the import system swallows the error of the module it names).
    return err


class _FacadeModule(types.ModuleType):
    """``tvm`` / ``tvm.compass``: their attributes resolve to tessera's modules and names."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = self.__name__ + "." + name
        top = {"tvm": TOP_LEVEL, "tvm.compass": COMPASS_TOP_LEVEL}.get(self.__name__, {})
        if name in top:
            module_name, attr = top[name]
            module = importlib.import_module(module_name)
            return module if attr is None else getattr(module, attr)
        if _target_name(full) is not None or full in _SYNTHETIC:
            try:
                return importlib.import_module(full)
            except ImportError as err:
                raise AttributeError(f"module '{self.__name__}' has no attribute '{name}' ({err})") from None
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}': tessera does not provide "
                             f"{full}")

    def __dir__(self):
        names = set(super().__dir__())
        prefix = self.__name__ + "."
        names.update(k[len(prefix):].split(".")[0] for k in list(MODULE_MAP) + list(_SYNTHETIC)
                     if k.startswith(prefix))
        names.update({"tvm": TOP_LEVEL, "tvm.compass": COMPASS_TOP_LEVEL}.get(self.__name__, {}))
        return sorted(names)


class _AliasLoader(importlib.abc.Loader):
    """Loads a TVM name as the tessera module object it maps to (no copy)."""

    def __init__(self, target):
        self.target = target
        self._module = None

    def create_module(self, spec):
        self._module = importlib.import_module(self.target)
        self._saved = {k: self._module.__dict__[k] for k in ("__spec__", "__loader__")
                       if k in self._module.__dict__}
        return self._module

    def exec_module(self, module):
        # The import system stamped the alias spec on the module; give tessera's module its own
        # identity back (the alias is only a second name in sys.modules).
        for key, value in self._saved.items():
            setattr(module, key, value)


# TVM modules that test files import at their top for a few tests only: they import, and any use
# names the missing feature (tessera.compat._unsupported).
UNSUPPORTED = {"tvm.script.relax": "relax", "tvm.script.parser.relax": "relax"}


class _UnsupportedLoader(importlib.abc.Loader):
    def __init__(self, name):
        self.name = name

    def create_module(self, spec):
        from . import _unsupported

        module = getattr(_unsupported, UNSUPPORTED[self.name])
        setattr(module, _MARK, True)
        return module

    def exec_module(self, module):
        pass


class _FacadeLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _FacadeModule(spec.name, f"TVM names mapped onto tessera ({spec.name})")
        module.__path__ = []
        setattr(module, _MARK, True)
        return module

    def exec_module(self, module):
        if module.__name__ == "tvm":
            module.__version__ = "0.23.0"
            module.__tessera__ = importlib.import_module("tessera")


class _Finder(importlib.abc.MetaPathFinder):
    """Resolves ``tvm`` and ``tvm.*`` to tessera's modules; raises for what tessera lacks."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "tvm_ffi" or fullname.startswith("tvm_ffi."):
            target = "tessera.compat." + fullname
            if importlib.util.find_spec(target) is None:
                raise _not_provided(fullname, f"there is no {target}")
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target), is_package=fullname == "tvm_ffi")
        if fullname in UNSUPPORTED:
            return importlib.machinery.ModuleSpec(fullname, _UnsupportedLoader(fullname))
        if fullname != "tvm" and not fullname.startswith("tvm."):
            return None
        if fullname in _SYNTHETIC:
            return importlib.machinery.ModuleSpec(fullname, _FacadeLoader(), is_package=True)
        tessera_name = _target_name(fullname)
        if tessera_name is None:
            raise _not_provided(fullname)
        try:
            found = importlib.util.find_spec(tessera_name)
        except ImportError as err:
            raise _not_provided(fullname, f"{tessera_name}: {err}") from None
        if found is None and fullname in FALLBACK_MAP:
            tessera_name = FALLBACK_MAP[fullname]
            found = importlib.util.find_spec(tessera_name)
        if found is None:
            raise _not_provided(fullname, f"there is no {tessera_name}")
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(tessera_name),
                                              is_package=found.submodule_search_locations is not None)
        spec.origin = found.origin
        return spec


_finder = _Finder()


def installed():
    """Whether the ``tvm`` import hook is installed."""
    return _finder in sys.meta_path


def install():
    """Map ``import tvm`` (and its submodules) onto tessera from now on; idempotent.

    Raises ImportError when another ``tvm`` was already imported in this process (its modules
    would mix with tessera's).
    """
    if installed():
        return
    existing = sys.modules.get("tvm")
    if existing is not None and not getattr(existing, _MARK, False):
        raise ImportError(f"tessera.compat.install(): a real TVM is already imported ({getattr(existing, '__file__', existing)}); "
                          "install the tessera mapping before the first 'import tvm'")
    sys.meta_path.insert(0, _finder)
    # Printed scripts name the package their code imports: `# from tvm.script import tir as T`.
    from .. import _core

    _core.set_script_header_package("tvm")


def uninstall():
    """Remove the import hook and forget the ``tvm`` modules it made; tessera's own modules
    stay imported. A later ``import tvm`` finds whatever TVM is installed (or none)."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    from .. import _core

    _core.set_script_header_package("tessera")
    for name in [n for n in sys.modules if n in ("tvm", "tvm_ffi") or n.startswith(("tvm.", "tvm_ffi."))]:
        module = sys.modules[name]
        if getattr(module, _MARK, False) or getattr(module, "__name__", "").startswith("tessera"):
            del sys.modules[name]


def mapped_modules():
    """The TVM module -> tessera module table (a copy)."""
    return dict(MODULE_MAP)


__all__ = ["MODULE_MAP", "TOP_LEVEL", "install", "installed", "mapped_modules", "uninstall"]
