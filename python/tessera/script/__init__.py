"""Script front ends: the parser core shared by the vector DSL and the TVMScript dialects
(``from tessera.script import tir as T, ir as I``), and ``from_source`` for printed scripts."""

import __future__
import importlib
import itertools
import linecache
import sys

from ..error import DiagnosticError

_counter = itertools.count()


def from_source(text, check_well_formed=True):
    """The IRModule or PrimFunc defined by TVMScript text (as printed by ``mod.script()``).

    >>> mod2 = ts.script.from_source(mod.script())
    >>> ts.ir.assert_structural_equal(mod, mod2)

    The text runs with ``T``, ``I`` and ``tessera`` available; the last IRModule it defines is
    returned, else its only (or last) PrimFunc.
    """
    from .. import _core
    from . import ir as ir_dialect
    from . import tir as tir_dialect

    filename = f"<tessera-script-{next(_counter)}>"
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    namespace = {"T": tir_dialect, "I": ir_dialect, "tessera": importlib.import_module("tessera"),
                 "__name__": "__tessera_script__"}
    # Annotations may name earlier parameters (`n: T.int32, A: T.Buffer((n,))`): the parser
    # reads them from the source, so Python must not evaluate them when defining the function.
    # Under tessera.compat the metadata section reads `metadata = tvm.ir.load_json(...)`.
    tvm = sys.modules.get("tvm")
    if tvm is not None and getattr(tvm, "__tessera_compat__", False):
        namespace["tvm"] = tvm
    code = compile(text, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    if not check_well_formed:
        namespace["T"] = _UncheckedT(tir_dialect)
    exec(code, namespace)
    result = None
    for value in namespace.values():
        if isinstance(value, _core.IRModule):
            result = value
    if result is None:
        for value in namespace.values():
            if isinstance(value, _core.PrimFunc):
                result = value
    if result is None:
        raise DiagnosticError("the script defines no @I.ir_module class and no @T.prim_func")
    return result


class _UncheckedT:
    """The T module with ``prim_func`` defaulting to ``check_well_formed=False``."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name == "prim_func":
            def prim_func(func=None, *, private=False, check_well_formed=False):
                return self._module.prim_func(func, private=private, check_well_formed=check_well_formed)

            return prim_func
        return getattr(self._module, name)


def __getattr__(name):
    if name in ("tir", "ir", "parser", "ir_builder", "highlight"):
        return importlib.import_module("." + name, __name__)
    if name == "ir_module":  # tvm.script.ir_module
        return importlib.import_module(".ir", __name__).ir_module
    compat = sys.modules.get("tessera.compat")
    if compat is not None and compat.installed() and "tvm.script." + name in compat.UNSUPPORTED:
        # `from tvm.script import relax as R` under tessera.compat: a module whose every use says
        # that tessera lacks it, so that the rest of a TVM test file still runs.
        return importlib.import_module("tvm.script." + name)
    raise AttributeError(f"module 'tessera.script' has no attribute '{name}'")


__all__ = ["from_source", "DiagnosticError", "tir", "ir"]
