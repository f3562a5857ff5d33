"""fuse_reduction_epilogue: bias, bias + ReLU and clipping epilogues move into the reduction."""

import numpy as np
import pytest

import tessera
from tessera.script import tir as T


@T.prim_func
def matmul_bias(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    temp = T.alloc_buffer((16, 16), "float32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("multiply"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = T.float32(0)
            temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(16, 16):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = temp[vi, vj] + C[vi, vj]


@T.prim_func
def matmul_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    temp = T.alloc_buffer((16, 16), "float32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("multiply"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = T.float32(0)
            temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(16, 16):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(temp[vi, vj] + C[vi, vj], T.float32(0))


def test_bias(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
        # TVM keeps the reduction buffer's allocation.
        temp = T.alloc_buffer((16, 16), "float32")
        for i, j, k in T.grid(16, 16, 16):
            with T.block("multiply"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A[vi, vk], B[vj, vk])
                T.writes(D[vi, vj])
                with T.init():
                    D[vi, vj] = C[vi, vj]
                D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vj, vk]

    def apply(sch):
        sch.fuse_reduction_epilogue(sch.get_block("multiply"), sch.get_block("add"))
        assert sch.trace.as_python()[-1] == (
            "sch.fuse_reduction_epilogue(reduction_block=b0, epilogue_block=b1)")

    golden(matmul_bias, expected, apply)


def test_bias_relu(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
        # TVM keeps the reduction buffer's allocation.
        temp = T.alloc_buffer((16, 16), "float32")
        for i, j, k in T.grid(16, 16, 16):
            with T.block("multiply"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A[vi, vk], B[vj, vk])
                T.writes(D[vi, vj])
                with T.init():
                    D[vi, vj] = T.max(C[vi, vj], T.float32(0))
                D[vi, vj] = T.max(D[vi, vj] + A[vi, vk] * B[vj, vk], T.float32(0))

    golden(matmul_relu, expected, lambda sch: sch.fuse_reduction_epilogue(
        sch.get_block("multiply"), sch.get_block("relu")))


def test_bias_result_matches_numpy():
    sch = tessera.tir.Schedule(matmul_bias)
    sch.fuse_reduction_epilogue(sch.get_block("multiply"), sch.get_block("add"))
    f = tessera.build(sch.mod, target="llvm")
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((16, 16)).astype("float32") for _ in range(3))
    d = tessera.nd.array(np.zeros((16, 16), "float32"))
    f(tessera.nd.array(a), tessera.nd.array(b), tessera.nd.array(c), d)
    np.testing.assert_allclose(d.numpy(), a @ b.T + c, rtol=1e-5, atol=1e-5)


def test_unsupported_epilogue_fails(schedule_error):
    @T.prim_func
    def matmul_scale(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
        temp = T.alloc_buffer((16, 16), "float32")
        for i, j, k in T.grid(16, 16, 16):
            with T.block("multiply"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    temp[vi, vj] = T.float32(0)
                temp[vi, vj] = temp[vi, vj] + A[vi, vk]
        for i, j in T.grid(16, 16):
            with T.block("scale"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = temp[vi, vj] * T.float32(2)

    schedule_error(matmul_scale, lambda sch: sch.fuse_reduction_epilogue(
        sch.get_block("multiply"), sch.get_block("scale")), "fuse_reduction_epilogue",
        "must be a bias add")
