"""tir.PlanAndUpdateBufferAllocationLocation, TVM v0.23's rules: an allocation goes to the lowest
common ancestor of its accesses; at a loop, a new opaque block holds it, and block reads/writes
leave out buffers allocated inside them."""

from tessera.script import tir as T


def test_allocation_moves_into_the_loop_that_encloses_every_access(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
        Y = T.alloc_buffer((4, 8))
        for i in range(4):
            for j in range(8):
                with T.block("Y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Y[vi, vj] = A[vi, vj] + T.float32(1)
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = Y[vi, vj] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
        for i in range(4):
            with T.block(""):
                T.reads(A[i, 0:8])
                T.writes(C[i, 0:8])
                Y = T.alloc_buffer((4, 8))
                for j in range(8):
                    with T.block("Y"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        Y[vi, vj] = A[vi, vj] + T.float32(1)
                for j in range(8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        C[vi, vj] = Y[vi, vj] * T.float32(2)

    golden("PlanAndUpdateBufferAllocationLocation", before, expected)


def test_a_block_stops_listing_a_buffer_allocated_inside_it(golden):
    # Y, allocated at the root, is only accessed inside one iteration of the loop in "produce": it
    # moves into that loop, and "produce" no longer lists Y among the buffers it writes.
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        Y = T.alloc_buffer((8,))
        with T.block("produce"):
            T.reads(A[0:8])
            T.writes(Y[0:8], C[0:8])
            for i in range(8):
                Y[i] = A[i]
                C[i] = Y[i]

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block("produce"):
                T.reads(A[0:8])
                T.writes(C[0:8])
                for i in range(8):
                    with T.block(""):
                        T.reads(A[i])
                        T.writes(C[i])
                        Y = T.alloc_buffer((8,))
                        Y[i] = A[i]
                        C[i] = Y[i]

    golden("PlanAndUpdateBufferAllocationLocation", before, expected)
