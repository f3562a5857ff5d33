"""TIR statement classes under TVM's module name (``tir.stmt.For``, ``tir.stmt.Block``); the
same classes as ``tessera.tir.For`` etc."""

from .. import _core

Stmt, LetStmt, AttrStmt, AssertStmt = _core.Stmt, _core.LetStmt, _core.AttrStmt, _core.AssertStmt
BufferStore, Allocate, DeclBuffer, For, While = (
    _core.BufferStore, _core.Allocate, _core.DeclBuffer, _core.For, _core.While)
AllocateConst, BufferRealize = _core.AllocateConst, _core.BufferRealize
IfThenElse, SeqStmt, Evaluate = _core.IfThenElse, _core.SeqStmt, _core.Evaluate
Block, BlockRealize = _core.Block, _core.BlockRealize
BufferRegion, MatchBufferRegion = _core.BufferRegion, _core.MatchBufferRegion
ForKind = _core.ForKind



def stmt_list(stmt):
    """The statements of ``stmt`` in order, nested SeqStmts flattened (a single statement is a
    list of one).

    >>> stmt_list(SeqStmt([a, SeqStmt([b, c])]))   # [a, b, c]
    """
    if isinstance(stmt, _core.SeqStmt):
        return [s for item in stmt.seq for s in stmt_list(item)]
    return [stmt]


def stmt_seq(*args):
    """One statement of ``args`` in order: statements (SeqStmts flattened) and expressions (as
    Evaluate); a single statement stands alone."""
    seq = []
    for value in args:
        if isinstance(value, _core.PrimExpr):
            value = _core.Evaluate(value)
        seq.extend(stmt_list(value))
    return seq[0] if len(seq) == 1 else _core.SeqStmt(seq)


__all__ = ["stmt_list", "stmt_seq", "Stmt", "LetStmt", "AttrStmt", "AssertStmt", "BufferStore", "Allocate", "AllocateConst", "DeclBuffer",
           "For", "While", "IfThenElse", "SeqStmt", "Evaluate", "Block", "BlockRealize",
           "BufferRealize", "BufferRegion", "MatchBufferRegion", "ForKind"]


def __getattr__(name):
    # The rest of tessera.tir, as the compat mapping of this TVM module name always gave.
    from .. import tir

    return getattr(tir, name)
