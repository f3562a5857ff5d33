"""The TensorIR tutorial flow and a scheduled matmul, built for the CPU and run."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir.schedule.testing import verify_trace_roundtrip


@I.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


TUTORIAL_SCRIPT = '''# from tessera.script import ir as I
# from tessera.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for i_0, i_2, i_1 in T.grid(2, 2, 2):
            with T.block("B"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1 * 2 + i_2)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + T.float32(1.0)'''


def test_tutorial_split_reorder_build():
    sch = tir.Schedule(MyModule)
    block_b = sch.get_block("B")
    (i,) = sch.get_loops(block_b)
    i_0, i_1, i_2 = sch.split(i, factors=[2, 2, 2])
    sch.reorder(i_0, i_2, i_1)
    assert sch.mod.script() == TUTORIAL_SCRIPT
    assert_round_trips(sch.mod)
    verify_trace_roundtrip(sch, MyModule)

    lib = ts.build(sch.mod, target="c")
    a = ts.nd.array(np.arange(8).astype("float32"))
    b = ts.nd.array(np.zeros((8,)).astype("float32"))
    lib(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8).astype("float32") + 1)


def assert_round_trips(mod):
    ts.ir.assert_structural_equal(ts.script.from_source(mod.script()), mod)


@I.ir_module
class MatmulRelu:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@I.ir_module
class Expected:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128))
        for i in T.parallel(128):
            for j_0 in T.serial(32):
                for j_1_init in T.vectorized(4):
                    with T.block("Y_init"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                        Y[vi, vj] = T.float32(0)
                for k in T.serial(128):
                    for j_1 in T.vectorized(4):
                        with T.block("Y_update"):
                            vi = T.axis.spatial(128, i)
                            vj = T.axis.spatial(128, j_0 * 4 + j_1)
                            vk = T.axis.reduce(128, k)
                            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
                for ax0 in T.vectorized(4):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + ax0)
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_matmul_schedule_builds_and_matches_numpy():
    sch = tir.Schedule(MatmulRelu)
    block_y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    block_c = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_c, j0)
    sch.parallel(i)
    sch.vectorize(j1)
    sch.vectorize(sch.get_loops(block_c)[-1])
    sch.decompose_reduction(block_y, k)
    ts.ir.assert_structural_equal(sch.mod, Expected)
    verify_trace_roundtrip(sch, MatmulRelu)

    lib = ts.build(sch.mod, target="c")
    a_np = np.random.uniform(size=(128, 128)).astype("float32")
    b_np = np.random.uniform(size=(128, 128)).astype("float32")
    c = ts.nd.array(np.zeros((128, 128), dtype="float32"))
    lib(ts.nd.array(a_np), ts.nd.array(b_np), c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a_np @ b_np, 0), rtol=1e-5)
