"""Matrix multiplications: reductions with T.init, in concise and verbose spellings."""

from tessera.script import ir as I
from tessera.script import tir as T


@T.prim_func
def matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    # Concise form: T.axis.remap binds the iterators to the loops; reads/writes are inferred.
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_verbose(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    # Verbose form of `matmul`: explicit iterators and regions. Both parse to the same IR.
    for i in range(128):
        for j in range(128):
            for k in range(128):
                with T.block("C"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j)
                    vk = T.axis.reduce(128, k)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@I.ir_module
class MatmulRelu:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        Y = T.alloc_buffer((128, 128))
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


@T.prim_func
def batch_matmul(A: T.Buffer((4, 32, 64), "float16"), B: T.Buffer((4, 64, 32), "float16"), C: T.Buffer((4, 32, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    for b, i, j, k in T.grid(4, 32, 32, 64):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + T.Cast("float32", A[vb, vi, vk]) * T.Cast("float32", B[vb, vk, vj])


@T.prim_func
def matmul_tiled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    # After split: the iterators are bound to expressions of the tile loops.
    for i0, j0, k0, i1, j1, k1 in T.grid(4, 4, 8, 16, 16, 8):
        with T.block("C"):
            vi = T.axis.spatial(64, i0 * 16 + i1)
            vj = T.axis.spatial(64, j0 * 16 + j1)
            vk = T.axis.reduce(64, k0 * 8 + k1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_parallel_vectorized(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i in T.parallel(64):
        for k in range(64):
            for j in T.vectorized(64):
                with T.block("C"):
                    vi, vk, vj = T.axis.remap("SRS", [i, k, j])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matvec_with_local_accumulator(A: T.Buffer((32, 32), "float32"), x: T.Buffer((32,), "float32"), y: T.Buffer((32,), "float32")):
    acc = T.alloc_buffer((32,), scope="local")
    for i, k in T.grid(32, 32):
        with T.block("acc"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                acc[vi] = T.float32(0)
            acc[vi] = acc[vi] + A[vi, vk] * x[vk]
    for i in range(32):
        with T.block("y"):
            vi = T.axis.spatial(32, i)
            y[vi] = acc[vi]


@T.prim_func
def tvm_style_handles(a: T.handle, b: T.handle, c: T.handle) -> None:
    # The spelling of many TVM tests: handles, list shapes, `-> None` and float literals.
    A = T.match_buffer(a, [128, 128])
    B = T.match_buffer(b, [128, 128])
    C = T.match_buffer(c, [128, 128])
    for i, j, k in T.grid(128, 128, 128):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
