"""tir.InjectPrefetch: loops annotated pragma_prefetch prefetch their global reads ahead."""

import numpy as np

import tessera as ts
from tessera.script import tir as T
from tessera.tir import Schedule


def test_reads_are_prefetched_ahead(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in T.serial(64, annotations={"pragma_prefetch": 8}):
            B[i] = A[i] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            T.evaluate(T.call_extern("int32", "__builtin_prefetch", T.address_of(A[i + 8]), 0, 3))
            B[i] = A[i] * T.float32(2)

    golden("InjectPrefetch", before, expected)


def test_same_cache_line_once_and_inner_variables_skipped(golden):
    @T.prim_func
    def before(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        for i in T.serial(16, annotations={"pragma_prefetch": 2}):
            B[i * 16] = A[i * 16] + A[i * 16 + 1]
            for j in range(4):
                B[i * 16 + j] = A[j]

    @T.prim_func
    def expected(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        for i in range(16):
            T.evaluate(T.call_extern("int32", "__builtin_prefetch", T.address_of(A[i * 16 + 32]), 0, 3))
            B[i * 16] = A[i * 16] + A[i * 16 + 1]
            for j in range(4):
                B[i * 16 + j] = A[j]

    golden("InjectPrefetch", before, expected)


def test_reads_in_inner_loops_are_prefetched_at_the_loop_start(golden):
    # A vectorized loop cut to the host's vector width leaves an inner loop over the vectors.
    @T.prim_func
    def before(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        for i in T.serial(64, annotations={"pragma_prefetch": 4}):
            for j in range(2):
                B[i * 16 + j * 8:i * 16 + j * 8 + 8] = A[i * 16 + j * 8:i * 16 + j * 8 + 8]

    @T.prim_func
    def expected(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        for i in range(64):
            T.evaluate(T.call_extern("int32", "__builtin_prefetch", T.address_of(A[i * 16 + 64]), 0, 3))
            for j in range(2):
                B[i * 16 + j * 8:i * 16 + j * 8 + 8] = A[i * 16 + j * 8:i * 16 + j * 8 + 8]

    golden("InjectPrefetch", before, expected)


def test_without_annotation_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            B[i] = A[i]

    unchanged("InjectPrefetch", func)


def test_prefetch_builds_and_runs():
    @T.prim_func
    def func(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        for i in range(1024):
            with T.block("B"):
                vi = T.axis.spatial(1024, i)
                B[vi] = A[vi] + T.float32(1)

    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(i, [None, 16])
    sch.vectorize(ii)
    sch.annotate(io, "pragma_prefetch", 4)
    lib = ts.build(sch.mod, target="c")
    assert "__builtin_prefetch(" in lib.get_source()
    a = np.arange(1024, dtype="float32")
    b = np.empty_like(a)
    lib(a, b)
    np.testing.assert_array_equal(b, a + 1)
