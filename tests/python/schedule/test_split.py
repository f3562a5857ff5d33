"""split: a loop becomes nested loops whose extents are the factors."""

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def ten(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in T.serial(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] + T.float32(1)


def inner_split(sch):
    _, j = sch.get_loops(sch.get_block("B"))
    sch.split(j, factors=[None, 16])


def test_split_infers_the_none_factor(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i, j_0, j_1 in T.grid(128, 8, 16):
            with T.block("B"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 16 + j_1)
                B[vi, vj] = A[vi, vj] * T.float32(2)

    golden(elementwise, expected, inner_split)


def test_split_into_three(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i_0, i_1, i_2, j in T.grid(2, 16, 4, 128):
            with T.block("B"):
                vi = T.axis.spatial(128, i_0 * 64 + i_1 * 4 + i_2)
                vj = T.axis.spatial(128, j)
                B[vi, vj] = A[vi, vj] * T.float32(2)

    def apply(sch):
        i, _ = sch.get_loops(sch.get_block("B"))
        loops = sch.split(i, factors=[2, None, 4])
        assert [sch.get(l).extent.value for l in loops] == [2, 16, 4]

    golden(elementwise, expected, apply)


def test_split_that_does_not_divide_adds_a_predicate(golden):
    @T.prim_func
    def expected(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
        for i_0, i_1 in T.grid(3, 4):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < 10)
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[None, 4])

    golden(ten, expected, apply)

    def apply_given(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[3, 4])

    golden(ten, expected, apply_given)


def test_split_predicate_keeps_the_loops_nesting(golden):
    # As TVM: the binding is simplified, the predicate is the nested form the split wrote.
    @T.prim_func
    def expected(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
        for i_0, i_1, i_2 in T.grid(2, 3, 2):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 6 + i_1 * 2 + i_2)
                T.where((i_0 * 3 + i_1) * 2 + i_2 < 10)
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[2, 3, 2])

    golden(ten, expected, apply)


def test_split_symbolic_extent_four_factors(golden):
    # As TVM: each loop times its scale (one expression) in the binding, the nested form in the
    # predicate.
    @T.prim_func
    def before(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in T.serial(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def expected(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i_0, i_1, i_2, i_3 in T.grid(2, (n + 63) // 64, 4, 8):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * ((n + 63) // 64 * 32) + i_1 * 32 + i_2 * 8 + i_3)
                T.where(((i_0 * ((n + 63) // 64) + i_1) * 4 + i_2) * 8 + i_3 < n)
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[2, None, 4, 8])

    golden(before, expected, apply)


def test_split_without_predication(golden):
    @T.prim_func
    def expected(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
        for i_0, i_1 in T.grid(5, 2):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 2 + i_1)
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[None, 2], disable_predication=True)

    golden(ten, expected, apply)


def test_split_without_predication_past_a_constant_extent(schedule_error):
    # TVM builds the 12 iterations of 3 x 4 over 10 elements and writes past B (a crash or a
    # corrupted heap); tessera refuses the split.
    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[3, 4], disable_predication=True)

    schedule_error(ten, apply, "split", "cover 12 iterations but its extent is 10",
                   "Drop disable_predication=True")


def test_split_unit_factor_and_preserve_unit_iters(golden):
    @T.prim_func
    def preserved(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
        for i_0, i_1 in T.grid(1, 10):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 10 + i_1)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def dropped(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
        for i_0, i_1 in T.grid(1, 10):
            with T.block("B"):
                vi = T.axis.spatial(10, i_1)
                B[vi] = A[vi] + T.float32(1)

    def apply(preserve):
        def run(sch):
            (i,) = sch.get_loops(sch.get_block("B"))
            sch.split(i, factors=[1, None], preserve_unit_iters=preserve)

        return run

    golden(ten, preserved, apply(True))
    golden(ten, dropped, apply(False))


def test_split_symbolic_extent(golden):
    @T.prim_func
    def before(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in T.serial(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def expected(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i_0, i_1 in T.grid((n + 7) // 8, 8):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * 8 + i_1)
                T.where(i_0 * 8 + i_1 < n)
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[None, 8])

    golden(before, expected, apply)


def test_split_trace_spells_every_argument():
    from tessera import tir

    sch = tir.Schedule(elementwise)
    inner_split(sch)
    assert sch.trace.as_python() == [
        'b0 = sch.get_block(name="B", func_name="main")',
        "l1, l2 = sch.get_loops(block=b0)",
        "l3, l4 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True, "
        "disable_predication=False)",
    ]


# ---- checks ----


def test_split_loop_not_starting_at_zero(schedule_error):
    @T.prim_func
    def shifted(A: T.Buffer((130,), "float32")):
        for i in range(2, 130):
            with T.block("A"):
                vi = T.axis.spatial(130, i)
                A[vi] = T.float32(0)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("A"))
        sch.split(i, factors=[None, 4])

    message = schedule_error(shifted, apply, "split",
                             "the loop tir.For#0 must start at 0")
    assert "# tir.For#0\n            for i in range(2, 130):\n" in message


def test_split_annotated_loop(schedule_error):
    @T.prim_func
    def annotated(A: T.Buffer((128,), "float32")):
        for i in T.serial(128, annotations={"pragma_unroll": 1}):
            with T.block("A"):
                vi = T.axis.spatial(128, i)
                A[vi] = T.float32(0)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("A"))
        sch.split(i, factors=[None, 4])

    schedule_error(annotated, apply, "split", "has annotations and cannot be changed")


def test_split_thread_bound_loop(schedule_error):
    @T.prim_func
    def bound(A: T.Buffer((128,), "float32")):
        for i in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("A"):
                vi = T.axis.spatial(128, i)
                A[vi] = T.float32(0)

    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("A"))
        sch.split(i, factors=[None, 4])

    schedule_error(bound, apply, "split", "is bound to a thread axis")


def test_split_two_none_factors(schedule_error):
    def apply(sch):
        _, j = sch.get_loops(sch.get_block("B"))
        sch.split(j, factors=[None, 4, -1])

    schedule_error(elementwise, apply, "split", "can be None (or -1)")


def test_split_factor_must_be_positive(schedule_error):
    def apply(sch):
        _, j = sch.get_loops(sch.get_block("B"))
        sch.split(j, factors=[None, 0])

    schedule_error(elementwise, apply, "split", "The split factor must be positive",
                   "factor 1 of tir.For#0 is 0")


def test_split_product_must_cover_the_extent(schedule_error):
    def apply(sch):
        _, j = sch.get_loops(sch.get_block("B"))
        sch.split(j, factors=[4, 16])

    schedule_error(elementwise, apply, "split",
                   "the split factors may not cover the loop tir.For#0: their product (64) is "
                   "not provably at least its extent (128)")


def test_split_needs_two_factors(schedule_error):
    def apply(sch):
        _, j = sch.get_loops(sch.get_block("B"))
        sch.split(j, factors=[128])

    schedule_error(elementwise, apply, "split", "at least two factors")
