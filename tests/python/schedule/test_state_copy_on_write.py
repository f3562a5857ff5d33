"""ScheduleState.replace copies on write: a node that only the state holds changes in place
(its identity stays), a node held elsewhere (a Python handle, another module) is copied and the
holder keeps seeing the old program. Also the statement copy protocol (__getstate__ /
__setstate__) and the region-cover flag of partial producers and thread-shared buffers."""

import copy
import gc
import pickle

import pytest

from tessera import tir
from tessera.ir import IRModule, assert_structural_equal, structural_equal
from tessera.script import tir as T
from tessera.tir.schedule import CachedFlags, ScheduleState


@T.prim_func
def two_stages(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(3)


# two_stages with the inner loop of stage B replaced by an empty loop over the same variable.
@T.prim_func
def inner_b_emptied(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "two_stages"})
    B = T.alloc_buffer((16, 8), "float32")
    for i, j in T.grid(16, 8):
        T.evaluate(0)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(3)


def _reparse():
    """A private copy of two_stages (nothing else holds its nodes)."""
    from tessera.script import from_source

    return from_source(two_stages.script())


def fresh_state():
    state = ScheduleState(_reparse(), debug_mask="all")
    gc.collect()
    return state


def _inner_b(state):
    return state.mod["main"].body.block.body[0].body


def _emptied_like(loop):
    return tir.For(loop.loop_var, 0, 8, tir.ForKind.SERIAL, tir.Evaluate(0), None, None)


def test_replace_with_no_other_holder_changes_in_place():
    state = fresh_state()
    func_hash = state.mod["main"].__hash__()
    outer_hash = state.mod["main"].body.block.body[0].__hash__()
    sref = state.get_sref(_inner_b(state))
    state.replace(sref, _emptied_like(sref.stmt))
    assert state.mod["main"].__hash__() == func_hash
    assert state.mod["main"].body.block.body[0].__hash__() == outer_hash
    assert_structural_equal(state.mod["main"], inner_b_emptied)
    # The loop keeps its sref: the new loop has the same variable.
    assert sref.stmt.same_as(_inner_b(state))


def test_replace_copies_what_a_handle_holds():
    state = fresh_state()
    held_outer = state.mod["main"].body.block.body[0]
    root_hash = state.mod["main"].body.block.__hash__()
    other_hash = state.mod["main"].body.block.body[1].__hash__()
    state.replace(state.get_sref(held_outer.body), _emptied_like(held_outer.body))
    # The held loop is copied, its parent (only the state holds it) changes in place.
    assert not state.mod["main"].body.block.body[0].same_as(held_outer)
    assert state.mod["main"].body.block.__hash__() == root_hash
    assert state.mod["main"].body.block.body[1].__hash__() == other_hash
    assert_structural_equal(held_outer, two_stages.body.block.body[0], map_free_vars=True)
    assert_structural_equal(state.mod["main"], inner_b_emptied)


@pytest.mark.parametrize("holder", ["func", "module", "functions"])
def test_replace_keeps_a_held_function_or_module(holder):
    state = fresh_state()
    mod_hash = state.mod.__hash__()
    func_hash = state.mod["main"].__hash__()
    held = {"func": lambda: state.mod["main"], "module": lambda: state.mod,
            "functions": lambda: state.mod.functions}[holder]()
    sref = state.get_sref(_inner_b(state))
    state.replace(sref, _emptied_like(sref.stmt))
    assert state.mod["main"].__hash__() != func_hash
    assert_structural_equal(state.mod["main"], inner_b_emptied)
    old_func = {"func": lambda: held, "module": lambda: held["main"],
                "functions": lambda: held["main"]}[holder]()
    assert_structural_equal(old_func, two_stages)
    if holder == "func":
        assert state.mod.__hash__() == mod_hash
    else:
        assert state.mod.__hash__() != mod_hash
    if holder == "functions":
        assert state.mod.functions.__hash__() != held.__hash__()
        assert state.mod.functions == state.mod.functions


def test_replaced_block_loses_its_sref_unless_reused():
    state = fresh_state()
    sref = state.get_sref(_inner_b(state).body.block)
    old = sref.stmt
    new = tir.Block(old.iter_vars, old.reads, old.writes, "B2", old.body, None, None, None, None)
    state.replace(sref, new)
    assert sref.stmt is None
    assert state.get_sref(new) is not None
    sref2 = state.get_sref(new)
    newer = tir.Block(new.iter_vars, new.reads, new.writes, "B3", new.body, None, None, None, None)
    state.replace(sref2, newer, {new: newer})
    assert sref2.stmt.same_as(newer)


