"""Sampling instructions: seeded, recorded with their decisions, replayed from the trace."""

import collections
import math

import pytest

from tessera import tir
from tessera.error import TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir.schedule.testing import verify_trace_roundtrip


@T.prim_func
def elementwise(A: T.Buffer((128, 257, 1470), "float32"), B: T.Buffer((128, 257, 1470), "float32")):
    for i, j, k in T.grid(128, 257, 1470):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


@T.prim_func
def two_stage(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
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
def dynamic(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 1024))
    for i, j in T.grid(n, 1024):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = T.float32(1)


def loops(sch, name="B"):
    return sch.get_loops(sch.get_block(name))


@pytest.mark.parametrize("axis,extent", [(0, 128), (1, 257), (2, 1470)])
def test_perfect_tile_product_is_the_extent(axis, extent):
    sch = tir.Schedule(elementwise, seed=7, debug_mask="all")
    factors = [sch.get(v) for v in sch.sample_perfect_tile(loops(sch)[axis], n=4,
                                                           max_innermost_factor=-1)]
    assert len(factors) == 4 and math.prod(factors) == extent
    verify_trace_roundtrip(sch, elementwise)


def test_perfect_tile_bounds_the_innermost_factor():
    sch = tir.Schedule(elementwise, seed=3)
    for _ in range(20):
        factors = [sch.get(v) for v in sch.sample_perfect_tile(loops(sch)[0], n=3,
                                                               max_innermost_factor=4)]
        assert math.prod(factors) == 128 and factors[-1] <= 4


def test_same_seed_same_decisions_and_reseeding():
    def draw(sch):
        out = [sch.get(v) for v in sch.sample_perfect_tile(loops(sch)[2], n=3)]
        out += [sch.get(sch.sample_categorical([1, 2, 3], [0.2, 0.3, 0.5])) for _ in range(10)]
        return out

    first, second = tir.Schedule(elementwise, seed=42), tir.Schedule(elementwise, seed=42)
    assert draw(first) == draw(second)
    other = tir.Schedule(elementwise, seed=43)
    other.seed(42)
    assert draw(other) == draw(tir.Schedule(elementwise, seed=42))
    assert first.fork_seed() == second.fork_seed()


def test_seed_matches_tvms_engine():
    # The engine is minstd (x' = 48271 x mod 2^31 - 1): from seed 1 the first fork is
    # (48271 * 32767) % 1999999973.
    sch = tir.Schedule(elementwise, seed=1)
    assert sch.fork_seed() == (48271 * 32767) % 1999999973
    # seed 0 is normalised to 1, as TVM does.
    assert tir.Schedule(elementwise, seed=0).fork_seed() == (48271 * 32767) % 1999999973


