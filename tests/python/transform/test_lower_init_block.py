"""tir.LowerInitBlock: T.init() becomes an `if` on the reduction iterators at their minimum."""

from tessera.script import tir as T


def test_reduction_init_becomes_guarded_store(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 32):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk], B[vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 32):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk], B[vi])
                T.writes(B[vi])
                if vk == 0:
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    golden("LowerInitBlock", before, expected)


def test_two_reduction_iterators_all_at_their_minimum(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 4, 4), "float32"), B: T.Buffer((8,), "float32")):
        for i, k, l in T.grid(8, 4, 4):
            with T.block("B"):
                vi, vk, vl = T.axis.remap("SRR", [i, k, l])
                T.reads(A[vi, vk, vl], B[vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(-1)
                B[vi] = T.max(B[vi], A[vi, vk, vl])

    @T.prim_func
    def expected(A: T.Buffer((8, 4, 4), "float32"), B: T.Buffer((8,), "float32")):
        for i, k, l in T.grid(8, 4, 4):
            with T.block("B"):
                vi, vk, vl = T.axis.remap("SRR", [i, k, l])
                T.reads(A[vi, vk, vl], B[vi])
                T.writes(B[vi])
                if vk == 0 and vl == 0:
                    B[vi] = T.float32(-1)
                B[vi] = T.max(B[vi], A[vi, vk, vl])

    golden("LowerInitBlock", before, expected)


def test_function_without_init_is_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(1)

    unchanged("LowerInitBlock", func)
