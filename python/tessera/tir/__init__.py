"""TIR node classes (handles to C++ nodes) and expression helpers."""

from .. import _core

PrimExpr = _core.PrimExpr
IntImm, FloatImm, StringImm = _core.IntImm, _core.FloatImm, _core.StringImm
Var, SizeVar, Cast = _core.Var, _core.SizeVar, _core.Cast
Add, Sub, Mul, Div, Mod = _core.Add, _core.Sub, _core.Mul, _core.Div, _core.Mod
FloorDiv, FloorMod, Min, Max = _core.FloorDiv, _core.FloorMod, _core.Min, _core.Max
EQ, NE, LT, LE, GT, GE = _core.EQ, _core.NE, _core.LT, _core.LE, _core.GT, _core.GE
And, Or, Not, Select = _core.And, _core.Or, _core.Not, _core.Select
Ramp, Broadcast, Shuffle, Let, Call, BufferLoad = (
    _core.Ramp, _core.Broadcast, _core.Shuffle, _core.Let, _core.Call, _core.BufferLoad)
Stmt, LetStmt, AttrStmt, AssertStmt = _core.Stmt, _core.LetStmt, _core.AttrStmt, _core.AssertStmt
BufferStore, Allocate, DeclBuffer, For, While = (
    _core.BufferStore, _core.Allocate, _core.DeclBuffer, _core.For, _core.While)
BufferRealize = _core.BufferRealize
AllocateConst = _core.AllocateConst
IfThenElse, SeqStmt, Evaluate = _core.IfThenElse, _core.SeqStmt, _core.Evaluate
Buffer, PrimFunc, Range, IterVar = _core.Buffer, _core.PrimFunc, _core.Range, _core.IterVar
ForKind, IterVarType = _core.ForKind, _core.IterVarType
Block, BlockRealize = _core.Block, _core.BlockRealize
BufferRegion, MatchBufferRegion = _core.BufferRegion, _core.MatchBufferRegion
Op = _core.Op
CommReducer = _core.CommReducer


def const(value, dtype=None, span=None):
    """A constant: ``const(1)`` is int32, ``const(1.0)`` float32, ``const(1, "int8")`` int8;
    without a dtype an integer beyond int32 is int64 and a float beyond float32 float64, as TVM
    (one definition: :func:`tessera.tir.expr_ops.const`)."""
    from .expr_ops import const as _const

    return _const(value, None if dtype is None else str(dtype), span)


def ProducerLoad(producer, indices, span=None):  # noqa: N802 - TVM's node name
    """TVM's read of a te tensor at ``indices`` (``ProducerLoad(B, [])`` reads a zero-dimensional
    B): in tessera a tensor read is the load of the tensor's buffer, ``producer(*indices)``."""
    from ..te.tensor import Tensor

    if not isinstance(producer, Tensor):
        raise TypeError(f"ProducerLoad reads a te tensor, got {producer!r}")
    return producer(*indices)


class _OpNamespace:
    """``op("tir.exp")``: the registered intrinsic of that name. Also TVM's ``tvm.tir.op``
    module: ``op.call_intrin``, ``op.exp``, ... are the functions of :mod:`tessera.tir.ops`."""

    def __call__(self, name):
        return Op.get(name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        import importlib

        return getattr(importlib.import_module(".ops", __package__), name)


op = _OpNamespace()

# Python operators on expressions (+, -, *, /, //, %, comparisons, ...) and Buffer indexing.
from . import expr_ops  # noqa: E402,F401
from . import stmt_functor  # noqa: E402,F401
from . import _constructors  # noqa: E402,F401 - TVM's spellings of the node constructors
from . import index_map as _index_map  # noqa: E402,F401 - IndexMap.from_func
from . import _function  # noqa: E402,F401 - PrimFunc.specialize
from .data_layout import BijectiveLayout, Layout, bijective_layout, layout  # noqa: E402,F401
from .stmt import stmt_list, stmt_seq  # noqa: E402,F401
from .buffer import (call_cpacked, call_cpacked_lowered, call_packed,  # noqa: E402,F401
                     call_packed_lowered, decl_buffer, trace)


_OP_NAMES = None


def __getattr__(name):
    """The schedule names and the expression functions of :mod:`tessera.tir.ops` (``tir.exp``,
    ``tir.floordiv``, ...) load on first use: ``tir.Schedule``, ``tir.ScheduleError``, ..."""
    if name in ("min", "max", "sum", "comm_reducer"):  # TVM's tir.min etc. are te's reducers
        import importlib

        return getattr(importlib.import_module("..te.reduction", __name__), name)
    global _OP_NAMES
    if _OP_NAMES is None:
        import importlib

        _OP_NAMES = frozenset(importlib.import_module(".ops", __name__).__all__)
    if name in _OP_NAMES:
        import importlib

        return getattr(importlib.import_module(".ops", __name__), name)
    if name in ("PyStmtExprVisitor", "PyStmtExprMutator"):
        import importlib

        return getattr(importlib.import_module(".functor", __name__), name)
    if name == "BlockDependenceInfo":
        import importlib

        return importlib.import_module(".block_dependence_info", __name__).BlockDependenceInfo
    if name in ("Schedule", "BlockRV", "LoopRV", "ExprRV", "IndexMap", "Trace", "ScheduleError", "schedule",
                "ScheduleState", "StmtSRef", "Instruction", "InstructionKind", "TensorIntrin"):
        import importlib

        schedule = importlib.import_module(".schedule", __name__)
        return schedule if name == "schedule" else getattr(schedule, name)
    # Submodules load on first use, as in TVM: tir.transform.Simplify() after `import tessera`.
    import importlib.util

    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tessera.tir' has no attribute '{name}'")
from . import ir_builder  # noqa: E402,F401 - tir.ir_builder.create()
# TVM's tir.build(mod, target, pipeline): the function, bound over the submodule of its name.
from .build import build  # noqa: E402,F401
