"""tir.VectorizeLoop: T.vectorized loops become Ramp/Broadcast vector code."""

import pytest

import tessera as ts
from tessera import _core
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def _main(func):
    return func.with_attr("global_symbol", _core.StringImm("main"))


def _run(pass_, func):
    return pass_(_core.IRModule.from_func(_main(func), "main")).lookup("main")


def test_elementwise_loop_becomes_vector_statement(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for io in T.serial(4):
            for ii in T.vectorized(16):
                B[io * 16 + ii] = A[io * 16 + ii] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for io in T.serial(4):
            B[T.Ramp(io * 16, 1, 16)] = A[T.Ramp(io * 16, 1, 16)] * T.Broadcast(T.float32(2), 16)

    golden("VectorizeLoop", before, expected)


def test_long_loop_is_one_vector_of_its_extent(golden):
    # As TVM: the pass itself never splits; tir.SplitVectorizedLoops does that in a build.
    @T.prim_func
    def before(A: T.Buffer((64,), "int32")):
        for i in T.vectorized(64):
            A[i] = i

    @T.prim_func
    def expected(A: T.Buffer((64,), "int32")):
        A[T.Ramp(0, 1, 64)] = T.Ramp(0, 1, 64)

    golden("VectorizeLoop", before, expected)


def test_split_vectorized_loops_chunks_long_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "int32")):
        for i in T.vectorized(64):
            A[i] = i

    @T.prim_func
    def split(A: T.Buffer((64,), "int32")):
        for i_outer in T.serial(4):
            for i in T.vectorized(16):
                A[i_outer * 16 + i] = i_outer * 16 + i

    @T.prim_func
    def expected(A: T.Buffer((64,), "int32")):
        for i_outer in T.serial(4):
            A[T.Ramp(i_outer * 16, 1, 16)] = T.Ramp(i_outer * 16, 1, 16)

    golden("SplitVectorizedLoops", before, split)
    golden("VectorizeLoop", split, expected)


