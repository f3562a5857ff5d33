"""tir.HoistSharedVectorLoads: a vector load read by several stores of a straight-line run is
loaded once, bound just before its first use (the panel vector of an unrolled register tile)."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def test_load_shared_by_two_stores_is_bound_once(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), x: T.float32):
        T.func_attr({"tir.noalias": True})
        C = T.decl_buffer((16,), "float32", scope="local")
        C[0:8] = C[0:8] + B[0:8] * T.Broadcast(A[0], 8)
        C[8:16] = C[8:16] + B[0:8] * T.Broadcast(A[1], 8)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), x: T.float32):
        T.func_attr({"tir.noalias": True})
        C = T.decl_buffer((16,), "float32", scope="local")
        vload1 = B[0:8]
        C[0:8] = C[0:8] + vload1 * T.Broadcast(A[0], 8)
        C[8:16] = C[8:16] + vload1 * T.Broadcast(A[1], 8)

    golden("HoistSharedVectorLoads", before, expected)


def test_binding_placed_before_first_use(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        T.func_attr({"tir.noalias": True})
        C = T.decl_buffer((16,), "float32", scope="local")
        C[0:8] = B[0:8]
        C[8:16] = B[8:16] * B[8:16]
        C[0:8] = C[0:8] + B[8:16]

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        T.func_attr({"tir.noalias": True})
        C = T.decl_buffer((16,), "float32", scope="local")
        C[0:8] = B[0:8]
        vload1 = B[8:16]
        C[8:16] = vload1 * vload1
        C[0:8] = C[0:8] + vload1

    golden("HoistSharedVectorLoads", before, expected)


def test_load_of_a_buffer_the_run_writes_stays(unchanged):
    @T.prim_func
    def func(B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        B[8:16] = B[0:8] + B[8:16]
        B[0:8] = B[0:8] * B[0:8]

    unchanged("HoistSharedVectorLoads", func)


def test_parameters_that_may_alias_stay(unchanged):
    # Without tir.noalias, A and B may be the same memory: the store to A may change B[0:8].
    @T.prim_func
    def func(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        A[0:8] = B[0:8] + B[0:8]
        A[8:16] = B[0:8]

    unchanged("HoistSharedVectorLoads", func)


def test_scalar_loads_and_single_uses_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        A[0] = B[0] + B[1]
        A[1] = B[0] * B[1]
        A[8:16] = B[0:8]

    unchanged("HoistSharedVectorLoads", func)


def test_disabled_by_option(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        A[0:8] = B[0:8] + B[0:8]
        A[8:16] = B[0:8]

    with ts.transform.PassContext(config={"tir.disable_hoist_shared_vector_loads": True}):
        unchanged("HoistSharedVectorLoads", func)


def test_register_tile_builds_keeps_vectors_in_registers_and_matches_numpy():
    @T.prim_func
    def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
               C: T.Buffer((64, 64), "float32")):
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    lanes = max(ts._core.host_vector_bits() // 32, 4)
    sch = ts.tir.Schedule(matmul)
    block = sch.get_block("C")
    cc = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, lanes])
    sch.reorder(jo, io, k, ii, ji)
    sch.reverse_compute_at(cc, io)
    sch.vectorize(ji)
    sch.unroll(ii)
    sch.vectorize(sch.get_loops(cc)[-1])
    sch.decompose_reduction(block, k)
    lib = ts.build(sch.mod, target="c")
    src = lib.get_source()
    # B's vector is read by the 4 unrolled rows: loaded once, kept in a register.
    assert "vload1 = " in src and f"TESSERA_KEEP_IN_REGISTER{lanes * 32}(vload1)" in src
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    c = np.zeros((64, 64), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
