"""tir.RemoveNoOp: statements without effect disappear."""

import tessera as ts
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


def test_analyzer_facts_decide_empty_loops_and_self_stores(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            for j in T.serial(i - 20):  # never runs: i - 20 < 0
                B[i] = A[i] + j
        for io, ii in T.grid(4, 4):
            k = 4 * io + ii
            A[4 * io + ii] = A[k]  # the same element under another form
        for i in T.serial(16):
            if i != 0:
                A[i] = A[i - 1]
            else:
                A[i] = A[0]  # i == 0 here
        for i in T.serial(16):
            if i < 8:
                T.evaluate(0)
            else:
                B[i] = 1

    @T.prim_func
    def expected(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            if i != 0:
                A[i] = A[i - 1]
        for i in T.serial(16):
            if not (i < 8):
                B[i] = 1

    golden("RemoveNoOp", before, expected)


def test_different_elements_and_unknown_extents_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "int32"), n: T.int32):
        for i in T.serial(15):
            A[i] = A[i + 1]
        for i in T.serial(16):
            for j in T.serial(n - i):
                A[i] = j

    unchanged("RemoveNoOp", func)


def test_unused_let_with_an_effect_is_evaluated(golden):
    @T.prim_func
    def before():
        x: T.int32 = T.call_extern("int32", "side_effect")
        T.evaluate(0)

    @T.prim_func
    def expected():
        T.evaluate(T.call_extern("int32", "side_effect"))

    golden("RemoveNoOp", before, expected)


DATAFLOW = {"tir.RemoveNoOp": {"use_dataflow_analysis": True}}


def test_overwritten_writes_go_with_dataflow(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            B[i] = T.call_extern("int32", "f")
            B[i] = 100
            B[i] = 42
        for i in T.serial(2, 10):
            if i < 9:
                A[i] = 100
        for i in T.serial(16):
            B[i] = 7
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = 42

    @T.prim_func
    def expected(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            T.evaluate(T.call_extern("int32", "f"))
            B[i] = 42
        for i in T.serial(16):
            B[i] = 7
        for i in T.serial(16):
            if i // 4 < 3:
                A[i] = 42

    with ts.transform.PassContext(config=DATAFLOW):
        golden("RemoveNoOp", before, expected)
    golden("RemoveNoOp", before, before)  # only with the option


def test_writes_read_or_partly_overwritten_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            A[i] = 100
            A[i] = A[i] + 1
        for i in T.serial(16):
            B[i] = 100
        for i in T.serial(16):
            if i < 12:
                B[i] = 42
        for i in T.serial(16):
            A[i] = 5
        B[0] = A[3]
        for i in T.serial(16):
            A[i] = 6
        B[1] = 1
        T.evaluate(T.call_extern("int32", "reads_b", B.data))  # may read B[1]
        B[1] = 2

    with ts.transform.PassContext(config=DATAFLOW):
        unchanged("RemoveNoOp", func)


def test_store_of_the_value_held_goes_with_dataflow(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            A[i] = i
        for i in T.serial(16):
            A[i] = i
        A[4] = 4
        B[0] = 3
        B[1] = 3
        B[0] = 3
        B[0] = B[0] + A[0]

    @T.prim_func
    def expected(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            A[i] = i
        B[0] = 3
        B[1] = 3
        B[0] = B[0] + A[0]

    with ts.transform.PassContext(config=DATAFLOW):
        golden("RemoveNoOp", before, expected)


def test_overwrite_inside_a_loop_range_that_depends_on_an_outer_loop(golden, unchanged):
    @T.prim_func
    def covered(A: T.Buffer((4, 4), "int32")):
        for i in T.serial(2):
            A[i + 2, 1] = 1  # rows 2 and 3 of the triangle written next
        for i in T.serial(4):
            for j in T.serial(i + 1):
                A[i, j] = 2

    @T.prim_func
    def expected(A: T.Buffer((4, 4), "int32")):
        for i in T.serial(4):
            for j in T.serial(i + 1):
                A[i, j] = 2

    @T.prim_func
    def not_covered(A: T.Buffer((4, 4), "int32")):
        for i in T.serial(2):
            A[i, 1] = 1  # A[0, 1] lies above the triangle written next
        for i in T.serial(4):
            for j in T.serial(i + 1):
                A[i, j] = 2

    with ts.transform.PassContext(config=DATAFLOW):
        golden("RemoveNoOp", covered, expected)
        unchanged("RemoveNoOp", not_covered)