def test_strided_access_and_invariant_operand(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in T.vectorized(8):
            B[i] = A[i * 4] + x

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        B[T.Ramp(0, 1, 8)] = A[T.Ramp(0, 4, 8)] + T.Broadcast(x, 8)

    golden("VectorizeLoop", before, expected)


def test_reduction_store_broadcasts_its_index(golden):
    # TVM's rule: a vector value stored at a scalar index broadcasts the index.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
        for i in T.vectorized(16):
            B[0] = B[0] + A[i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
        B[T.Broadcast(0, 16)] = T.Broadcast(B[0], 16) + A[T.Ramp(0, 1, 16)]

    golden("VectorizeLoop", before, expected)


def test_split_vectorized_loops_makes_a_reduction_serial(golden):
    # What a host build cannot run as vector code keeps a serial loop there.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
        for i in T.vectorized(16):
            B[0] = B[0] + A[i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
        for i in T.serial(16):
            B[0] = B[0] + A[i]

    golden("SplitVectorizedLoops", before, expected)


def test_vector_condition_scalarizes_the_if(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for i in T.vectorized(16):
            if i < 8:
                A[i] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            if i < 8:
                A[i] = T.float32(0)

    golden("VectorizeLoop", before, expected)


def test_disable_vectorize_keeps_serial_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for i in T.vectorized(16):
            A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            A[i] = T.float32(1)

    with ts.transform.PassContext(config={"tir.disable_vectorize": True}):
        golden("VectorizeLoop", before, expected)


def test_math_intrinsics_are_vectorized_lane_wise(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.vectorized(8):
            B[i] = T.exp(A[i]) + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        B[T.Ramp(0, 1, 8)] = T.exp(A[T.Ramp(0, 1, 8)]) + T.Broadcast(T.float32(1), 8)

    golden("VectorizeLoop", before, expected)


def test_max_vector_bits_sets_the_chunk_width(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "float32")):
        for i in T.vectorized(32):
            A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32")):
        for i_outer in T.serial(4):
            A[T.Ramp(i_outer * 8, 1, 8)] = T.Broadcast(T.float32(1), 8)

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": 256}}):
        golden("VectorizeLoop", before, expected)


def test_max_vector_bits_counts_the_widest_element(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float64"), B: T.Buffer((8,), "float32")):
        for i in T.vectorized(8):
            A[i] = T.Cast("float64", B[i])

    @T.prim_func
    def expected(A: T.Buffer((8,), "float64"), B: T.Buffer((8,), "float32")):
        for i_outer in T.serial(2):
            A[T.Ramp(i_outer * 4, 1, 4)] = T.Cast("float64x4", B[T.Ramp(i_outer * 4, 1, 4)])

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": 256}}):
        golden("VectorizeLoop", before, expected)


def test_host_target_uses_the_native_width():
    from tessera import _core

    bits = _core.host_vector_bits()
    assert bits in (128, 256, 512)

    @T.prim_func
    def func(A: T.Buffer((64,), "float32")):
        for i in T.vectorized(64):
            A[i] = T.float32(1)

    text = ts.lower(func, target="c", stage="loop").script()
    lanes = bits // 32
    assert f"for i_outer in range({64 // lanes})" in text
    assert f"T.Broadcast(T.float32(1.0), {lanes})" in text


def test_only_the_statements_that_need_it_are_scalarized(golden):
    # A vector `if` condition or T.if_then_else condition runs that statement lane by lane; an
    # invariant `if` keeps both branches vectorized, with lets, math and selects widened.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32,
               x: T.float32):
        for i in T.vectorized(16):
            B[i] = A[i] * x
            if i < n:
                A[i] = T.float32(0)
            if n > 3:
                B[i] = T.if_then_else(i < 4, A[i], x)
            else:
                v = A[i] + x
                B[i] = T.exp(v) + T.Select(A[i] > x, v, x)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32,
                 x: T.float32):
        B[T.Ramp(0, 1, 16)] = A[T.Ramp(0, 1, 16)] * T.Broadcast(x, 16)
        for i_s in range(16):
            if i_s < n:
                A[i_s] = T.float32(0)
        if n > 3:
            for i_s in range(16):
                B[i_s] = T.if_then_else(i_s < 4, A[i_s], x)
        else:
            v: T.float32x16 = A[T.Ramp(0, 1, 16)] + T.Broadcast(x, 16)
            B[T.Ramp(0, 1, 16)] = T.exp(v) + T.Select(
                A[T.Ramp(0, 1, 16)] > T.Broadcast(x, 16), v, T.Broadcast(x, 16))

    golden("VectorizeLoop", before, expected)


def test_invariant_if_then_else_condition_stays_vector(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in T.vectorized(8):
            A[i] = T.if_then_else(n > 0, A[i], T.float32(0))

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), n: T.int32):
        A[T.Ramp(0, 1, 8)] = T.if_then_else(n > 0, A[T.Ramp(0, 1, 8)],
                                            T.Broadcast(T.float32(0), 8))

    golden("VectorizeLoop", before, expected)


def test_buffer_level_predication_replaces_a_tail_condition():
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i0 in T.serial(4):
            for i1 in T.vectorized(4):
                if i0 * 4 + i1 < 14:
                    B[i0 * 4 + i1] = A[i0 * 4 + i1] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i0 in T.serial(4):
            B.vstore([T.Ramp(i0 * 4, 1, 4)],
                     A.vload([T.Ramp(i0 * 4, 1, 4)],
                             predicate=T.get_active_lane_mask("uint1x4", i0 * 4, 14))
                     + T.Broadcast(T.float32(1), 4),
                     predicate=T.get_active_lane_mask("uint1x4", i0 * 4, 14))

    @T.prim_func
    def scalarized(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i0 in T.serial(4):
            for i1_s in range(4):
                if i0 * 4 + i1_s < 14:
                    B[i0 * 4 + i1_s] = A[i0 * 4 + i1_s] + T.float32(1)


    with ts.transform.PassContext(config={"tir.enable_buffer_level_predication": True}):
        assert_structural_equal(_run(tt.VectorizeLoop(), before), _main(expected))
    # Off by default on a target without scalable vectors.
    assert_structural_equal(_run(tt.VectorizeLoop(), before), _main(scalarized))


def test_scalable_extent_on_an_sve_target():

    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in T.vectorized(T.vscale() * 4):
            A[i] = B[i] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        A[T.Ramp(0, 1, T.vscale() * 4)] = B[T.Ramp(0, 1, T.vscale() * 4)] * T.Broadcast(
            T.float32(2), T.vscale() * 4)

    with ts.target.Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve"):
        after = _run(tt.VectorizeLoop(), before)
    assert_structural_equal(after, _main(expected))
    # Without scalable vectors on the target, the loop stays a (serial) loop.
    with ts.target.Target("llvm -mtriple=x86_64-linux-gnu"):
        after = _run(tt.VectorizeLoop(), before)
    assert isinstance(after.body, ts.tir.For) and after.body.kind == ts.tir.ForKind.SERIAL


def test_enable_vectorize_false_keeps_serial_loops():

    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for i in T.vectorized(16):
            A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            A[i] = T.float32(1)

    assert_structural_equal(_run(tt.VectorizeLoop(enable_vectorize=False), before), _main(expected))


def test_while_loop_on_the_lanes_is_refused_with_its_location():

    @T.prim_func
    def before(A: T.Buffer((4,), "int32")):
        for i in T.vectorized(4):
            while A[i] < 10:
                A[i] = A[i] + 1

    with pytest.raises(ts.error.TesseraError, match=r"while loop depends on the variable.*\n.*while A\[i\] < 10"):
        tt.VectorizeLoop()(before)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_vectorized_module_with_scalarized_statements_builds_and_runs(target):
    import numpy as np

    @T.prim_func
    def mixed(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32,
              x: T.float32):
        for i in T.vectorized(16):
            B[i] = A[i] * x
            if i < n:
                A[i] = T.float32(0)
            if n > 3:
                B[i] = T.if_then_else(i < 4, A[i], x)
            else:
                v = A[i] + x
                B[i] = T.exp(v) + T.Select(A[i] > x, v, x)

    lib = ts.build(tt.VectorizeLoop()(mixed), target=target)
    assert "vector_size" in lib.get_source()
    x = np.float32(0.25)
    for n in (2, 6):
        a = np.linspace(-1, 1, 16).astype("float32")
        b = np.zeros(16, "float32")
        expected_a = a.copy()
        expected_a[:n] = 0
        if n > 3:
            expected_b = np.where(np.arange(16) < 4, expected_a, x)
        else:
            v = expected_a + x
            expected_b = np.exp(v) + np.where(expected_a > x, v, x)
        lib(a, b, n, x)
        np.testing.assert_array_equal(a, expected_a)
        np.testing.assert_allclose(b, expected_b, rtol=1e-5)


def test_widening_scalable_vectors_is_refused_with_its_location():
    @T.prim_func
    def ramp_of_ramps(A: T.Buffer((64,), "float32")):
        for j in T.vectorized(T.vscale() * 4):
            A[j * 4:j * 4 + 4] = T.Broadcast(T.float32(1), 4)

    @T.prim_func
    def scalable_inside_fixed(A: T.Buffer((64,), "float32")):
        for j in T.vectorized(4):
            A[T.Ramp(j * 16, 1, T.vscale() * 4)] = T.Broadcast(T.float32(1), T.vscale() * 4)

    @T.prim_func
    def scalable_elements(A: T.Buffer((8,), "float32xvscalex4")):
        for j in T.vectorized(4):
            A[j] = T.Broadcast(T.float32(1), T.vscale() * 4)

    with ts.target.Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve"):
        with pytest.raises(ts.error.TesseraError, match=r"loop vectorized over T.vscale\(\) lanes.*\n.*A\[j \* 4:j \* 4 \+ 4\]"):
            tt.VectorizeLoop()(ramp_of_ramps)
        with pytest.raises(ts.error.TesseraError, match=r"ramp of T.vscale\(\) lanes varies with the vectorized loop"):
            tt.VectorizeLoop()(scalable_inside_fixed)
    with pytest.raises(ts.error.TesseraError, match=r"buffer A holds scalable vectors.*\n.*A\[j\] = "):
        tt.VectorizeLoop()(scalable_elements)


def test_legalize_vector_lanes_cuts_odd_lanes_into_powers_of_two(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), x: T.float32):
        B[T.Ramp(2, 1, 11)] = T.max(A[T.Ramp(2, 1, 11)], T.Broadcast(x, 11)) + T.sqrt(
            A[T.Ramp(2, 1, 11)])

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), x: T.float32):
        B[T.Ramp(2, 1, 8)] = T.max(A[T.Ramp(2, 1, 8)], T.Broadcast(x, 8)) + T.sqrt(
            A[T.Ramp(2, 1, 8)])
        B[T.Ramp(10, 1, 2)] = T.max(A[T.Ramp(10, 1, 2)], T.Broadcast(x, 2)) + T.sqrt(
            A[T.Ramp(10, 1, 2)])
        B[12] = T.max(A[12], x) + T.sqrt(A[12])

    golden("LegalizeVectorLanes", before, expected)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_vector_of_an_odd_extent_builds_and_runs(target):
    import numpy as np

    @T.prim_func
    def odd(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "int32")):
        for j in T.vectorized(2, 13):
            B[j] = T.max(A[j], T.float32(0.5)) + T.sqrt(A[j])
            C[j] = j * 3

    lib = ts.build(tt.VectorizeLoop()(odd), target=target)
    assert "vector_size" in lib.get_source()
    a = np.linspace(0, 1, 16).astype("float32")
    b = np.zeros(16, "float32")
    c = np.zeros(16, "int32")
    lib(a, b, c)
    expected_b = np.zeros(16, "float32")
    expected_b[2:13] = np.maximum(a[2:13], 0.5) + np.sqrt(a[2:13])
    expected_c = np.zeros(16, "int32")
    expected_c[2:13] = np.arange(2, 13) * 3
    np.testing.assert_allclose(b, expected_b, rtol=1e-6)
    np.testing.assert_array_equal(c, expected_c)


