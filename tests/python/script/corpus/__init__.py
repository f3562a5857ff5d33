"""A corpus of TVMScript programs, one topic per module; each module-level PrimFunc or IRModule
is one program. The round-trip tests print, re-parse and compare every one of them."""

import importlib

MODULES = ["elementwise", "matmul", "reductions", "symbolic", "nested_blocks", "macros", "modules",
           "lowlevel"]


def programs():
    """[(module.name, program)] for every program of the corpus."""
    from tessera import _core

    out = []
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for attr, value in vars(module).items():
            if isinstance(value, (_core.PrimFunc, _core.IRModule)) and not attr.startswith("_"):
                out.append((f"{name}.{attr}", value))
    return out
