"""transform_layout with pad_value: the four ways TVM fills the padding a map introduces (the
producer rewritten with if_then_else, a padding block after the producer, an assumption block
for an input, nothing when the map is bijective), their errors, and a numeric check."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def copy14(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    for i in T.serial(14):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + 1
    for i in T.serial(14):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi]


def split4(i):
    return (i // 4, i % 4)


def test_producer_rewritten_with_if_then_else(golden):
    @T.prim_func
    def expected(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
        B = T.alloc_buffer((4, 4), "int32")
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.if_then_else(vi == 3 and 2 <= vj, -7, A[vi * 4 + vj] + 1)
        for i in T.serial(14):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi // 4, vi % 4]

    sch = golden(copy14, expected,
                 lambda sch: sch.transform_layout(sch.get_block("B"), ("write", 0), split4, pad_value=-7))
    assert sch.trace.as_python()[-1].endswith(
        "pad_value=lambda i0, i1: (-7,), assume_injective_transform=False)")


def test_pad_value_function_of_the_new_indices(golden):
    @T.prim_func
    def expected(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
        B = T.alloc_buffer((4, 4), "int32")
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.if_then_else(vi == 3 and 2 <= vj, vi * 10 + vj, A[vi * 4 + vj] + 1)
        for i in T.serial(14):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi // 4, vi % 4]

    golden(copy14, expected,
           lambda sch: sch.transform_layout("B", "B", split4, pad_value=lambda a, b: a * 10 + b))


def test_padding_block_when_the_producer_writes_more(golden):
    @T.prim_func
    def before(A: T.Buffer((6,), "float32"), D: T.Buffer((6,), "float32")):
        B = T.alloc_buffer((6,))
        for i in T.serial(6):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]
                D[vi] = A[vi] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((6,), "float32"), D: T.Buffer((6,), "float32")):
        B = T.alloc_buffer((2, 4))
        for i in T.serial(6):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi // 4, vi % 4] = A[vi]
                D[vi] = A[vi] * T.float32(2)
        for i, j in T.grid(2, 4):
            with T.block("B_pad"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(i == 1 and 2 <= j)
                B[vi, vj] = T.float32(0.5)

    golden(before, expected,
           lambda sch: sch.transform_layout("B", "B", split4, pad_value=0.5))


def test_assumption_for_an_input(golden):
    @T.prim_func
    def expected(A: T.Buffer((4, 4), "int32"), C: T.Buffer((14,), "int32")):
        B = T.alloc_buffer((14,), "int32")
        for i, j in T.grid(4, 4):
            with T.block("A_assume"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.evaluate(T.assume(not (vi == 3 and 2 <= vj) or A[vi, vj] == 0))
        for i in T.serial(14):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi // 4, vi % 4] + 1
        for i in T.serial(14):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi]

    golden(copy14, expected,
           lambda sch: sch.transform_layout("B", ("read", 0), split4, pad_value=0))


def test_bijective_map_ignores_pad_value(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = vi

    @T.prim_func
    def expected(A: T.Buffer((4, 4), "int32")):
        for i in T.serial(16):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi // 4, vi % 4] = vi

    golden(before, expected, lambda sch: sch.transform_layout("A", "A", split4, pad_value=3))


def test_assume_injective_transform_pads_silently(golden):
    @T.prim_func
    def expected(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
        B = T.alloc_buffer((4, 4), "int32")
        for i in T.serial(14):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi // 4, vi % 4] = A[vi] + 1
        for i in T.serial(14):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi // 4, vi % 4]

    sch = golden(copy14, expected,
                 lambda sch: sch.transform_layout("B", "B", split4, assume_injective_transform=True))
    assert sch.trace.as_python()[-1].endswith("assume_injective_transform=True)")


@pytest.mark.parametrize("pad_value, fragment", [
    (None, "would introduce padding wherever axis0 == 3 and 2 <= axis1 is true"),
    (tir.IntImm("int8", 0), "fills padding with lambda i0, i1: (T.int8(0),), which is of type int8"),
    (0.5, "which is of type float32"),
    (lambda i, j: (i, j), "must map to a single value"),
])
def test_padding_errors(schedule_error, pad_value, fragment):
    schedule_error(copy14, lambda sch: sch.transform_layout("B", "B", split4, pad_value=pad_value),
                   "transform_layout", fragment)


def test_pad_value_may_not_load_another_buffer(schedule_error):
    other = tir.decl_buffer((1,), "int32", name="other")
    schedule_error(copy14,
                   lambda sch: sch.transform_layout("B", "B", split4, pad_value=lambda i, j: other[0]),
                   "transform_layout", "pad_value lambda i, j: (other[0],) loads from other")


def test_padded_output_numbers():
    """The transformed output holds A + 1 in row-major order and the pad value after it."""
    @T.prim_func
    def out14(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32")):
        for i in T.serial(14):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + 1

    sch = tir.Schedule(out14)
    sch.transform_layout("B", "B", split4, pad_value=-1)
    lib = ts.build(sch.mod, target="c")
    a = np.arange(14, dtype="int32")
    b = ts.nd.array(np.zeros((4, 4), "int32"))
    lib(ts.nd.array(a), b)
    want = np.concatenate([a + 1, [-1, -1]]).reshape(4, 4)
    np.testing.assert_array_equal(b.numpy(), want)
