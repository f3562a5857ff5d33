"""TensorIR schedules: ``tir.Schedule``, its handles, traces and the ScheduleError.

>>> sch = tir.Schedule(Copy)                  # one block "copy" over a 1-D loop
>>> (n,) = sch.get_loops("copy")
>>> outer, lanes = sch.split(n, factors=[None, 8])
>>> sch.vectorize(lanes)
"""

from ...error import ScheduleError
from .schedule import BlockRV, ExprRV, IndexMap, LoopRV, Schedule
from .instruction import Instruction, InstructionKind
from .state import BlockScope, CachedFlags, DepKind, Dependency, ScheduleDebugMask, ScheduleState, StmtSRef
from .tensor_intrin import TensorIntrin
from .trace import Trace

__all__ = ["BlockRV", "BlockScope", "CachedFlags", "DepKind", "Dependency", "ScheduleDebugMask", "ExprRV", "IndexMap", "Instruction", "InstructionKind",
           "LoopRV", "Schedule", "ScheduleError", "ScheduleState", "StmtSRef", "TensorIntrin", "Trace"]
