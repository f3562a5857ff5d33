"""Build-and-run tests of the host targets ("c", "llvm") against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import ir as I
from tessera.script import tir as T


def rand(*shape, dtype="float32"):
    return np.random.default_rng(0).random(shape).astype(dtype)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_vector_add(target):
    @T.prim_func
    def add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
        for i in T.serial(128):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]

    lib = ts.build(add, target=target)
    a, b = rand(128), rand(128) * 3
    c = ts.nd.empty((128,), "float32")
    lib(ts.nd.array(a), ts.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b)


@I.ir_module
class MatmulRelu:
    @T.prim_func
    def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 48), "float32"), C: T.Buffer((64, 48), "float32")):
        Y = T.alloc_buffer((64, 48))
        for i, j, k in T.grid(64, 48, 32):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(64, 48):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_matmul_then_relu():
    lib = ts.build(MatmulRelu, target="c")
    a, b = rand(64, 32) - 0.5, rand(32, 48) - 0.5
    c = np.zeros((64, 48), "float32")
    lib(a, b, c)  # numpy arrays are used in place
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_row_reductions_sum_and_max():
    @T.prim_func
    def reduce(A: T.Buffer((16, 100), "float32"), S: T.Buffer((16,), "float32"), M: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 100):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
        for i, k in T.grid(16, 100):
            with T.block("M"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    M[vi] = T.float32(-3.4e38)
                M[vi] = T.max(M[vi], A[vi, vk])

    lib = ts.build(reduce)
    a = rand(16, 100) - 0.5
    s, m = np.zeros(16, "float32"), np.zeros(16, "float32")
    lib(a, s, m)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m, a.max(axis=1))


def test_symbolic_shape_serves_every_size():
    @T.prim_func
    def scale(a: T.handle, b: T.handle, alpha: T.float32):
        m = T.int32()
        n = T.int32()
        A = T.match_buffer(a, (m, n), "float32")
        B = T.match_buffer(b, (m, n), "float32")
        for i, j in T.grid(m, n):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * alpha

    lib = ts.build(scale)
    for shape in [(1, 1), (3, 5), (17, 64), (0, 4)]:
        a = rand(*shape)
        b = np.zeros(shape, "float32")
        lib(a, b, 2.5)
        np.testing.assert_allclose(b, a * 2.5)


def test_floor_and_truncating_division_of_negative_values():
    @T.prim_func
    def divmod_(A: T.Buffer((32,), "int32"), B: T.Buffer((32,), "int32"), Q: T.Buffer((32, 4), "int32")):
        for i in T.serial(32):
            with T.block("Q"):
                vi = T.axis.remap("S", [i])
                Q[vi, 0] = T.floordiv(A[vi], B[vi])
                Q[vi, 1] = T.floormod(A[vi], B[vi])
                Q[vi, 2] = T.truncdiv(A[vi], B[vi])
                Q[vi, 3] = T.truncmod(A[vi], B[vi])

    lib = ts.build(divmod_)
    a = np.arange(-16, 16, dtype="int32") * 7
    b = np.array([3, -3, 5, -5] * 8, dtype="int32")
    q = np.zeros((32, 4), "int32")
    lib(a, b, q)
    np.testing.assert_array_equal(q[:, 0], a // b)
    np.testing.assert_array_equal(q[:, 1], a % b)
    np.testing.assert_array_equal(q[:, 2], np.trunc(a / b).astype("int32"))
    np.testing.assert_array_equal(q[:, 3], np.fmod(a, b))


def test_constant_divisors_of_negative_values():
    @T.prim_func
    def divmod_(A: T.Buffer((40,), "int32"), Q: T.Buffer((40, 4), "int32")):
        for i in T.serial(40):
            with T.block("Q"):
                vi = T.axis.remap("S", [i])
                Q[vi, 0] = A[vi] // 4
                Q[vi, 1] = A[vi] % 4
                Q[vi, 2] = T.truncdiv(A[vi], 4)
                Q[vi, 3] = T.truncmod(A[vi], 4)

    lib = ts.build(divmod_)
    a = np.arange(-20, 20, dtype="int32")
    q = np.zeros((40, 4), "int32")
    lib(a, q)
    np.testing.assert_array_equal(q[:, 0], a // 4)
    np.testing.assert_array_equal(q[:, 1], a % 4)
    np.testing.assert_array_equal(q[:, 2], np.trunc(a / 4).astype("int32"))
    np.testing.assert_array_equal(q[:, 3], np.fmod(a, 4))


def test_parallel_and_vectorized_loops():
    @T.prim_func
    def affine(A: T.Buffer((256, 64), "float32"), B: T.Buffer((256, 64), "float32")):
        for i in T.parallel(256):
            for j in T.vectorized(64):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(3) - T.float32(1)

    lib = ts.build(affine)
    src = lib.get_source()
    # 256 iterations handed out on demand in chunks of 256 / 64 (a thread slowed by another
    # process takes fewer of them).
    assert "#pragma omp parallel for schedule(dynamic, 4)" in src
    assert "vector_size" in src
    a = rand(256, 64)
    b = np.zeros((256, 64), "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a * 3 - 1, rtol=1e-5, atol=1e-6)


def test_vectorized_select_cast_and_min():
    @T.prim_func
    def clamp(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64,), "float32")):
        for i in T.vectorized(64):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = T.Select(A[vi] > T.float32(0.5), T.min(A[vi], T.float32(0.75)), T.Cast("float32", B[vi]))

    lib = ts.build(clamp)
    assert "vector_size" in lib.get_source()
    a = rand(64)
    b = np.arange(64, dtype="int32")
    c = np.zeros(64, "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, np.where(a > 0.5, np.minimum(a, 0.75), b.astype("float32")))


def test_unrolled_loop_and_local_allocation():
    @T.prim_func
    def stencil(A: T.Buffer((34,), "float32"), B: T.Buffer((32,), "float32")):
        for i in T.serial(32):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                acc = T.alloc_buffer((1,), scope="local")
                acc[0] = T.float32(0)
                for k in T.unroll(3):
                    acc[0] = acc[0] + A[vi + k]
                B[vi] = acc[0]

    lib = ts.build(stencil)
    a = rand(34)
    b = np.zeros(32, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-6)


def test_math_intrinsics_in_float32_and_float64():
    @T.prim_func
    def math(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float64")):
        for i in T.serial(16):
            with T.block("m"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.exp(A[vi]) + T.sqrt(A[vi]) + T.sigmoid(A[vi])
                B[vi] = T.tanh(B[vi]) + T.log(B[vi] + T.float64(1))

    lib = ts.build(math)
    assert "expf(" in lib.get_source()
    a = rand(16)
    b = rand(16, dtype="float64")
    ra = np.exp(a) + np.sqrt(a) + 1 / (1 + np.exp(-a))
    rb = np.tanh(b) + np.log(b + 1)
    lib(a, b)
    np.testing.assert_allclose(a, ra, rtol=1e-5)
    np.testing.assert_allclose(b, rb, rtol=1e-12)


def test_scalar_returns_give_python_values():
    @T.prim_func
    def weighted(x: T.int32, y: T.float32) -> T.float32:
        return T.Cast("float32", x) * y

    @T.prim_func
    def is_big(x: T.int64) -> T.bool:
        return x > T.int64(10)

    assert ts.build(weighted)(3, 2.5) == 7.5
    big = ts.build(is_big)
    assert big(30) is True and big(3) is False


def test_module_with_several_functions_and_a_call():
    @I.ir_module
    class Mod:
        @T.prim_func
        def double(A: T.Buffer((8,), "int32")):
            for i in T.serial(8):
                A[i] = A[i] * 2

        @T.prim_func
        def square(x: T.int32) -> T.int32:
            return x * x

        @T.prim_func
        def main(A: T.Buffer((8,), "int32")):
            for i in T.serial(8):
                A[i] = cls.square(A[i])

    lib = ts.build(Mod)
    a = np.arange(8, dtype="int32")
    lib(a)
    np.testing.assert_array_equal(a, np.arange(8) ** 2)
    lib["double"](a)
    np.testing.assert_array_equal(a, np.arange(8) ** 2 * 2)
    assert lib["square"](7) == 49
    assert sorted(lib.function_names) == ["double", "main", "square"]


def test_ts_lower_stops_after_a_stage():
    flat = ts.lower(MatmulRelu, target="c", stage="flatten")
    text = flat.script()
    # Flattened as TVM does: the allocation of Y stays, its declaration goes.
    assert "T.block" not in text and 'Y = T.allocate([3072], "float32", "global")' in text
    with pytest.raises(ValueError, match="unknown stage"):
        ts.lower(MatmulRelu, target="c", stage="nowhere")


def test_break_continue_and_bit_intrinsics():
    @T.prim_func
    def g(A: T.Buffer((16,), "int32")) -> T.int32:
        s = T.alloc_buffer((1,), "int32", scope="local")
        s[0] = 0
        for i in T.serial(16):
            if A[i] < 0:
                continue
            if A[i] > 100:
                break
            s[0] = s[0] + A[i]
        return s[0] * 100 + T.popcount(A[0]) * 10 + T.clz(A[2])

    a = np.array([3, -1, 4, 1000, 5] + [0] * 11, dtype="int32")
    expected = (3 + 4) * 100 + 2 * 10 + 29
    assert ts.build(g)(a) == expected
    # Loops with break or continue are not unrolled, even when the options would.
    with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_extent": 32}}):
        assert ts.build(g)(a) == expected


def test_vectorized_math_intrinsics():
    @T.prim_func
    def act(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
        for i in T.serial(4):
            for j in T.vectorized(32):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.sigmoid(A[vi, vj]) + T.exp(A[vi, vj] * T.float32(0.5))

    lib = ts.build(act)
    # The loop is cut to the host's vector width: 16 lanes with AVX-512, 8 with AVX2.
    lanes = min(32, ts._core.host_vector_bits() // 32)
    assert f"tessera_expf_float32x{lanes}" in lib.get_source()
    a = rand(4, 32) - 0.5
    b = np.zeros((4, 32), "float32")
    lib(a, b)
    np.testing.assert_allclose(b, 1 / (1 + np.exp(-a)) + np.exp(a * 0.5), rtol=1e-5)


def test_tile_temporary_is_planned_and_compacted():
    @T.prim_func
    def tiled(A: T.Buffer((64, 8), "float32"), C: T.Buffer((64, 8), "float32")):
        Y = T.alloc_buffer((64, 8))
        for io in T.serial(4):
            for ii, j in T.grid(16, 8):
                with T.block("Y"):
                    vi = T.axis.spatial(64, io * 16 + ii)
                    vj = T.axis.spatial(8, j)
                    Y[vi, vj] = A[vi, vj] + T.float32(1)
            for ii, j in T.grid(16, 8):
                with T.block("C"):
                    vi = T.axis.spatial(64, io * 16 + ii)
                    vj = T.axis.spatial(8, j)
                    C[vi, vj] = Y[vi, vj] * T.float32(2)

    lowered = ts.lower(tiled, stage="flatten").script()
    assert 'Y = T.allocate([128], "float32", "global")' in lowered  # flattened, compacted
    lib = ts.build(tiled)
    a = rand(64, 8)
    c = np.zeros((64, 8), "float32")
    lib(a, c)
    np.testing.assert_allclose(c, (a + 1) * 2)


def test_tensor_expression_function_builds_with_restrict_pointers():
    from tessera import te

    A = te.placeholder((16, 8), "float32", name="A")
    B = te.placeholder((8, 12), "float32", name="B")
    k = te.reduce_axis((0, 8), name="k")
    Y = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((16, 12), lambda i, j: te.max(Y[i, j], te.const(0, "float32")), name="C")
    lib = ts.build(te.create_prim_func([A, B, C]), target="llvm")
    assert "restrict" in lib.get_source()  # te functions carry tir.noalias
    a, b = rand(16, 8) - 0.5, rand(8, 12) - 0.5
    c = np.zeros((16, 12), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)


def test_constant_index_offsets_split_from_the_pointer():
    # An int32 index x + c is printed as (ptr + x)[c] (scalar) and (ptr + x + c) (vector), so
    # the C compiler computes x once for all the accesses at x + c; the values stay those of
    # the index, negative offsets included.
    @T.prim_func
    def stencil(A: T.Buffer((16, 66), "float32"), B: T.Buffer((16, 64), "float32"),
                C: T.Buffer((16, 64), "float32")):
        for i in T.serial(16):
            for j in T.serial(64):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj + 2] - A[vi, vj]
        for i in T.serial(16):
            for jo in T.serial(8):
                for ji in T.vectorized(8):
                    with T.block("C"):
                        vi = T.axis.spatial(16, i)
                        vj = T.axis.spatial(64, jo * 8 + ji)
                        C[vi, vj] = A[vi, vj + 1] * T.float32(2)

    lib = ts.build(stencil, target="c")
    src = lib.get_source()
    assert ")[2]" in src                # scalar: (A + x)[2]
    assert " + 1)" in src and "tessera_load_float32x" in src  # vector: (A + x + 1)
    a = rand(16, 66)
    b, c = np.zeros((16, 64), "float32"), np.zeros((16, 64), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(b, a[:, 2:] - a[:, :64], rtol=1e-6)
    np.testing.assert_allclose(c, a[:, 1:65] * 2, rtol=1e-6)


def test_function_built_without_return_type_returns_its_tir_ret_value():
    # TVM's PrimFunc([...], Evaluate(ret(x))): no declared return type, a value returned.
    from tessera import tir

    a, b = tir.Var("a", "float32"), tir.Var("b", "float32")
    func = tir.PrimFunc([a, b], tir.Evaluate(tir.ret(a * b + tir.const(1.0, "float32"))))
    f = ts.build(func.with_attr("global_symbol", "mul_add"), target="c")
    assert f(3.0, 4.0) == 13.0
    k = tir.Var("k", "int32")
    ib = tir.ir_builder.create()
    with ib.if_scope(k > 0):
        ib.emit(tir.Evaluate(tir.ret(k)))
    ib.emit(tir.Evaluate(tir.ret(tir.const(-1, "int32"))))
    g = ts.build(tir.PrimFunc([k], ib.get()).with_attr("global_symbol", "pos"), target="c")
    assert (g(5), g(-2)) == (5, -1)
