"""``tir.BlockDependenceInfo``: the srefs of a module's blocks and the dependencies between the
blocks of each scope, without a schedule (TVM's block-level dependence analysis).

>>> info = tir.BlockDependenceInfo(func)
>>> sref = info.get_sref(block_b)
>>> [dep.kind for dep in info.get_block_scope(sref.parent).get_deps_by_src(sref)]   # [RAW]

The analysis is the C++ one of ``tir.ScheduleState`` (sref tree and block scopes).
"""

from .. import _core
from ..error import TesseraTypeError
from .schedule.state import BlockScope, DepKind, ScheduleState

__all__ = ["BlockDependenceInfo", "BlockScope", "DepKind"]


class BlockDependenceInfo:
    """The srefs of the blocks of ``mod`` (an IRModule or a PrimFunc) and their scopes'
    dependencies."""

    def __init__(self, mod):
        if not isinstance(mod, (_core.IRModule, _core.PrimFunc)):
            raise TesseraTypeError(f"BlockDependenceInfo expects an IRModule or a PrimFunc, got {type(mod).__name__}")
        self._state = ScheduleState(mod)

    @property
    def mod(self):
        """The module analysed."""
        return self._state.mod

    def get_sref(self, block):
        """The sref of ``block`` (a Block of the module), or None when it is not in the module."""
        if not isinstance(block, _core.Block):
            raise TesseraTypeError(f"get_sref expects a Block, got {type(block).__name__}")
        return self._state.get_sref(block)

    def get_block_scope(self, block_sref):
        """The :class:`BlockScope` of the scope root ``block_sref``: the dependencies between its
        child blocks. A loop sref stands for the block that encloses it (TVM's srefs here link a
        block to its parent block directly, so ``sref.parent`` is the scope root)."""
        sref = block_sref
        while sref is not None and not isinstance(sref.stmt, _core.Block):
            sref = sref.parent
        if sref is None:
            raise TesseraTypeError("get_block_scope expects a block sref (or a loop sref inside a block)")
        return self._state.get_block_scope(sref)
