"""ScheduleState, srefs and the cached flags of blocks."""

import pytest

from tessera import tir
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir.schedule import CachedFlags, ScheduleState, StmtSRef


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        with T.block("init"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.float32(0)
        for k in range(64):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def partial_producer(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,), "float32")
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = B[vi]


@T.prim_func
def non_affine(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(128, i * i)
            B[vi] = A[vi]


@T.prim_func
def write_after_read(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in range(16):
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.float32(0)


def block_sref(state, name):
    found = []

    def visit(node):
        if isinstance(node, tir.Block) and node.name_hint == name:
            found.append(node)

    tir.stmt_functor.post_order_visit(state.mod["main"].body, visit)
    return state.get_sref(found[0])


ALL_TRUE = CachedFlags(affine_binding=True, region_cover=True, stage_pipeline=True)


@pytest.mark.parametrize("func,names", [(elementwise, ["B", "C", "root"]),
                                        (matmul, ["init", "update", "root"])])
def test_flags_of_pipelines(func, names):
    state = ScheduleState(func, debug_mask="all")
    for name in names:
        assert state._get_cached_flags(block_sref(state, name)) == ALL_TRUE


def test_consumer_not_covered():
    state = ScheduleState(partial_producer)
    assert state._get_cached_flags(block_sref(state, "B")) == ALL_TRUE
    assert state._get_cached_flags(block_sref(state, "C")) == CachedFlags(True, False, True)
    assert state._get_cached_flags(block_sref(state, "root")) == CachedFlags(True, True, False)


def test_non_affine_binding_and_write_after_read():
    state = ScheduleState(non_affine)
    assert not state._get_cached_flags(block_sref(state, "B")).affine_binding
    state = ScheduleState(write_after_read)
    assert not state._get_cached_flags(block_sref(state, "root")).stage_pipeline


def test_get_sref_of_handles_and_statements():
    sch = tir.Schedule(elementwise, debug_mask="all")
    block = sch.get_block("C")
    sref = sch.get_sref(block)
    assert isinstance(sref, StmtSRef)
    assert sref.stmt.same_as(sch.get(block)) and sch.get(sref).same_as(sch.get(block))
    i, j = sch.get_loops(block)
    assert sref.parent.same_as(sch.get_sref(j)) and sch.get_sref(j).parent == sch.get_sref(i)
    assert sch.get_sref(sch.get(i)) == sch.get_sref(i)
    root = sch.get_sref(i).parent
    assert root.stmt.name_hint == "root" and root.parent is None
    assert isinstance(sch.state, ScheduleState) and sch.state.mod.same_as(sch.mod)
    # The sref follows the loop through a primitive.
    sch.split(j, factors=[None, 8])
    assert sch.get_sref(block).stmt.same_as(sch.get(block))
    # A statement that is not in the module has no sref.
    assert sch.state.get_sref(elementwise.body.block.body.seq[1].body) is None
    with pytest.raises(TypeError):
        sch.state.get_sref(sch.mod)


def _block(state, name):
    found = []
    tir.stmt_functor.post_order_visit(
        state.mod["main"].body, lambda n: found.append(n) if isinstance(n, tir.Block) and n.name_hint == name else None)
    assert len(found) == 1
    return state.get_sref(found[0])


def test_block_scope_dependencies():
    from tessera.tir.schedule import DepKind

    state = ScheduleState(matmul)
    root, init, update = (_block(state, n) for n in ("root", "init", "update"))
    scope = state.get_block_scope(root)
    kinds = sorted(d.kind for d in scope.get_deps_by_src(init))
    assert kinds == [DepKind.RAW, DepKind.WAW]
    assert all(d.dst.same_as(update) for d in scope.get_deps_by_dst(update))
    assert scope.get_deps_by_src(update) == []
    state2 = ScheduleState(elementwise)
    (dep,) = state2.get_block_scope(_block(state2, "root")).get_deps_by_src(_block(state2, "B"))
    assert dep.kind == DepKind.RAW and dep.dst.same_as(_block(state2, "C"))


@T.prim_func
def elementwise_c_renamed(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C2"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_replace_block_keeps_the_sref_when_reused():
    state = ScheduleState(elementwise)
    sref = _block(state, "C")
    old = sref.stmt
    new = tir.Block(old.iter_vars, old.reads, old.writes, "C2", old.body, None, None, None, None)
    state.replace(sref, new, {old: new})
    assert_structural_equal(state.mod["main"].body, elementwise_c_renamed.body, map_free_vars=True)
    assert sref.stmt.same_as(new)
    assert state.get_sref(new) == sref


def test_replace_loop_by_a_block_realize_drops_the_loop_srefs():
    state = ScheduleState(elementwise)
    loop = state.mod["main"].body.block.body[1]
    sref = state.get_sref(loop)
    wrapper = tir.BlockRealize([], True, tir.Block([], [], [], "wrap", loop, None, None, None, None))
    state.replace(sref, wrapper)
    assert isinstance(state.mod["main"].body.block.body[1], tir.BlockRealize)
    assert state.get_sref(state.mod["main"].body.block.body[1].block) is not None


def test_replace_errors():
    state = ScheduleState(elementwise)
    sref = _block(state, "C")
    with pytest.raises(TypeError, match="a block is replaced by a Block"):
        state.replace(sref, tir.Evaluate(0))
    with pytest.raises(TypeError, match="maps a Block to a Block"):
        state.replace(sref, sref.stmt, {sref.stmt: 1})
    with pytest.raises(TypeError, match="expects an sref"):
        state.replace(sref.stmt, sref.stmt)