def test_perfect_tile_with_decision_and_split():
    @T.prim_func
    def expected(A: T.Buffer((128, 257, 1470), "float32"), B: T.Buffer((128, 257, 1470), "float32")):
        for i_0, i_1, j, k in T.grid(8, 16, 257, 1470):
            with T.block("B"):
                vi = T.axis.spatial(128, i_0 * 16 + i_1)
                vj, vk = T.axis.remap("SS", [j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    sch = tir.Schedule(elementwise, debug_mask="all")
    i = loops(sch)[0]
    factors = sch.sample_perfect_tile(i, n=2, max_innermost_factor=16, decision=[8, 16])
    assert [sch.get(f) for f in factors] == [8, 16]
    sch.split(i, factors=factors)
    assert_structural_equal(sch.mod["main"], expected.with_attr("global_symbol", sch.mod["main"].attrs["global_symbol"]))
    lines = sch.trace.as_python()
    assert lines[2] == ("v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16, "
                        "decision=[8, 16])")
    assert lines[3].startswith("l6, l7 = sch.split(loop=l1, factors=[v4, v5]")
    assert sch.trace.as_json()[1] == [[2, [8, 16]]]
    verify_trace_roundtrip(sch, elementwise)


def test_stale_decision_is_made_perfect():
    sch = tir.Schedule(elementwise)
    factors = sch.sample_perfect_tile(loops(sch)[0], n=3, decision=[2, 3, 8])
    # 8 divides 128, 3 does not divide 16: it becomes 16 and the outer factor 1.
    assert [sch.get(f) for f in factors] == [1, 16, 8]


def test_perfect_tile_on_a_dynamic_loop():
    sch = tir.Schedule(dynamic, debug_mask="all")
    di, si = loops(sch)
    factors = sch.sample_perfect_tile(si, n=4)
    assert math.prod(sch.get(f) for f in factors) == 1024
    factors = sch.sample_perfect_tile(di, n=3)
    assert factors[0] is None and [sch.get(f) for f in factors[1:]] == [1, 1]
    sch.split(di, factors=factors)
    verify_trace_roundtrip(sch, dynamic)


def test_partitioned_tile():
    sch = tir.Schedule(elementwise, seed=5, debug_mask="all")
    for _ in range(10):
        factors = [sch.get(f) for f in sch.sample_partitioned_tile(
            loops(sch)[0], n=4, partition_pos=2, innerpart_factor=8)]
        assert math.prod(factors) == 128 and (factors[2] * factors[3]) % 8 == 0
    # A decision whose inner part is not divisible falls back to (extent / f, .., f, ..).
    factors = sch.sample_partitioned_tile(loops(sch)[0], n=3, partition_pos=1, innerpart_factor=8,
                                          decision=[32, 2, 2])
    assert [sch.get(f) for f in factors] == [16, 8, 1]
    verify_trace_roundtrip(sch, elementwise)


def test_categorical_distribution_and_roundtrip():
    sch = tir.Schedule(elementwise, seed=42, debug_mask="all")
    candidates, probs = [5, 2, 7, 1], [0.15, 0.55, 0.05, 0.25]
    counter = collections.Counter(sch.get(sch.sample_categorical(candidates, probs))
                                  for _ in range(1000))
    for c, p in zip(candidates, probs):
        assert (p - 0.07) * 1000 <= counter[c] <= (p + 0.07) * 1000
    replayed = verify_trace_roundtrip(sch, elementwise)
    assert replayed.trace.as_python() == sch.trace.as_python()


def test_categorical_decision_and_errors():
    sch = tir.Schedule(elementwise)
    v = sch.sample_categorical([10, 20, 30], [0.5, 0.25, 0.25], decision=2)
    assert sch.get(v) == 30
    assert sch.trace.as_python()[-1] == (
        "v0 = sch.sample_categorical(candidates=[10, 20, 30], probs=[0.5, 0.25, 0.25], decision=2)")
    with pytest.raises(ValueError, match="needs one probability per candidate"):
        sch.sample_categorical([1, 2], [1.0])
    with pytest.raises(ValueError, match="Wrong decision value, where n = 2, but decision is: 5"):
        sch.sample_categorical([1, 2], [0.5, 0.5], decision=5)
    assert len(sch.trace) == 1
    with pytest.raises(TesseraValueError, match="non-negative"):
        tir.Schedule(elementwise, seed=-5)


def test_categorical_probs_print_at_17_digits():
    # Float arguments print as a C++ stream at 17 significant digits: whole numbers lose
    # their ".0" and 0.2 shows its binary rounding.
    sch = tir.Schedule(elementwise)
    sch.sample_categorical([4, 8], [1.0, 0.0], decision=0)
    sch.sample_categorical([1, 2, 3], [0.2, 0.3, 0.5], decision=1)
    lines = sch.trace.as_python()
    assert lines[-2] == "v0 = sch.sample_categorical(candidates=[4, 8], probs=[1, 0], decision=0)"
    assert lines[-1] == ("v1 = sch.sample_categorical(candidates=[1, 2, 3], probs=["
                         "0.20000000000000001, 0.29999999999999999, 0.5], decision=1)")
    # The printed trace still replays to the same schedule.
    replayed = verify_trace_roundtrip(sch, elementwise)
    assert replayed.trace.as_python() == lines


def test_copy_keeps_values_and_forks_the_seed():
    sch = tir.Schedule(elementwise, seed=42)
    rvs = [(rv, sch.get(rv)) for rv in (sch.sample_categorical([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4])
                                        for _ in range(20))]
    copy = sch.copy()
    assert all(copy.get(rv) == value for rv, value in rvs)
    # Both go on drawing (a copy that shared the state would repeat the original's draws).
    i = loops(sch)[2]
    sch.sample_perfect_tile(i, n=4)
    copy.sample_perfect_tile(loops(copy)[2], n=4)


def test_compute_location_candidates_and_replay():
    sch = tir.Schedule(two_stage, seed=42, debug_mask="all")
    seen = collections.Counter()
    for _ in range(200):
        sch.sample_compute_location(sch.get_block("B"))
        seen[sch.trace.as_json()[1][-1][1]] += 1
    # inline, root and the two loops of C.
    assert set(seen) == {-2, -1, 0, 1}
    for count in seen.values():
        assert 30 <= count <= 70
    verify_trace_roundtrip(sch, two_stage)


def test_compute_at_a_sampled_location():
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        for i in range(128):
            for ax0 in range(128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for j in range(128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    @T.prim_func
    def inlined(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    for decision, want in [(0, expected), (-2, inlined), (-1, two_stage)]:
        sch = tir.Schedule(two_stage, debug_mask="all")
        block = sch.get_block("B")
        loc = sch.sample_compute_location(block, decision=decision)
        sch.compute_at(block, loc)
        assert_structural_equal(sch.mod["main"], want.with_attr("global_symbol", sch.mod["main"].attrs["global_symbol"]))
        verify_trace_roundtrip(sch, two_stage)


def test_remove_rv_and_enter_postproc():
    sch = tir.Schedule(elementwise, debug_mask="all")
    b = sch.get_block("B")
    sch.enter_postproc()
    sch.remove_rv(b)
    with pytest.raises(Exception, match="does not belong"):
        sch.get(b)
    assert sch.trace.as_python() == ['b0 = sch.get_block(name="B", func_name="main")',
                                     "sch.enter_postproc()"]
    verify_trace_roundtrip(sch, elementwise)
    fresh = tir.Schedule(elementwise)
    sch.trace.apply_to_schedule(fresh, remove_postproc=True)
    assert fresh.trace.as_python() == sch.trace.as_python()[:1]


def test_core_trace_lists_decisions_by_instruction():
    sch = tir.Schedule(elementwise, seed=1)
    sch.sample_categorical([1, 2], [0.5, 0.5], decision=1)
    sch.sample_perfect_tile(loops(sch)[0], n=2, decision=[4, 32])
    # (index, decision) per sampling instruction; get_block/get_loops have none.
    assert sch._sch.trace.decisions == [(0, 1), (3, [4, 32])]
    # The TVM-form trace keeps them by instruction.
    assert [d for d in sch.trace.decisions.values()] == [1, [4, 32]]


def test_trace_snapshots_share_instructions_and_decisions_are_intimm():
    sch = tir.Schedule(two_stage, seed=7)
    sch.sample_categorical([3, 5, 9], [0.2, 0.3, 0.5])
    first = sch.trace
    sch.get_block("B")
    second = sch.trace
    # The same instruction is the same object in every snapshot, so one indexes the other.
    assert second.insts[0] is first.insts[0]
    decision = second.decisions[first.insts[0]]
    assert isinstance(decision, tir.IntImm) and decision.value in (0, 1, 2)
    # IntImm decisions count by value as dict keys.
    counts = collections.Counter(sch.trace.decisions[sch.trace.insts[0]] for _ in range(3))
    assert list(counts.values()) == [3]


def test_intimm_compares_and_hashes_by_value():
    a, b = tir.IntImm("int32", 4), tir.IntImm("int32", 4)
    assert a == 4 and bool(a == b) and not bool(a != b) and bool(a != 5)
    assert hash(a) == hash(b) and len({a, b}) == 1