def test_allocation_inside_the_loop_gets_one_part_per_lane(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(4):
            for j in T.vectorized(4):
                tmp = T.decl_buffer((2,), "float32", scope="local")
                tmp[0] = A[i * 4 + j]
                tmp[1] = tmp[0] * T.float32(2)
                B[i * 4 + j] = tmp[1] + tmp[0]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(4):
            tmp = T.decl_buffer((8,), "float32", scope="local")
            tmp[T.Ramp(0, 1, 4)] = A[T.Ramp(i * 4, 1, 4)]
            tmp[T.Ramp(4, 1, 4)] = tmp[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2), 4)
            B[T.Ramp(i * 4, 1, 4)] = tmp[T.Ramp(4, 1, 4)] + tmp[T.Ramp(0, 1, 4)]

    golden("VectorizeLoop", before, expected)
    for target in ("c", "llvm"):
        import numpy as np

        lib = ts.build(tt.VectorizeLoop()(before), target=target)
        a = np.linspace(0, 1, 16).astype("float32")
        b = np.zeros(16, "float32")
        lib(a, b)
        np.testing.assert_allclose(b, a * 3, rtol=1e-6)


def test_condition_all_lanes_agree_on_picks_one_vector(golden):
    # concatenate's form: i * 16 - 128 is a multiple of 16, so i * 16 + j < 128 has the same
    # value for j in [0, 16): the condition of the first lane decides the whole vector.
    @T.prim_func
    def before(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((256,), "float32")):
        for i in T.serial(16):
            for j in T.vectorized(16):
                C[i * 16 + j] = T.if_then_else(i * 16 + j < 128, A[i * 16 + j], B[i * 16 + j - 128])

    @T.prim_func
    def expected(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((256,), "float32")):
        for i in T.serial(16):
            C[T.Ramp(i * 16, 1, 16)] = T.if_then_else(
                i < 8, A[T.Ramp(i * 16, 1, 16)], B[T.Ramp(i * 16 - 128, 1, 16)])

    golden("VectorizeLoop", before, expected)
    golden("SplitVectorizedLoops", before, before)  # the host runs it as vectors


