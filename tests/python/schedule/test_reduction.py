"""decompose_reduction and rfactor."""

from tessera.script import tir as T


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def rowsum(A: T.Buffer((16, 128), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 128):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_decompose_reduction_at_the_spatial_loop(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        for i in T.serial(64):
            for j_init in T.serial(64):
                with T.block("C_init"):
                    vi, vj = T.axis.remap("SS", [i, j_init])
                    C[vi, vj] = T.float32(0)
            for j, k in T.grid(64, 64):
                with T.block("C_update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    def apply(sch):
        c = sch.get_block("C")
        init = sch.decompose_reduction(c, sch.get_loops(c)[1])
        assert sch.get(init).name_hint == "C_init"
        assert sch.get(c).name_hint == "C_update"

    golden(matmul, expected, apply)


def test_decompose_reduction_at_the_reduction_loop(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        for i, j in T.grid(64, 64):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.float32(0)
            for k in T.serial(64):
                with T.block("C_update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    golden(matmul, expected,
           lambda sch: sch.decompose_reduction(sch.get_block("C"), sch.get_loops(sch.get_block("C"))[2]))


def test_decompose_reduction_with_a_spatial_predicate(golden):
    @T.prim_func
    def before(A: T.Buffer((10, 8), "float32"), B: T.Buffer((10,), "float32")):
        for i_0, i_1, k in T.grid(3, 4, 8):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 4 + i_1)
                vk = T.axis.reduce(8, k)
                T.where(i_0 * 4 + i_1 < 10)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((10, 8), "float32"), B: T.Buffer((10,), "float32")):
        for i_0 in T.serial(3):
            for i_1_init in T.serial(4):
                with T.block("B_init"):
                    vi = T.axis.spatial(10, i_0 * 4 + i_1_init)
                    T.where(i_0 * 4 + i_1_init < 10)
                    B[vi] = T.float32(0)
            for i_1, k in T.grid(4, 8):
                with T.block("B_update"):
                    vi = T.axis.spatial(10, i_0 * 4 + i_1)
                    vk = T.axis.reduce(8, k)
                    T.where(i_0 * 4 + i_1 < 10)
                    B[vi] = B[vi] + A[vi, vk]

    golden(before, expected,
           lambda sch: sch.decompose_reduction(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[1]))


def test_rfactor(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 128), "float32"), B: T.Buffer((16,), "float32")):
        B_rf = T.alloc_buffer((4, 16))
        for i, k_0, k_1 in T.grid(16, 32, 4):
            with T.block("B_rf"):
                # The reduction over k_0 * 4 + k_1 is rewritten over k_0 alone.
                vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                with T.init():
                    B_rf[vk_1, vi] = T.float32(0)
                B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
        for i, k_1 in T.grid(16, 4):
            with T.block("B"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vk_1, vi]

    def apply(sch):
        _, k = sch.get_loops(sch.get_block("B"))
        _, k1 = sch.split(k, factors=[None, 4])
        rf = sch.rfactor(k1, 0)
        assert sch.get(rf).name_hint == "B_rf"

    golden(rowsum, expected, apply)


def test_rfactor_whole_reduction_loop_on_the_last_axis(golden):
    @T.prim_func
    def maximum(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(-3.4028234663852886e38)
                B[vi] = T.max(B[vi], A[vi, vk])

    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
        B_rf = T.alloc_buffer((16, 8))
        for i, k in T.grid(16, 8):
            with T.block("B_rf"):
                # No reduction left in the rfactor block: each partial result is one value (TVM).
                vk, vi = T.axis.remap("SS", [k, i])
                B_rf[vi, vk] = A[vi, vk]
        for i, k in T.grid(16, 8):
            with T.block("B"):
                vk, vi = T.axis.remap("RS", [k, i])
                with T.init():
                    B[vi] = T.float32(-3.4028234663852886e38)
                B[vi] = T.max(B[vi], B_rf[vi, vk])

    golden(maximum, expected, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], -1))


def test_rfactor_inlines_a_let_in_the_update(golden):
    @T.prim_func
    def with_let(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        for i, k0, k1 in T.grid(8, 4, 4):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(16, k0 * 4 + k1)
                with T.init():
                    B[vi] = T.float32(0)
                acc: T.float32 = B[vi] + A[vi, vk] * T.float32(3)
                B[vi] = acc

    @T.prim_func
    def expected(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        B_rf = T.alloc_buffer((8, 4))
        for i, k0, k1 in T.grid(8, 4, 4):
            with T.block("B_rf"):
                vk1, vi, vk0 = T.axis.remap("SSR", [k1, i, k0])
                with T.init():
                    B_rf[vi, vk1] = T.float32(0)
                B_rf[vi, vk1] = B_rf[vi, vk1] + A[vi, vk0 * 4 + vk1] * T.float32(3)
        for i, k1 in T.grid(8, 4):
            with T.block("B"):
                vk1, vi = T.axis.remap("RS", [k1, i])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vi, vk1]

    golden(with_let, expected, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[2], 1))


