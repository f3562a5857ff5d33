"""tir.CanonicalizeLoop: loops start at 0."""

from tessera.script import tir as T


def test_loop_minimum_moves_into_the_body(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for i in T.serial(4, 12):
            A[i] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for i in T.serial(8):
            A[i + 4] = T.float32(0)

    golden("CanonicalizeLoop", before, expected)


def test_zero_based_loops_are_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            A[i] = T.float32(0)

    unchanged("CanonicalizeLoop", func)
