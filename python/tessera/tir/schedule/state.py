"""``tir.ScheduleState``: the module being scheduled and the srefs of its loops and blocks."""

from collections import namedtuple

from ... import _core
from ...error import TesseraTypeError, TesseraValueError

StmtSRef = _core.StmtSRef

CachedFlags = namedtuple("CachedFlags", ["affine_binding", "region_cover", "stage_pipeline"])
CachedFlags.__doc__ = """The properties TVM's ScheduleState caches for a block:
``affine_binding`` (quasi-affine bindings), ``region_cover`` (its producers write what it reads
first) and ``stage_pipeline`` (the scope it is the root of is a stage pipeline)."""

_DEBUG_MASKS = {"none": 0, "all": -1}


def _debug_mask(debug_mask):
    if isinstance(debug_mask, str):
        if debug_mask not in _DEBUG_MASKS:
            raise TesseraValueError(f"debug_mask must be 'none', 'all' or an int, not {debug_mask!r}")
        return _DEBUG_MASKS[debug_mask]
    return int(debug_mask)


class ScheduleState:
    """The module being scheduled with a stable reference (sref) to each of its loops and blocks.

    >>> state = tir.ScheduleState(Module)
    >>> sref = state.get_sref(block)
    >>> state._get_cached_flags(sref)
    CachedFlags(affine_binding=True, region_cover=True, stage_pipeline=True)
    """

    def __init__(self, mod, *, debug_mask="none", enable_check=True):
        if isinstance(mod, _core.PrimFunc):
            mod = _core.IRModule.from_func(mod, "main")
        if not isinstance(mod, _core.IRModule):
            raise TesseraTypeError(
                f"ScheduleState expects an IRModule or a PrimFunc, got {type(mod).__name__}")
        self._state = _core.ScheduleState(mod, _debug_mask(debug_mask), enable_check)

    @classmethod
    def _wrap(cls, core_state, owner):
        state = cls.__new__(cls)
        state._state = core_state
        state._owner = owner  # keeps the schedule holding the state alive
        return state

    @property
    def mod(self):
        """The module as it is now."""
        return self._state.mod

    @property
    def debug_mask(self):
        return self._state.debug_mask

    @property
    def enable_check(self):
        return self._state.enable_check

    def get_sref(self, stmt):
        """The sref of a Block or For of the module, or None when it is not in the module."""
        if not isinstance(stmt, (_core.Block, _core.For)):
            raise TesseraTypeError(f"get_sref expects a Block or a For, got {type(stmt).__name__}")
        return self._state.get_sref(stmt)

    def _get_cached_flags(self, block_sref):
        """The :class:`CachedFlags` of a block."""
        return CachedFlags(*self._state.get_cached_flags(block_sref))

    get_cached_flags = _get_cached_flags


__all__ = ["CachedFlags", "ScheduleState", "StmtSRef"]
