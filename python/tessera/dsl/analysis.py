"""Analyses of lowered DSL modules, as Compass DSL's ``dsl.analysis`` offers them.

>>> mod = BuildManager().lower(kernel)
>>> has_perf_record_tick(mod)          # does the kernel time a region with S.perf_tick_begin?
"""

from .. import _core

__all__ = ["has_perf_record_tick"]

_TICK_OPS = ("dsl.perf_tick_begin", "dsl.perf_tick_end")


def _functions(mod_or_func):
    if isinstance(mod_or_func, _core.IRModule):
        return list(dict(mod_or_func.functions).values())
    return [mod_or_func]


def has_perf_record_tick(mod_or_func):
    """Whether any function of ``mod_or_func`` (an IRModule or a PrimFunc) marks a profiled
    region with ``S.perf_tick_begin``/``S.perf_tick_end``."""
    found = []

    def visit(node):
        if isinstance(node, _core.Call) and isinstance(node.op, _core.Op) and \
                node.op.name in _TICK_OPS:
            found.append(node)

    for func in _functions(mod_or_func):
        if isinstance(func, _core.PrimFunc):
            _core.post_order_visit(func.body, visit)
    return bool(found)