def test_rfactor_over_a_unit_loop_and_unit_loops_kept(golden):
    @T.prim_func
    def unit(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        for u, i, k, w in T.grid(1, 4, 6, 1):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        B_rf = T.alloc_buffer((1, 4))
        for u, i, k, w in T.grid(1, 4, 6, 1):
            with T.block("B_rf"):
                vw, vi, vk = T.axis.remap("SSR", [w, i, k])
                with T.init():
                    B_rf[vw, vi] = T.float32(0)
                B_rf[vw, vi] = B_rf[vw, vi] + A[vi, vk]
        for u, i, w in T.grid(1, 4, 1):
            with T.block("B"):
                vw, vi = T.axis.remap("RS", [w, i])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vw, vi]

    # The unit loop w serves no iterator; the unit loop u stays around the write-back block.
    golden(unit, expected, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[3], 0))


def test_rfactor_of_a_scalar_keeps_an_int64_offset(golden):
    @T.prim_func
    def total(A: T.Buffer((8,), "float32"), B: T.Buffer((), "float32")):
        for k in range(8):
            with T.block("B"):
                vk = T.axis.reduce(8, k)
                with T.init():
                    B[()] = T.float32(0)
                B[()] = B[()] + A[vk]

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((), "float32")):
        B_rf = T.alloc_buffer((8,), elem_offset=T.int64(0))
        for k in range(8):
            with T.block("B_rf"):
                vk = T.axis.spatial(8, k)
                B_rf[vk] = A[vk]
        for k in range(8):
            with T.block("B"):
                vk = T.axis.reduce(8, k)
                with T.init():
                    B[()] = T.float32(0)
                B[()] = B[()] + B_rf[vk]

    golden(total, expected, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[0], 0))


def test_rfactor_unbound_loop_of_extent_two_is_refused(schedule_error):
    @T.prim_func
    def extra(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
        for i, k, w in T.grid(4, 6, 2):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(extra, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[2], 0), "rfactor")


# ---- checks ----


def test_decompose_reduction_loop_below_a_reduction_loop(schedule_error):
    @T.prim_func
    def k_outside(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for k, i in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(k_outside,
                   lambda sch: sch.decompose_reduction(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[1]),
                   "decompose_reduction", "to be above every loop bound to a reduction iterator")


def test_decompose_reduction_of_a_block_without_init(schedule_error):
    @T.prim_func
    def no_init(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("A"):
                vi = T.axis.spatial(16, i)
                A[vi] = T.float32(0)

    schedule_error(no_init,
                   lambda sch: sch.decompose_reduction(sch.get_block("A"), sch.get_loops(sch.get_block("A"))[0]),
                   "decompose_reduction", "needs a reduction block, but tir.Block#0 has no init statement")


def test_decompose_reduction_loop_not_above_the_block(schedule_error):
    @T.prim_func
    def two(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = T.float32(0)
        for i, k in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(two,
                   lambda sch: sch.decompose_reduction(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]),
                   "decompose_reduction", "is not an ancestor of block tir.Block#0")


def test_rfactor_spatial_loop(schedule_error):
    schedule_error(rowsum, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[0], 0), "rfactor",
                   "is bound to the spatial iterator 'vi'")


def test_rfactor_non_serial_loop(schedule_error):
    def setup(sch):
        sch.unroll(sch.get_loops(sch.get_block("B"))[1])

    schedule_error(rowsum, lambda sch, _: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0), "rfactor",
                   "rfactor needs a serial loop, but tir.For#0 is unroll", setup=setup)


def test_rfactor_factor_axis_out_of_range(schedule_error):
    schedule_error(rowsum, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 2), "rfactor",
                   "The factor_axis 2 is out of range [-2, 1]")


def test_rfactor_unknown_reducer(schedule_error):
    @T.prim_func
    def weird(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] * T.float32(0.5) + A[vi, vk]

    schedule_error(weird, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0), "rfactor",
                   "is not a known reducer")


def test_rfactor_of_a_block_that_is_not_a_reduction(schedule_error):
    @T.prim_func
    def no_init(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(no_init, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0), "rfactor",
                   "tir.Block#0 is not one: it has no init statement")