def test_schedule_primitives_leave_a_held_module_alone():
    sch = tir.Schedule(_reparse(), debug_mask="all")
    before = sch.mod
    sch.split(sch.get_loops(sch.get_block("C"))[1], [None, 4])
    assert not sch.mod.same_as(before)
    assert_structural_equal(before["main"], two_stages)


def test_statement_state_is_a_copy():
    func = _reparse()
    loop = func.body.block.body[1]
    wrapper = tir.Block([], [], [], "wrap", loop, None, None, None, None)
    state = wrapper.__getstate__()
    wrapper.__setstate__(state)
    # The block now holds a copy: new statements, new loop variables, the same buffers.
    assert not wrapper.body.same_as(loop)
    assert not wrapper.body.loop_var.same_as(loop.loop_var)
    assert_structural_equal(wrapper.body, loop, map_free_vars=True)
    inner = wrapper.body.body.body.block
    assert inner.writes[0].buffer.same_as(loop.body.body.block.writes[0].buffer)
    deep = copy.deepcopy(loop)
    assert not deep.same_as(loop) and structural_equal(deep, loop, map_free_vars=True)


def test_statement_state_errors():
    func = _reparse()
    loop = func.body.block.body[1]
    with pytest.raises(ValueError, match="part of other IR"):
        loop.__setstate__(loop.__getstate__())
    free = tir.Evaluate(0)
    with pytest.raises(TypeError, match="expects the state"):
        free.__setstate__(("something", 1))
    with pytest.raises(TypeError, match="expects the state"):
        free.__setstate__(loop.__getstate__())
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(loop)


def test_functions_map_identity():
    mod = IRModule({"main": _reparse()})
    assert mod.functions == mod.functions
    assert hash(mod.functions) == hash(mod.functions)
    other = IRModule({"main": mod["main"]})
    assert mod.functions != other.functions


@T.prim_func
def gap_between_producers(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(15):
        with T.block("low"):
            vi = T.axis.spatial(15, i)
            A[vi] = T.float32(1)
    for i in range(16):
        with T.block("high"):
            vi = T.axis.spatial(32, i + 16)
            A[vi] = T.float32(2)
    for i in range(32):
        with T.block("use"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi]


@T.prim_func
def adjacent_producers(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(16):
        with T.block("low"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.float32(1)
    for i in range(16):
        with T.block("high"):
            vi = T.axis.spatial(32, i + 16)
            A[vi] = T.float32(2)
    for i in range(32):
        with T.block("use"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi]


@T.prim_func
def transposed_through_shared(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32), "float32", scope="shared")
    for t in T.thread_binding(32, thread="threadIdx.x"):
        for j in range(32):
            with T.block("B"):
                vt, vj = T.axis.remap("SS", [t, j])
                B[vt, vj] = A[vt, vj]
        for j in range(32):
            with T.block("C"):
                vt, vj = T.axis.remap("SS", [t, j])
                C[vt, vj] = B[vj, vt]


@T.prim_func
def transposed_through_local(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32), "float32", scope="local")
    for t in T.thread_binding(32, thread="threadIdx.x"):
        for j in range(32):
            with T.block("B"):
                vt, vj = T.axis.remap("SS", [t, j])
                B[vt, vj] = A[vt, vj]
        for j in range(32):
            with T.block("C"):
                vt, vj = T.axis.remap("SS", [t, j])
                C[vt, vj] = B[vj, vt]


def _flags(func, name):
    state = ScheduleState(func)
    found = []
    tir.stmt_functor.post_order_visit(
        state.mod["main"].body,
        lambda n: found.append(n) if isinstance(n, tir.Block) and n.name_hint == name else None)
    return state._get_cached_flags(state.get_sref(found[0]))


def test_region_cover_of_producers_with_a_gap():
    assert _flags(gap_between_producers, "use") == CachedFlags(True, False, True)
    assert _flags(gap_between_producers, "root").stage_pipeline is False
    assert _flags(adjacent_producers, "use") == CachedFlags(True, True, True)


def test_region_cover_relaxes_the_threads_sharing_a_buffer():
    # Shared memory: the other threads' rows are written by then (the thread loop is relaxed).
    assert _flags(transposed_through_shared, "C") == CachedFlags(True, True, True)
    assert _flags(transposed_through_shared, "root") == CachedFlags(True, True, True)
    # Local memory: each thread sees only its own row.
    assert _flags(transposed_through_local, "C").region_cover is False