def test_if_all_lanes_agree_on_keeps_vector_body(golden):
    # Both bounds, 32 and 64, are multiples of the 8 lanes; > and >= step downwards.
    @T.prim_func
    def before(A: T.Buffer((64,), "int32")):
        for i in T.serial(8):
            for j in T.vectorized(8):
                if i * 8 + j >= 32 and not 64 <= i * 8 + j:
                    A[i * 8 + j] = j

    @T.prim_func
    def expected(A: T.Buffer((64,), "int32")):
        for i in T.serial(8):
            if 32 <= i * 8 and not 64 <= i * 8:
                A[T.Ramp(i * 8, 1, 8)] = T.Ramp(0, 1, 8)

    golden("VectorizeLoop", before, expected)


def _lane_condition(kind):
    if kind == "lt":  # 120 is not a multiple of 16: lanes 0..7 and 8..15 of i = 7 differ
        @T.prim_func
        def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), n: T.int32):
            for i in T.serial(16):
                for j in T.vectorized(16):
                    B[i * 16 + j] = T.if_then_else(i * 16 + j < 120, A[i * 16 + j], T.float32(0))
    elif kind == "ge":
        @T.prim_func
        def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), n: T.int32):
            for i in T.serial(16):
                for j in T.vectorized(16):
                    B[i * 16 + j] = T.if_then_else(i * 16 + j >= 120, A[i * 16 + j], T.float32(0))
    elif kind == "symbolic":  # n is not known
        @T.prim_func
        def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), n: T.int32):
            for i in T.serial(16):
                for j in T.vectorized(16):
                    B[i * 16 + j] = T.if_then_else(i * 16 + j < n, A[i * 16 + j], T.float32(0))
    else:  # j * j is not linear in j
        @T.prim_func
        def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), n: T.int32):
            for i in T.serial(16):
                for j in T.vectorized(16):
                    B[i * 16 + j] = T.if_then_else(j * j < 64, A[i * 16 + j], T.float32(0))
    return f


