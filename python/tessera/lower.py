"""Staged lowering (lowering-stages.md §3): run to a stage, inspect or replace the module, resume.

>>> from tessera import lower
>>> lw = lower.StageLowerer(mod, target="c")
>>> lw.run_to("flatten"); print(lw.mod.script())
>>> lib = lw.run_to("end")            # the runtime module

The module is also callable: ``ts.lower(mod, target="c", stage="cleanup")`` returns the IRModule
after ``stage``.
"""

from __future__ import annotations

import sys
import types
from typing import Any, List, Optional, Tuple

from . import driver
from .runtime.module import Module


class StageLowerer:
    """Lowers one module stage by stage for a target ("c", "llvm", "cuda").

    ``auto_schedule=True`` schedules the functions that carry no schedule in the begin stage,
    as ``ts.build`` does (pass ``tir.AutoSchedule``).
    """

    def __init__(self, mod: Any, target: Any = "c", auto_schedule: bool = False) -> None:
        self._lw = driver._lowerer(mod, target, auto_schedule)
        self._target = driver._target_name(target)

    def run_to(self, stage: str) -> Optional[Module]:
        """Run the stages after the current one through ``stage``; at "end", the built Module."""
        self._lw.run_to(stage)
        if self._lw.current_stage == "end" and self._lw.result is not None:
            return Module(self._lw.result)
        return None

    @property
    def mod(self) -> Any:
        return self._lw.mod

    @mod.setter
    def mod(self, value: Any) -> None:
        self._lw.mod = value

    @property
    def current_stage(self) -> str:
        return self._lw.current_stage

    @property
    def timings(self) -> List[Tuple[str, str, float, bool, bool]]:
        """(stage, pass, seconds, changed, skipped) for every pass run so far."""
        return list(self._lw.timings)

    def timing_report(self) -> str:
        return self._lw.timing_report()


def lower(mod: Any, target: Any = "c", stage: str = "cleanup", auto_schedule: bool = False) -> Any:
    """The IRModule after lowering ``mod`` for ``target`` through ``stage``; with
    ``auto_schedule=True`` the automatic schedule runs first, as in ``ts.build``."""
    return driver.lower(mod, target, stage, auto_schedule)


class _CallableModule(types.ModuleType):
    def __call__(self, mod: Any, target: Any = "c", stage: str = "cleanup",
                 auto_schedule: bool = False) -> Any:
        return lower(mod, target, stage, auto_schedule)


sys.modules[__name__].__class__ = _CallableModule
