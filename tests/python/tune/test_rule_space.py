"""tessera.tune.RuleSpace: the automatic schedule's rules as the tuner's design space."""

import json
import re
import random

import numpy as np
import pytest

import tessera as ts
from tessera.tir.tensor_intrin import x86
from tessera.script import tir as T
from tessera.tir.schedule import Schedule
from tessera.tir.schedule.trace import Trace
from tessera.tune import RuleSpace

# The AVX2 form of the space where the host has AVX-512 (the compiler told not to use AVX-512F,
# the facts follow), for the tests whose choices are laid out for 8 float lanes.
AVX2_TARGET = "c -mattr=-avx512f" if x86.host_lanes32() == 16 else "c"
LANES = 8 if x86.host_lanes32() == 16 else x86.host_lanes32()


def matmul_func(n, m, k):
    @T.prim_func
    def matmul(A: T.Buffer((n, k), "float32"), B: T.Buffer((k, m), "float32"),
               C: T.Buffer((n, m), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]

    return matmul


@T.prim_func
def add_relu(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32")):
    for i, j in T.grid(64, 256):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj] + T.float32(1), T.float32(0))


def run_matmul(mod, n, m, k, target="c"):
    rng = np.random.default_rng(1)
    a = rng.random((n, k), dtype="float32")
    b = rng.random((k, m), dtype="float32")
    c = np.zeros((n, m), "float32")
    ts.build(mod, target=target)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def sample_count(sch):
    return sum(1 for inst in sch.trace.insts if inst.kind.name == "SampleCategorical")


def test_default_point_is_the_automatic_schedule():
    func = matmul_func(64, 64, 64)
    sch, decisions = RuleSpace(func, "c").default()
    auto = ts.autoschedule(func, target="c")
    ts.ir.assert_structural_equal(sch.mod, auto.mod)
    # every choice with alternatives is recorded, with its decision, in the trace
    assert decisions and sample_count(sch) == len(decisions)
    # the space without sampling at all: the automatic schedule's trace has no sampling
    assert sample_count(auto) == 0


def test_points_replay_from_decisions_and_traces():
    func = matmul_func(96, 64, 128)
    space = RuleSpace(func, "c")
    rng = random.Random(3)
    seen = set()
    for _ in range(6):
        sch, decisions = space.apply(None, seed=rng.randrange(1, 10**6))
        seen.add(tuple(decisions))
        again, same = space.apply(decisions, seed=999)  # decisions given: the seed is unused
        assert same == decisions
        ts.ir.assert_structural_equal(again.mod, sch.mod)
        # the trace (with its sampling decisions) replays through JSON to the same program
        fresh = Schedule(func)
        Trace.apply_json_to_schedule(json.dumps(sch.trace.as_json()), fresh)
        ts.ir.assert_structural_equal(fresh.mod, sch.mod)
    assert len(seen) > 1  # the space has more than one point


@pytest.mark.parametrize("shape", [(64, 64, 64), (48, 80, 40), (128, 32, 256)])
def test_random_points_compute_the_matmul(shape):
    n, m, k = shape
    func = matmul_func(n, m, k)
    space = RuleSpace(func, "c")
    for seed in (1, 17, 123):
        sch, _ = space.apply(None, seed=seed)
        run_matmul(sch.mod, n, m, k)


def test_the_space_packs_either_operand():
    """Some points pack A into row panels, some B into column panels; both compute right."""
    n = m = k = 64
    func = matmul_func(n, m, k)
    space = RuleSpace(func, "c")
    packed = set()
    for seed in range(1, 40):
        sch, _ = space.apply(None, seed=seed)
        names = {b.name_hint for b in _blocks(sch.mod)}
        for name in ("A_global", "B_global"):
            if name in names and name not in packed:
                packed.add(name)
                run_matmul(sch.mod, n, m, k)
        if len(packed) == 2:
            break
    assert packed == {"A_global", "B_global"}


def _blocks(mod):
    out = []
    for _, f in mod.functions:
        ts._core.post_order_visit(f.body, lambda node: out.append(node)
                                  if isinstance(node, ts._core.Block) else None)
    return out


def test_mutation_changes_one_choice():
    func = matmul_func(64, 64, 64)
    space = RuleSpace(func, "c")
    _, decisions = space.default()
    rng = random.Random(0)
    changed = 0
    for _ in range(8):
        sch, mutated = space.mutate(decisions, rng)
        changed += mutated != decisions
        run_matmul(sch.mod, 64, 64, 64)
    assert changed >= 6


