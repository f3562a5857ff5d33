"""``tir.ScheduleState``: the module being scheduled and the srefs of its loops and blocks."""

import enum
from collections import namedtuple

from ... import _core
from ...error import TesseraTypeError, TesseraValueError

StmtSRef = _core.StmtSRef

CachedFlags = namedtuple("CachedFlags", ["affine_binding", "region_cover", "stage_pipeline"])
CachedFlags.__doc__ = """The properties TVM's ScheduleState caches for a block:
``affine_binding`` (quasi-affine bindings), ``region_cover`` (its producers write what it reads
first) and ``stage_pipeline`` (the scope it is the root of is a stage pipeline)."""

_DEBUG_MASKS = {"none": 0, "all": -1}


class ScheduleDebugMask(enum.IntFlag):
    """The checks a ScheduleState runs after each step (TVM's bits): ``VERIFY_SREF_TREE``
    checks the sref tree against the IR, ``VERIFY_CACHED_FLAGS`` the cached block flags."""

    VERIFY_SREF_TREE = 1
    VERIFY_CACHED_FLAGS = 2


class DepKind(enum.IntEnum):
    """The kind of a dependency between two blocks of a scope (TVM's numbering)."""

    RAW = 0
    WAW = 1
    WAR = 2
    OPAQUE = 3


class Dependency:
    """A dependency from block ``src`` to block ``dst`` (srefs) of kind :class:`DepKind`."""

    __slots__ = ("src", "dst", "kind")

    def __init__(self, src, dst, kind):
        self.src, self.dst, self.kind = src, dst, DepKind(kind)

    def __repr__(self):
        return f"Dependency({self.kind.name})"


class BlockScope:
    """The dependencies between the child blocks of one scope root (TVM's ``tir.BlockScope``).

    >>> scope = state.get_block_scope(state.get_sref(root_block))
    >>> [dep.kind for dep in scope.get_deps_by_src(state.get_sref(block_b))]
    [<DepKind.RAW: 0>]
    """

    def __init__(self, deps):
        self._deps = deps

    def get_deps_by_src(self, block):
        """The dependencies whose source is the block sref ``block``."""
        return [d for d in self._deps if d.src.same_as(block)]

    def get_deps_by_dst(self, block):
        """The dependencies whose destination is the block sref ``block``."""
        return [d for d in self._deps if d.dst.same_as(block)]


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

    def _sref(self, what, name):
        if isinstance(what, _core.Block):
            sref = self._state.get_sref(what)
            if sref is None:
                raise TesseraValueError(f"{name}: the block {what.name_hint!r} is not in the scheduled module")
            return sref
        if not isinstance(what, StmtSRef):
            raise TesseraTypeError(f"{name} expects a block sref, got {type(what).__name__}")
        return what

    def get_block_scope(self, scope_root):
        """The :class:`BlockScope` of a block (sref or Block): the dependencies of its children."""
        sref = self._sref(scope_root, "get_block_scope")
        return BlockScope([Dependency(*d) for d in self._state.block_dependencies(sref)])

    def replace(self, src_sref, tgt_stmt, block_sref_reuse=None):
        """Replace the loop or block of ``src_sref`` by ``tgt_stmt`` (a For or BlockRealize for a
        loop, a Block for a block). ``block_sref_reuse`` maps old blocks to the new blocks that
        keep their srefs; srefs of loops whose variable survives are kept too."""
        if not isinstance(src_sref, StmtSRef):
            raise TesseraTypeError(f"replace expects an sref, got {type(src_sref).__name__}")
        if not isinstance(tgt_stmt, _core.Stmt):
            raise TesseraTypeError(f"replace expects a statement to put in, got {type(tgt_stmt).__name__}")
        src = src_sref.stmt
        if isinstance(src, _core.Block) and not isinstance(tgt_stmt, _core.Block):
            raise TesseraTypeError(f"replace: a block is replaced by a Block, not a {type(tgt_stmt).__name__}")
        if isinstance(src, _core.For) and not isinstance(tgt_stmt, (_core.For, _core.BlockRealize)):
            raise TesseraTypeError(
                f"replace: a loop is replaced by a For or a BlockRealize, not a {type(tgt_stmt).__name__}")
        self._state.replace(src_sref, tgt_stmt, dict(block_sref_reuse or {}))

    def _get_cached_flags(self, block_sref):
        """The :class:`CachedFlags` of a block."""
        return CachedFlags(*self._state.get_cached_flags(block_sref))

    get_cached_flags = _get_cached_flags


__all__ = ["BlockScope", "CachedFlags", "DepKind", "Dependency", "ScheduleDebugMask",
           "ScheduleState", "StmtSRef"]
