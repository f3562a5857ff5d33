"""tir.BlockDependenceInfo: block srefs and the dependencies of each scope, without a schedule."""

import pytest

from tessera import tir
from tessera.error import TesseraTypeError
from tessera.script import tir as T
from tessera.tir.schedule import DepKind


@T.prim_func(private=True)
def two_stages(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] * T.float32(2)


def _blocks(func):
    found = {}
    tir.stmt_functor.post_order_visit(func.body, lambda n: found.update({n.name_hint: n}) if isinstance(n, tir.Block) else None)
    return found


def test_read_after_write_between_stages():
    info = tir.BlockDependenceInfo(two_stages)
    blocks = _blocks(two_stages)
    b, c = info.get_sref(blocks["B"]), info.get_sref(blocks["C"])
    # The loop sref above a block stands for the scope root that encloses it.
    scope = info.get_block_scope(b.parent)
    assert [(d.src == b, d.dst == c, d.kind) for d in scope.get_deps_by_src(b)] == [(True, True, DepKind.RAW)]
    assert [d.src == b for d in scope.get_deps_by_dst(c)] == [True]
    assert scope.get_deps_by_src(c) == []
    assert info.get_sref(tir.Block([], [], [], "other", tir.Evaluate(0))) is None


def test_block_dependence_info_errors():
    with pytest.raises(TesseraTypeError, match="IRModule or a PrimFunc"):
        tir.BlockDependenceInfo(tir.Evaluate(0))
    with pytest.raises(TesseraTypeError, match="expects a Block"):
        tir.BlockDependenceInfo(two_stages).get_sref(tir.Evaluate(0))
