"""reindex: a buffer access becomes an access of a new buffer indexed by block iterators, with a
copy block before (read) or after (write) the block."""

import pytest

from tessera.script import tir as T


@T.prim_func
def transpose(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i0, i1, i2 in T.grid(64, 64, 64):
        with T.block("matmul"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def weight_use(W: T.Buffer((7, 3, 16), "float32"), O: T.Buffer((16, 8), "float32")):
    for i0, i1, i2, i3 in T.grid(16, 8, 7, 3):
        with T.block("O"):
            co, x, rh, rc = T.axis.remap("SSRR", [i0, i1, i2, i3])
            with T.init():
                O[co, x] = T.float32(0)
            O[co, x] = O[co, x] + W[rh, rc, co]


@T.prim_func
def multiple_read(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] + A[vi, vj]


def test_reindex_read(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        A_reindex = T.alloc_buffer((128, 128), "float32")
        for i, j in T.grid(128, 128):
            with T.block("A_reindex"):
                vi, vj = T.axis.remap("SS", [i, j])
                A_reindex[vi, vj] = A[vj, vi]
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_reindex[vi, vj] * T.float32(2)

    def apply(sch):
        block = sch.reindex(sch.get_block("B"), ("read", 0))
        # TVM names the copy block after the buffer it writes.
        assert sch.get(block).name_hint == "A_reindex_reindex"
        assert sch.trace.as_python()[-1] == 'b1 = sch.reindex(block=b0, buffer=("read", 0))'

    golden(transpose, expected, apply)


def test_reindex_write_of_a_reduction(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        C_reindex = T.alloc_buffer((64, 64), "float32")
        for i0, i1, i2 in T.grid(64, 64, 64):
            with T.block("matmul"):
                i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                with T.init():
                    C_reindex[i, j] = T.float32(0)
                C_reindex[i, j] = C_reindex[i, j] + A[i, k] * B[k, j]
        for ax0, ax1 in T.grid(64, 64):
            with T.block("C_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                C[v0, v1] = C_reindex[v0, v1]

    golden(matmul, expected, lambda sch: sch.reindex(sch.get_block("matmul"), "C"))


def test_reindex_keeps_only_the_used_iterators(golden):
    @T.prim_func
    def expected(W: T.Buffer((7, 3, 16), "float32"), O: T.Buffer((16, 8), "float32")):
        W_reindex = T.alloc_buffer((16, 7, 3), "float32")
        for ax0, ax1, ax2 in T.grid(16, 7, 3):
            with T.block("W_reindex"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                W_reindex[v0, v1, v2] = W[v1, v2, v0]
        for i0, i1, i2, i3 in T.grid(16, 8, 7, 3):
            with T.block("O"):
                co, x, rh, rc = T.axis.remap("SSRR", [i0, i1, i2, i3])
                with T.init():
                    O[co, x] = T.float32(0)
                O[co, x] = O[co, x] + W_reindex[co, rh, rc]

    golden(weight_use, expected, lambda sch: sch.reindex(sch.get_block("O"), ("read", 0)))


def test_accesses_at_different_indices_fail(schedule_error):
    schedule_error(multiple_read, lambda sch: sch.reindex(sch.get_block("B"), ("read", 0)),
                   "reindex", "every access of A in tir.Block#0 to be a load or store with one set of indices",
                   "the block indexes it in more than one way")


def test_out_of_range_index_fails(schedule_error):
    schedule_error(transpose, lambda sch: sch.reindex(sch.get_block("B"), ("write", 3)), "reindex",
                   "the write buffer index 3 is out of range: the block tir.Block#0 has 1 write buffers")
