"""Analyses of lowered DSL modules (``tvm.compass.dsl.analysis``)."""

from .. import _core
from ..tir.stmt_functor import post_order_visit

_TICKS = ("dsl.perf_tick_begin", "dsl.perf_tick_end")


def _functions(ir_mod):
    if isinstance(ir_mod, _core.PrimFunc):
        return [ir_mod]
    if isinstance(ir_mod, _core.IRModule):
        return [func for _gv, func in ir_mod.functions]
    raise TypeError(f"has_perf_record_tick expects an IRModule or a PrimFunc, got "
                    f"{type(ir_mod).__name__}")


def has_perf_record_tick(ir_mod):
    """Whether any function of ``ir_mod`` (an IRModule, e.g. ``BuildManager().lower(f)``, or a
    PrimFunc) contains ``S.perf_tick_begin`` or ``S.perf_tick_end``."""
    found = []

    def visit(node):
        if isinstance(node, _core.Call) and getattr(node.op, "name", None) in _TICKS:
            found.append(node)

    for func in _functions(ir_mod):
        post_order_visit(func.body, visit)
        if found:
            return True
    return False


__all__ = ["has_perf_record_tick"]
