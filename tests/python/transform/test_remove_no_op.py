"""tir.RemoveNoOp: statements without effect disappear."""

from tessera.script import tir as T


def test_empty_loops_branches_and_self_stores(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.serial(0):
            A[i] = T.float32(1)
        for i in T.serial(16):
            A[i] = A[i]
        if n > 3:
            T.evaluate(0)
        for i in T.serial(16):
            A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.serial(16):
            A[i] = T.float32(2)

    golden("RemoveNoOp", before, expected)


def test_unused_allocation_and_let(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        X = T.allocate([4], "float32", "global")
        x: T.int32 = 5
        A[0] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    golden("RemoveNoOp", before, expected)


def test_calls_with_effects_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        T.evaluate(T.call_extern("int32", "rand"))

    unchanged("RemoveNoOp", func)
