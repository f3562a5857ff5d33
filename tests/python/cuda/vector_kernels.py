"""Element-wise programs with vectorized inner loops for the CUDA vector tests."""

from tessera import tir
from tessera.script import tir as T


def axpy_func(n, dtype, shift=0, stride=1):
    """C[i] = A[stride * i + shift] * 2 + B[i] over n elements (A holds stride * n + shift)."""

    @T.prim_func
    def axpy(A: T.Buffer((stride * n + shift,), dtype), B: T.Buffer((n,), dtype),
             C: T.Buffer((n,), dtype)):
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi * stride + shift] * T.cast(2, dtype) + B[vi]

    return axpy


def scale_func(n, dtype):
    """C[i] = A[i] * s[0] (a scalar broadcast to the lanes) - the lane index as dtype."""

    @T.prim_func
    def scale(A: T.Buffer((n,), dtype), s: T.Buffer((1,), dtype), C: T.Buffer((n,), dtype)):
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] * s[0] - T.cast(vi % 4, dtype)

    return scale


def schedule_vectorized(func, block, lanes, threads=32):
    """i -> (blockIdx.x, threadIdx.x, vectorized lanes)."""
    sch = tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block(block))
    bx, tx, v = sch.split(i, [None, threads, lanes])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(v)
    return sch.mod
