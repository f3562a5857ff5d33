"""TensorIR schedules: ``tir.Schedule``, its handles, traces and the ScheduleError.

>>> sch = tir.Schedule(Module)
>>> (i,) = sch.get_loops(sch.get_block("B"))
>>> i0, i1 = sch.split(i, factors=[None, 4])
"""

from ...error import ScheduleError
from .schedule import BlockRV, ExprRV, IndexMap, LoopRV, Schedule
from .instruction import Instruction, InstructionKind
from .state import BlockScope, CachedFlags, DepKind, Dependency, ScheduleDebugMask, ScheduleState, StmtSRef
from .tensor_intrin import TensorIntrin
from .trace import Trace

__all__ = ["BlockRV", "BlockScope", "CachedFlags", "DepKind", "Dependency", "ScheduleDebugMask", "ExprRV", "IndexMap", "Instruction", "InstructionKind",
           "LoopRV", "Schedule", "ScheduleError", "ScheduleState", "StmtSRef", "TensorIntrin", "Trace"]
