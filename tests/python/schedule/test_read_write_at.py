"""read_at / write_at: per-iteration copies of a buffer region into another scope."""

from tessera.script import tir as T


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i0 in T.thread_binding(4, thread="blockIdx.x"):
        for i1 in T.thread_binding(4, thread="threadIdx.x"):
            for k0 in range(8):
                for k1, j in T.grid(8, 64):
                    with T.block("C"):
                        vi = T.axis.spatial(64, i0 * 16 + i1 * 4)
                        vj = T.axis.spatial(64, j)
                        vk = T.axis.reduce(64, k0 * 8 + k1)
                        T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_read_at_shared(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        A_shared = T.alloc_buffer((64, 64), "float32", scope="shared")
        for i0 in T.thread_binding(4, thread="blockIdx.x"):
            for i1 in T.thread_binding(4, thread="threadIdx.x"):
                for k0 in range(8):
                    with T.block("A_shared"):
                        v0, v1 = T.axis.remap("SS", [i0, k0])
                        T.reads(A[v0 * 16 : v0 * 16 + 13, v1 * 8 : v1 * 8 + 8])
                        T.writes(A_shared[v0 * 16 : v0 * 16 + 13, v1 * 8 : v1 * 8 + 8])
                        T.block_attr({"auto_copy": True})
                        for ax0, ax1 in T.grid(13, 8):
                            A_shared[v0 * 16 + ax0, v1 * 8 + ax1] = A[v0 * 16 + ax0, v1 * 8 + ax1]
                    for k1, j in T.grid(8, 64):
                        with T.block("C"):
                            vi = T.axis.spatial(64, i0 * 16 + i1 * 4)
                            vj = T.axis.spatial(64, j)
                            vk = T.axis.reduce(64, k0 * 8 + k1)
                            T.reads(C[vi, vj], A_shared[vi, vk], B[vk, vj])
                            T.writes(C[vi, vj])
                            with T.init():
                                C[vi, vj] = T.float32(0)
                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]

    def apply(sch):
        block = sch.get_block("C")
        k0 = sch.get_loops(block)[2]
        copy = sch.read_at(k0, block, 1, "shared")
        assert sch.get(copy).name_hint == "A_shared"
        assert sch.trace.as_python()[-1] == (
            'b6 = sch.read_at(loop=l3, block=b0, read_buffer_index=1, storage_scope="shared")')

    golden(matmul, expected, apply)


def test_loop_not_above_the_block_fails(schedule_error):
    @T.prim_func
    def two(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]
        for i in range(8):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi]

    schedule_error(two, lambda sch: sch.read_at(sch.get_loops(sch.get_block("B"))[0],
                                                sch.get_block("C"), 0, "shared"),
                   "read_at", "read_at: the loop tir.For#0 is not an ancestor of block tir.Block#1")
