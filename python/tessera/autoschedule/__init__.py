"""The automatic schedule: ``tessera.autoschedule(func_or_mod, target)`` returns a
``tir.Schedule`` whose trace is the schedule chosen for the target, computed analytically from
the target's facts (vector width, registers, cores, caches; for CUDA threads and shared memory).

>>> sch = tessera.autoschedule(matmul, target="c")
>>> print("\\n".join(sch.trace.as_python()))      # the chosen schedule, replayable and editable
>>> lib = ts.build(sch.mod, target="c")
>>> tessera.autoschedule(f, target="c", facts={"vector_bits": 256, "cores": 4})

``ts.build`` runs it by itself (pass ``tir.AutoSchedule``) on every function that carries no
schedule; see :func:`carries_no_schedule` for the rule.
"""

import sys
import types

from .. import _core


def _target(target, facts):
    """The C++ Target of ``target`` (parsed once, by tessera.driver) with ``facts`` overriding
    some of its facts."""
    from ..driver import _core_target

    parsed = _core_target(target)
    if parsed.kind not in ("c", "llvm", "cuda"):
        raise ValueError(
            f"the automatic schedule supports the targets 'c', 'llvm' and 'cuda', not '{parsed.kind}'")
    overrides = _overrides(facts)
    if overrides:
        parsed = _core.Target(str(parsed))  # a copy: the caller's target keeps its facts
        for name, value in overrides.items():
            parsed.override_fact(name, value)
    return parsed


def _overrides(facts):
    if facts is None:
        return {}
    if not isinstance(facts, dict):
        raise TypeError(f"facts must be a dict of target facts, got {type(facts).__name__}")
    out = {}
    for key, value in facts.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"target fact '{key}' must be an int, got {value!r}")
        out[str(key)] = value
    return out


def target_facts(target="c", facts=None):
    """The facts the automatic schedule uses for ``target``: the host's are detected once
    (SIMD width from cpuid, cores from the affinity mask, caches from sysfs); ``facts``
    overrides some of them.

    >>> tessera.autoschedule.target_facts("c")["vector_bits"]
    512
    """
    return dict(_target(target, facts).facts)


def carries_no_schedule(func):
    """Whether ``ts.build`` would schedule ``func`` automatically, and if not, why.

    A function carries no schedule when every loop is serial, starts at 0 and has no
    annotation or thread binding, every block sits in the root block under a loop nest of its
    own and binds its iterators to those loops one to one, in order (as ``te.create_prim_func``
    and ``T.grid`` write them), no block has a schedule annotation (``meta_schedule.*``,
    ``pragma_*``, ``tir.*``, ``tessera.*``, ...; attributes te.compute copies from ``attrs``
    do not count) and every allocated buffer is global. The body of an opaque computation (a
    ``te.extern`` written with ``tir.ir_builder``: a block without iterators or inner blocks) is
    the computation, not a schedule; on "cuda" its parallel loops are bound to threads.
    The function attribute ``tessera.auto_schedule`` (True/False) overrides the rule.

    >>> ok, why = tessera.autoschedule.carries_no_schedule(func)
    """
    from ..tir.schedule.schedule import _as_module

    if isinstance(func, _core.IRModule):
        raise TypeError("carries_no_schedule expects a PrimFunc")
    _as_module(func)  # type check
    return tuple(_core.carries_no_schedule(func))


def autoschedule(func_or_mod, target="c", facts=None):
    """A ``tir.Schedule`` of ``func_or_mod`` (a PrimFunc or an IRModule) chosen for ``target``
    ("c", "llvm" or "cuda"). Functions that already carry a schedule are left as they are."""
    from ..tir.schedule.schedule import Schedule, _as_module

    from ..driver import register_target_intrinsics

    mod = _as_module(func_or_mod)
    parsed = _target(target, facts)
    register_target_intrinsics(parsed)
    return Schedule._wrap(_core.auto_schedule(mod, parsed))


class _CallableModule(types.ModuleType):
    def __call__(self, func_or_mod, target="c", facts=None):
        return autoschedule(func_or_mod, target, facts)


sys.modules[__name__].__class__ = _CallableModule