def test_rfactor_write_back_goes_before_a_consumer_in_the_same_nest(golden):
    @T.prim_func
    def fused(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            for k in T.serial(8):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        B_rf = T.alloc_buffer((8, 16))
        for i in T.serial(16):
            for k in T.serial(8):
                with T.block("B_rf"):
                    vk, vi = T.axis.remap("SS", [k, i])
                    B_rf[vk, vi] = A[vi, vk]
            for k in T.serial(8):
                with T.block("B"):
                    vk, vi = T.axis.remap("RS", [k, i])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + B_rf[vk, vi]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi] * T.float32(2)

    golden(fused, expected, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0))


def test_reduction_reads_are_spelled_as_in_tvm(golden):
    # TVM spells a reduction block's reads without the buffer it accumulates into; once the init
    # is split off, the update block reads that buffer back first.
    @T.prim_func
    def explicit(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        for i, j in T.grid(64, 64):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(C[vi, vj])
                C[vi, vj] = T.float32(0)
            for k in T.serial(64):
                with T.block("C_update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    golden(matmul, explicit, lambda sch: None)

    def apply(sch):
        c = sch.get_block("C")
        assert [str(r.buffer.name) for r in sch.get(c).reads] == ["A", "B"]
        sch.decompose_reduction(c, sch.get_loops(c)[2])
        assert [str(r.buffer.name) for r in sch.get(c).reads] == ["C", "A", "B"]

    golden(matmul, expected, apply)


def test_rfactor_over_a_split_that_overhangs_reads_only_initialized_partials():
    # Found by tests/fuzz: rfactor of the inner loop of a 3 = ceil(3/7)*7 split; the write-back
    # block summed all 7 partial rows, 4 of which the predicated rf block never initialized.
    import numpy as np

    import tessera as ts
    from tessera import tir

    @T.prim_func
    def rowsum(B: T.Buffer((10, 3), "int32"), C: T.Buffer((10,), "int16")):
        for i, k in T.grid(10, 3):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.int16(0)
                C[vi] = C[vi] + T.Cast("int16", B[vi, vk])

    sch = tir.Schedule(rowsum)
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    sch.reorder(k, i)
    k0, k1 = sch.split(k, factors=[None, 7])
    sch.rfactor(k1, factor_axis=0)
    assert "T.where(k_1 < 3)" in sch.mod.script()
    b = (np.arange(30).reshape(10, 3) % 7 - 3).astype("int32")
    for _ in range(3):  # the partials live in a fresh allocation: garbage shows in some run
        c = np.full(10, 99, "int16")
        ts.build(sch.mod, target="c")(b, c)
        np.testing.assert_array_equal(c, b.sum(1))


def test_rfactor_needs_the_identity_as_init(schedule_error):
    @T.prim_func
    def rowsum_from_one(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(1)
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(rowsum_from_one, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0),
                   "rfactor", "stores T.float32(1.0), which is not the identity T.float32(0.0) of its sum update")


def test_rfactor_of_a_float_max_from_minus_infinity():
    # -inf is an identity of a float max (TVM's is the lowest finite value): the partial
    # results start from it, so a row of only -inf gives -inf, not -FLT_MAX.
    import numpy as np

    import tessera as ts
    from tessera import tir

    @T.prim_func
    def rowmax(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 32):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32("-inf")
                B[vi] = T.max(B[vi], A[vi, vk])

    sch = tir.Schedule(rowmax)
    _, k = sch.get_loops(sch.get_block("B"))
    _, k1 = sch.split(k, factors=[None, 8])
    sch.rfactor(k1, factor_axis=0)
    assert sch.mod.script().count('T.float32("-inf")') == 2  # the partials' init and B's
    a = np.random.default_rng(0).standard_normal((4, 32)).astype("float32")
    a[1, :] = -np.inf
    a[2, :] = np.float32(-3.0e38)
    a[2, 5] = -np.inf
    b = np.zeros(4, "float32")
    ts.build(sch.mod, target="c")(a, b)
    np.testing.assert_array_equal(b, a.max(axis=1))


def test_rfactor_init_and_update_must_write_the_same_element(schedule_error):
    @T.prim_func
    def transposed(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        for i, j, k in T.grid(8, 8, 8):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    B[vi, vj] = T.float32(0)
                B[vj, vi] = B[vj, vi] + A[vi, vk]

    schedule_error(transposed, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[2], 0),
                   "rfactor", "stores to B[vi, vj] but its update to B[vj, vi]")


def test_rfactor_loop_serving_both_kinds_of_iterators(schedule_error):
    @T.prim_func
    def fused(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        for f, ki in T.grid(16, 4):
            with T.block("B"):
                vi = T.axis.spatial(8, f // 2)
                vk = T.axis.reduce(8, f % 2 * 4 + ki)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(fused, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0),
                   "rfactor", "is bound to both data-parallel and reduction iterators")
