"""tir.LoopPartition: constant loops split where an inner `if` stops being provable (tails)."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T
from tessera.tir import Schedule


def _matmul(m, n, k):
    """C = A @ B of float32 (m, k) x (k, n), one block "C" with its init."""

    @T.prim_func
    def mm(A: T.Buffer((m, k), "float32"), B: T.Buffer((k, n), "float32"),
           C: T.Buffer((m, n), "float32")):
        for i, j, r in T.grid(m, n, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]

    return mm


def test_split_tail_is_peeled(golden):
    @T.prim_func
    def before(A: T.Buffer((10,), "float32")):
        for io in range(3):
            for ii in range(4):
                if io * 4 + ii < 10:
                    A[io * 4 + ii] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((10,), "float32")):
        for io in range(2):
            for ii in range(4):
                A[io * 4 + ii] = T.float32(1)
        for ii in range(2):
            A[ii + 8] = T.float32(1)
        for ii in range(2):  # each part of a partitioned loop starts at 0, as in TVM
            T.evaluate(0)  # provably false on the tail: RemoveNoOp drops the loop later

    golden("LoopPartition", before, expected)


def test_condition_true_everywhere_is_dropped(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for i in range(8):
            if i < 100:
                A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(1)

    golden("LoopPartition", before, expected)


def test_vector_loops_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32")):
        for i in T.vectorized(8):
            if i < 5:
                A[i] = T.float32(2)

    unchanged("LoopPartition", func)


def test_condition_false_first_splits_too(golden):
    # As in TVM: a condition decided false on a prefix partitions the loop as one decided true
    # does (the prefix keeps the else branch, here nothing).
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for i in range(8):
            if i >= 5:
                A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        for i in range(5):
            T.evaluate(0)
        for i in range(3):
            A[i + 5] = T.float32(1)

    golden("LoopPartition", before, expected)


def test_every_decided_condition_bounds_the_part(golden):
    # Three mutually exclusive ranges and a single point: each part runs without tests.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for i in range(16):
            if i < 4:
                A[i] = T.float32(1)
            if 4 <= i and i < 12:
                A[i] = T.float32(2)
            if i == 12:
                A[i] = T.float32(3)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for i in range(4):
            A[i] = T.float32(1)
            T.evaluate(0)
            T.evaluate(0)
        for i in range(8):
            T.evaluate(0)
            A[i + 4] = T.float32(2)
            T.evaluate(0)
        T.evaluate(0)
        T.evaluate(0)
        A[12] = T.float32(3)
        for i in range(3):
            T.evaluate(0)
            T.evaluate(0)
            T.evaluate(0)

    golden("LoopPartition", before, expected)


def test_option_off(unchanged):
    @T.prim_func
    def func(A: T.Buffer((10,), "float32")):
        for io in range(3):
            for ii in range(4):
                if io * 4 + ii < 10:
                    A[io * 4 + ii] = T.float32(1)

    with ts.transform.PassContext(config={"tir.LoopPartition": {"partition_const_loop": False}}):
        unchanged("LoopPartition", func)


def test_uneven_split_builds_without_tests_in_the_main_loop():
    n = 1000

    @T.prim_func
    def func(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(3)

    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(i, [None, 16])
    mod = ts.lower(sch.mod, target="c", stage="loop")
    text = mod.script()
    assert "for i_0 in range(62)" in text or "for i_0, i_1 in T.grid(62, 16)" in text
    assert "if " not in text  # main part proven, tail decided (an empty loop RemoveNoOp drops)
    lib = ts.build(sch.mod, target="c")
    a = np.arange(n, dtype="float32")
    b = np.zeros_like(a)
    lib(a, b)
    np.testing.assert_array_equal(b, a * 3)


def test_register_tile_allocation_moves_above_a_partitioned_row_loop():
    # A 6-row register tile (a `local` cache written back at the row-tile loop) over 20 rows: the
    # tile's allocation opens the body of the serial row-tile loop; it moves above the loop so
    # that the loop splits into 3 full tiles without tests and a tail of 2 rows.
    m, n, k = 20, 16, 8

    sch = Schedule(_matmul(m, n, k))
    block = sch.get_block("C")
    i, j, r = sch.get_loops(block)
    wb = sch.cache_write(block, 0, "local")
    io, ii = sch.split(i, [None, 6])
    sch.reorder(io, r, ii, j)
    sch.reverse_compute_at(wb, io)
    sch.unroll(ii)
    sch.decompose_reduction(block, r)
    text = ts.lower(sch.mod, target="c", stage="loop").script()
    assert "for i_0 in range(3)" in text
    assert "if " not in text
    # One allocation: `T.allocate(...)`, or `T.decl_buffer(...)` without data= (the printed form
    # of an allocation with its buffer).
    allocations = [line for line in text.splitlines()
                   if "T.allocate(" in line or ("T.decl_buffer(" in line and "data=" not in line)]
    assert len(allocations) == 1
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")
    c = np.zeros((m, n), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)



def _tile_rows_outside_columns(parallel_columns):
    """A 6-row register tile over 20 rows with the rows outside the columns (a batched
    product's order): the tile is allocated in the body of the column loop."""
    m, n, k = 20, 16, 8

    sch = Schedule(_matmul(m, n, k))
    block = sch.get_block("C")
    i, j, r = sch.get_loops(block)
    wb = sch.cache_write(block, 0, "local")
    io, ii = sch.split(i, [None, 6])
    jo, ji = sch.split(j, [None, 8])
    sch.reorder(io, jo, r, ii, ji)
    sch.reverse_compute_at(wb, jo)
    sch.unroll(ii)
    if parallel_columns:
        sch.parallel(jo)
    sch.decompose_reduction(block, r)
    return sch.mod


def _allocations(text):
    # `T.allocate(...)`, or `T.decl_buffer(...)` without data= (an allocation with its buffer)
    return [line for line in text.splitlines()
            if "T.allocate(" in line or ("T.decl_buffer(" in line and "data=" not in line)]


@pytest.mark.parametrize("parallel_columns", [False, True])
def test_register_tile_allocation_moves_out_of_a_serial_column_loop(parallel_columns):
    # Serial columns: the allocation, in the body of the column loop that is the whole body of
    # the row-tile loop, moves above the row loop, which splits into 3 full tiles without tests
    # and a tail. Parallel columns: each iteration (thread) keeps its own tile, so the
    # allocation stays in the parallel loop and the row loop keeps its tests.
    mod = _tile_rows_outside_columns(parallel_columns)
    text = ts.lower(mod, target="c", stage="loop").script()
    (alloc,) = _allocations(text)
    if parallel_columns:
        assert "if " in text
        assert text.index("T.parallel(") < text.index(alloc)
    else:
        assert "for i_0, j_0 in T.grid(3, 2)" in text
        assert "if " not in text
        assert text.index(alloc) < text.index("for i_0, j_0 in T.grid(3, 2)")
    lib = ts.build(mod, target="c")
    rng = np.random.default_rng(0)
    a, b = rng.random((20, 8), dtype="float32"), rng.random((8, 16), dtype="float32")
    c = np.zeros((20, 16), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_parts_start_at_zero_and_partition_hints_go(golden):
    # As TVM makes them: each part is a loop from 0 over its own iterations (the variable
    # shifted in the body), keeping the loop's other annotations; "pragma_loop_partition_hint"
    # is dropped everywhere once partitioning is done.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for i in T.serial(16, annotations={"pragma_loop_partition_hint": 1, "key": "value"}):
            if i < 10:
                A[i] = T.float32(1)
        for j in T.serial(4, annotations={"pragma_loop_partition_hint": 1}):
            A[j] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for i in T.serial(10, annotations={"key": "value"}):
            A[i] = T.float32(1)
        for i in T.serial(6, annotations={"key": "value"}):
            T.evaluate(0)
        for j in range(4):
            A[j] = T.float32(2)

    golden("LoopPartition", before, expected)


def test_one_iteration_part_is_inlined_unless_annotated(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for i in range(4):
            if i < 3:
                A[i] = T.float32(1)
        for i in T.serial(4, annotations={"key": "value"}):
            if i < 3:
                A[i + 4] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        for i in range(3):
            A[i] = T.float32(1)
        T.evaluate(0)
        for i in T.serial(3, annotations={"key": "value"}):
            A[i + 4] = T.float32(1)
        for i in T.serial(1, annotations={"key": "value"}):
            T.evaluate(0)

    golden("LoopPartition", before, expected)


def test_likely_and_ignore_marks_go_without_partitioning(golden):
    with ts.transform.PassContext(config={"tir.LoopPartition": {"partition_const_loop": False}}):
        @T.prim_func
        def before(A: T.Buffer((8,), "float32")):
            for i in range(8):
                if T.likely(i < 4):
                    A[i] = T.float32(1)
                if T.ignore_loop_partition(i < 2):
                    A[i] = T.float32(2)

        @T.prim_func
        def expected(A: T.Buffer((8,), "float32")):
            for i in range(8):
                if i < 4:
                    A[i] = T.float32(1)
                if i < 2:
                    A[i] = T.float32(2)

        golden("LoopPartition", before, expected)


def test_loop_with_a_break_or_continue_is_not_split(unchanged):
    @T.prim_func
    def func(A: T.Buffer((1,), "int32")):
        for i in range(5):
            if i == 1:
                T.continue_loop()
            if i == 3:
                T.break_loop()
            A[0] = A[0] + 100

    unchanged("LoopPartition", func)


def test_enclosing_loop_ranges_decide_the_conditions(golden):
    # k has one value (0): `k * 8 + i < 5` is `i < 5`, and the inner loop splits there.
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for k in T.serial(1, annotations={"key": "value"}):
            for i in range(8):
                if k * 8 + i < 5:
                    A[i] = T.float32(1)
                else:
                    A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        for k in T.serial(1, annotations={"key": "value"}):
            for i in range(5):
                A[i] = T.float32(1)
            for i in range(3):
                A[i + 5] = T.float32(2)

    golden("LoopPartition", before, expected)


def test_enclosing_loop_ranges_partition_builds_and_matches_numpy():
    @T.prim_func
    def func(A: T.Buffer((4, 8), "float32")):
        for k in range(4):
            for i in range(8):
                if k + i < 6:
                    A[k, i] = T.float32(1)
                else:
                    A[k, i] = T.float32(2)

    a = np.zeros((4, 8), dtype="float32")
    ts.build(func, target="c")(a)
    k, i = np.meshgrid(np.arange(4), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(a, np.where(k + i < 6, 1, 2).astype("float32"))


def test_conjunction_terms_are_decided_one_by_one(golden):
    # A partial row tile's test beside a partial column tile's (`i < M and j < N`): the row loop
    # splits where its own term stops being provable; the column term stays in the main part.
    @T.prim_func
    def before(A: T.Buffer((10, 7), "float32")):
        for io in range(3):
            for j in range(8):
                if io * 4 < 10 - 3 and j < 7:
                    A[io, j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((10, 7), "float32")):
        for io in range(2):
            for j in range(7):
                A[io, j] = T.float32(1)
            T.evaluate(0)
        for j in range(8):
            T.evaluate(0)

    golden("LoopPartition", before, expected)


def _tile_rows_outside_parallel(m, n, k, mr, nr):
    """An mr x nr register tile, the rows outside (parallel) and the columns inside, both
    partial (m % mr and n % nr not 0): the tile is allocated in the body of the parallel loop."""

    sch = Schedule(_matmul(m, n, k))
    block = sch.get_block("C")
    i, j, r = sch.get_loops(block)
    wb = sch.cache_write(block, 0, "local")
    io, ii = sch.split(i, [None, mr])
    jo, ji = sch.split(j, [None, nr])
    sch.reorder(io, jo, r, ii, ji)
    sch.reverse_compute_at(wb, jo)
    sch.unroll(ii)
    sch.parallel(io)
    sch.decompose_reduction(block, r)
    return sch.mod


@pytest.mark.parametrize("m,n,k,mr,nr", [(20, 16, 8, 6, 8), (127, 129, 5, 5, 16), (7, 9, 3, 3, 4)])
def test_parallel_row_loop_with_a_register_tile_splits_with_its_own_tail_tile(m, n, k, mr, nr):
    # Each iteration (thread) of the parallel row loop allocates its own tile: the loop splits
    # into the full row tiles (parallel, no row test left) and the tail, whose tile is a new
    # allocation (renewed definitions), so that no full tile tests its rows.
    mod = _tile_rows_outside_parallel(m, n, k, mr, nr)
    text = ts.lower(mod, target="c", stage="loop").script()
    assert f"T.parallel({m // mr})" in text
    assert len(_allocations(text)) == 2  # the parallel loop's tile and the tail's
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if "T.parallel(" in line)
    indent = len(lines[at]) - len(lines[at].lstrip())
    body = []
    for line in lines[at + 1:]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    assert not any(line.strip().startswith("if ") for line in body)
    lib = ts.build(mod, target="c")
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")
    c = np.zeros((m, n), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
