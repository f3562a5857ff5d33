"""tir.VectorizeLoop: T.vectorized loops become Ramp/Broadcast vector code."""

import tessera as ts
from tessera.script import tir as T


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


def test_long_loop_is_split_into_vector_chunks(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "int32")):
        for i in T.vectorized(64):
            A[i] = i

    @T.prim_func
    def expected(A: T.Buffer((64,), "int32")):
        for i_outer in T.serial(4):
            A[T.Ramp(i_outer * 16, 1, 16)] = T.Ramp(i_outer * 16, 1, 16)

    golden("VectorizeLoop", before, expected)


def test_strided_access_and_invariant_operand(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in T.vectorized(8):
            B[i] = A[i * 4] + x

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        B[T.Ramp(0, 1, 8)] = A[T.Ramp(0, 4, 8)] + T.Broadcast(x, 8)

    golden("VectorizeLoop", before, expected)


def test_reduction_falls_back_to_a_serial_loop(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
        for i in T.vectorized(16):
            B[0] = B[0] + A[i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
        for i in T.serial(16):
            B[0] = B[0] + A[i]

    golden("VectorizeLoop", before, expected)


def test_branch_in_body_falls_back_to_a_serial_loop(golden):
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
