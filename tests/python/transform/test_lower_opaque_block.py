"""tir.LowerOpaqueBlock: blocks are removed; allocations become T.allocate + T.decl_buffer."""

from tessera.script import tir as T


def test_blocks_removed_and_allocation_declared(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            Y = T.alloc_buffer((16,))
            for i in T.serial(16):
                with T.block("Y"):
                    T.reads(A[i])
                    T.writes(Y[i])
                    Y[i] = A[i] + T.float32(1)
            for i in T.serial(16):
                with T.block("B"):
                    T.reads(Y[i])
                    T.writes(B[i])
                    B[i] = Y[i] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        for i in T.serial(16):
            Y_1[i] = A[i] + T.float32(1)
        for i in T.serial(16):
            B[i] = Y_1[i] * T.float32(2)

    golden("LowerOpaqueBlock", before, expected)


def test_predicate_becomes_if(golden):
    @T.prim_func
    def before(A: T.Buffer((10,), "float32")):
        for io, ii in T.grid(3, 4):
            with T.block("A"):
                T.where(io * 4 + ii < 10)
                T.reads()
                T.writes(A[io * 4 + ii])
                A[io * 4 + ii] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((10,), "float32")):
        for io, ii in T.grid(3, 4):
            if io * 4 + ii < 10:
                A[io * 4 + ii] = T.float32(0)

    golden("LowerOpaqueBlock", before, expected)