def test_neighbours_change_one_choice_each():
    func = matmul_func(64, 64, 64)
    space = RuleSpace(func, "c")
    _, decisions = space.default()
    sizes = space._sizes[tuple(decisions)]
    near = space.neighbours(decisions)
    points = [tuple(d) for _, d in near]
    assert len(points) == len(set(points)) and tuple(decisions) not in points
    # Every other candidate of every choice is there once (a change may reshape what follows).
    assert len(near) <= sum(n - 1 for n in sizes) and len(near) >= sizes[0] - 1
    for k, n in enumerate(sizes):
        for c in range(n):
            if c != decisions[k]:
                assert any(len(d) > k and d[k] == c and list(d[:k]) == decisions[:k] for d in points)
    # the choices take turns: the first neighbours each change another choice
    open_ = sum(1 for n in sizes if n > 1)
    first_change = [next(k for k, c in enumerate(decisions) if k >= len(d) or d[k] != c)
                    for _, d in near[:open_]]
    assert first_change == [k for k, n in enumerate(sizes) if n > 1]
    for sch, d in near[:2]:
        again, same = space.apply(d)
        assert same == d and again.trace.as_json() == sch.trace.as_json()
    run_matmul(near[-1][0].mod, 64, 64, 64)


def test_injective_chunks_and_single_thread_space():
    space = RuleSpace(add_relu, "c")
    a = np.random.default_rng(0).standard_normal((64, 256)).astype("float32")
    for seed in (1, 2, 3):
        sch, _ = space.apply(None, seed=seed)
        b = np.zeros_like(a)
        ts.build(sch.mod, target="c")(a, b)
        np.testing.assert_allclose(b, np.maximum(a + 1, 0))
    serial = RuleSpace(matmul_func(256, 256, 256), "c", parallel=False)
    for seed in (1, 2):
        sch, _ = serial.apply(None, seed=seed)
        assert "T.parallel" not in sch.mod.script()


def test_out_of_range_decisions_are_drawn_again():
    func = matmul_func(64, 64, 64)
    space = RuleSpace(func, "c")
    sch, decisions = space.apply([10**6, -1, None], seed=5)
    assert all(0 <= d for d in decisions)
    run_matmul(sch.mod, 64, 64, 64)


def _alloc_shapes(mod):
    """{buffer name: shape} of the buffers the blocks of ``mod`` allocate."""
    shapes = {}
    for block in _blocks(mod):
        for buf in block.alloc_buffers:
            shapes[buf.name] = [int(s.value) for s in buf.shape]
    return shapes


def test_partial_row_tiles_may_pack_a_into_padded_panels():
    """100 rows in tiles of MR rows leave a partial last tile; packing A into MR-row panels is
    still a choice: the last panel padded with zeros (never read), the product exact."""
    n, m, k = 100, 64, 48
    func = matmul_func(n, m, k)
    space = RuleSpace(func, AVX2_TARGET)
    _, decisions = space.default()
    # the choices: register tile, pack B, pack A, loop order, unroll, column blocks
    assert space._sizes[tuple(decisions)][2] == 2 and decisions[2] == 0
    point = list(decisions)
    point[2] = 1
    sch, taken = space.apply(point)
    assert taken[2] == 1
    shape = _alloc_shapes(sch.mod)["A_global"]
    panels, depth, mr = shape
    assert depth == k and n % mr != 0 and panels == -(-n // mr)  # padded: ceil(n / mr) panels
    run_matmul(sch.mod, n, m, k, AVX2_TARGET)
    # without threads too (the same layout)
    sch1, _ = RuleSpace(func, AVX2_TARGET, parallel=False).apply(point)
    assert _alloc_shapes(sch1.mod)["A_global"] == shape and "T.parallel" not in sch1.mod.script()


def test_column_blocks_per_row_pass():
    """With the columns outside, each row tile may pass over 2, 4 or 8 column panels (the
    rules' choice: 1); B is packed per block of panels; every point computes the product."""
    n, m, k = 96, 256, 64
    func = matmul_func(n, m, k)
    space = RuleSpace(func, AVX2_TARGET)
    _, decisions = space.default()
    sizes = space._sizes[tuple(decisions)]
    # the last choice: the micro-kernel (loops | intrinsic) on 8-lane hosts, after the blocks
    col = -2 if LANES == 8 else -1
    assert decisions[col] == 0 and sizes[col] >= 3  # 256 columns: 16 panels of 16 (AVX2) or 8 of 32
    blocks = [1, 2, 4, 8]
    for c in range(1, sizes[col]):
        point = list(decisions)
        point[col] = c
        sch, taken = space.apply(point)
        assert taken == point
        script = sch.mod.script()
        nr = _alloc_shapes(sch.mod)["B_global"][2]
        # the parallel loop runs over blocks of panels, a block's panels inside the row tiles
        par = [int(x) for x in re.findall(r"in T\.parallel\((\d+)\)", script)]
        assert par == [m // nr // blocks[c]]
        assert re.search(rf"for i_0, j_0_1 in T\.grid\(\d+, {blocks[c]}\)", script)
    run_matmul(sch.mod, n, m, k, AVX2_TARGET)  # the largest block (building each point takes a second)
    # the rows-outside order has no such choice
    point = list(decisions)
    point[3] = 1
    _, rows_outside = space.apply(point)
    assert len(rows_outside) == len(decisions) - 1