@pytest.mark.parametrize("kind", ["lt", "ge", "symbolic", "nonlinear"])
def test_condition_lanes_may_disagree_on_stays_lane_by_lane(kind):
    f = _lane_condition(kind)
    assert "T.vectorized" in f.script()
    out = _run(tt.SplitVectorizedLoops(), f)
    assert "T.vectorized" not in out.script()
    assert "T.if_then_else" in out.script()


@pytest.mark.parametrize("dtype,lanes", [("int8", 64), ("uint8", 64), ("int16", 32), ("int32", 16)])
def test_max_vector_bits_fills_the_vector_of_an_accumulator(golden, dtype, lanes):
    # a loop storing only into the function's own buffer (a reduction's accumulator) fills the
    # vector (512 bits of int8: 64 lanes); so does one that only copies data into an argument
    # (test_copy_fills_the_vector_arithmetic_keeps_16_lanes)
    @T.prim_func
    def before(A: T.Buffer((128,), dtype), B: T.Buffer((128,), dtype)):
        acc = T.allocate([128], dtype, "local")
        acc_1 = T.Buffer((128,), dtype, data=acc, scope="local")
        for i in T.vectorized(128):
            acc_1[i] = acc_1[i] + A[i]
        for i in T.vectorized(128):
            B[i] = acc_1[i]

    @T.prim_func
    def split(A: T.Buffer((128,), dtype), B: T.Buffer((128,), dtype)):
        acc = T.allocate([128], dtype, "local")
        acc_1 = T.Buffer((128,), dtype, data=acc, scope="local")
        for i_outer in T.serial(128 // lanes):
            for i in T.vectorized(lanes):
                acc_1[i_outer * lanes + i] = acc_1[i_outer * lanes + i] + A[i_outer * lanes + i]
        for i_outer in T.serial(128 // lanes):
            for i in T.vectorized(lanes):
                B[i_outer * lanes + i] = acc_1[i_outer * lanes + i]

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": 512}}):
        golden("SplitVectorizedLoops", before, split)


@pytest.mark.parametrize("dtype,lanes,arith", [("int8", 64, 32), ("int16", 32, 16),
                                               ("float16", 32, 16), ("float32", 16, 16)])
def test_copy_fills_the_vector_arithmetic_keeps_16_lanes(golden, dtype, lanes, arith):
    # a loop that only moves data into an argument (a copy at a unit stride, here of a flipped
    # row) takes the whole width; arithmetic on the same loads keeps 16 lanes, or 256 bits where
    # that is more (32 lanes of bytes)
    @T.prim_func
    def before(A: T.Buffer((4, 128), dtype), B: T.Buffer((4, 128), dtype),
               C: T.Buffer((4, 128), dtype)):
        for r in range(4):
            for i in T.vectorized(128):
                B[r, i] = A[3 - r, i]
            for i in T.vectorized(128):
                C[r, i] = A[r, i] + A[3 - r, i]

    @T.prim_func
    def split(A: T.Buffer((4, 128), dtype), B: T.Buffer((4, 128), dtype),
              C: T.Buffer((4, 128), dtype)):
        for r in range(4):
            for i_outer in T.serial(128 // lanes):
                for i in T.vectorized(lanes):
                    B[r, i_outer * lanes + i] = A[3 - r, i_outer * lanes + i]
            for i_outer in T.serial(128 // arith):
                for i in T.vectorized(arith):
                    C[r, i_outer * arith + i] = (A[r, i_outer * arith + i]
                                                 + A[3 - r, i_outer * arith + i])

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": 512}}):
        golden("SplitVectorizedLoops", before, split)


def test_unknown_vector_width_keeps_16_lanes(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "int8")):
        for i in T.vectorized(64):
            A[i] = T.int8(1)

    @T.prim_func
    def split(A: T.Buffer((64,), "int8")):
        for i_outer in T.serial(4):
            for i in T.vectorized(16):
                A[i_outer * 16 + i] = T.int8(1)

    golden("SplitVectorizedLoops", before, split)


def test_max_vector_bits_fills_the_vector_of_an_argument_read_and_written(golden):
    # B[i] += A[i] accumulates into an argument (a column sum): the whole vector too; C, an
    # argument only written, 256 bits of bytes
    @T.prim_func
    def before(A: T.Buffer((128,), "int8"), B: T.Buffer((128,), "int8"), C: T.Buffer((128,), "int8")):
        for i in T.vectorized(128):
            B[i] = B[i] + A[i]
        for i in T.vectorized(128):
            C[i] = A[i] + B[i]

    @T.prim_func
    def split(A: T.Buffer((128,), "int8"), B: T.Buffer((128,), "int8"), C: T.Buffer((128,), "int8")):
        for i_outer in T.serial(2):
            for i in T.vectorized(64):
                B[i_outer * 64 + i] = B[i_outer * 64 + i] + A[i_outer * 64 + i]
        for i_outer in T.serial(4):
            for i in T.vectorized(32):
                C[i_outer * 32 + i] = A[i_outer * 32 + i] + B[i_outer * 32 + i]

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": 512}}):
        golden("SplitVectorizedLoops", before, split)


@pytest.mark.parametrize("dtype,bits,lanes", [
    ("int8", 512, 32), ("uint8", 256, 32), ("int8", 128, 16),  # at most the vector
    ("int16", 512, 16), ("float16", 512, 16), ("float32", 512, 16), ("float64", 512, 8),
])
def test_a_loop_of_bytes_takes_256_bits(golden, dtype, bits, lanes):
    # a loop storing to an argument takes at most 16 lanes or 256 bits, whichever is more (and
    # at most the vector): 32 lanes of bytes, 16 of anything wider
    @T.prim_func
    def before(A: T.Buffer((128,), dtype), B: T.Buffer((128,), dtype)):
        for i in T.vectorized(128):
            B[i] = A[i] + A[i]

    @T.prim_func
    def split(A: T.Buffer((128,), dtype), B: T.Buffer((128,), dtype)):
        for i_outer in T.serial(128 // lanes):
            for i in T.vectorized(lanes):
                B[i_outer * lanes + i] = A[i_outer * lanes + i] + A[i_outer * lanes + i]

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": bits}}):
        golden("SplitVectorizedLoops", before, split)


def test_a_loop_of_bytes_computing_bools_keeps_16_lanes(golden):
    # bools (bytes read and written through casts) are 32-bit lane masks in the host's vectors:
    # 32 of them would be 1024 bits
    @T.prim_func
    def before(A: T.Buffer((128,), "int8"), B: T.Buffer((128,), "int8"), C: T.Buffer((128,), "int8")):
        for i in T.vectorized(128):
            C[i] = T.Cast("int8", T.Cast("bool", A[i]) != T.Cast("bool", B[i]))

    @T.prim_func
    def split(A: T.Buffer((128,), "int8"), B: T.Buffer((128,), "int8"), C: T.Buffer((128,), "int8")):
        for i_outer in T.serial(8):
            for i in T.vectorized(16):
                C[i_outer * 16 + i] = T.Cast(
                    "int8", T.Cast("bool", A[i_outer * 16 + i]) != T.Cast("bool", B[i_outer * 16 + i]))

    with ts.transform.PassContext(config={"tir.VectorizeLoop": {"max_vector_bits": 512}}):
        golden("SplitVectorizedLoops", before, split)
