"""tir.ConvertBlocksToOpaque: block iterators are replaced by their bindings."""

import pytest

from tessera.error import TesseraError
from tessera.script import tir as T


def test_iterators_become_loop_expressions(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for io, ii in T.grid(4, 16):
            with T.block("B"):
                vi = T.axis.spatial(64, io * 16 + ii)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for io, ii in T.grid(4, 16):
            with T.block("B"):
                T.reads(A[io * 16 + ii])
                T.writes(B[io * 16 + ii])
                B[io * 16 + ii] = A[io * 16 + ii] + T.float32(1)

    golden("ConvertBlocksToOpaque", before, expected)


def test_predicate_and_init_are_kept(golden):
    @T.prim_func
    def before(A: T.Buffer((10, 8), "float32"), B: T.Buffer((10,), "float32")):
        for io, ii, k in T.grid(3, 4, 8):
            with T.block("B"):
                vi = T.axis.spatial(10, io * 4 + ii)
                vk = T.axis.reduce(8, k)
                T.where(io * 4 + ii < 10)
                T.reads(A[vi, vk], B[vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((10, 8), "float32"), B: T.Buffer((10,), "float32")):
        for io, ii, k in T.grid(3, 4, 8):
            with T.block("B"):
                T.where(io * 4 + ii < 10)
                T.reads(A[io * 4 + ii, k], B[io * 4 + ii])
                T.writes(B[io * 4 + ii])
                with T.init():
                    B[io * 4 + ii] = T.float32(0)
                B[io * 4 + ii] = B[io * 4 + ii] + A[io * 4 + ii, k]

    golden("ConvertBlocksToOpaque", before, expected)


def test_predicate_reading_the_blocks_own_iterator_is_rejected(apply):
    @T.prim_func(check_well_formed=False)
    def before(A: T.Buffer((8,), "int32")):
        for i in T.serial(8):
            with T.block("b"):
                vi = T.axis.remap("S", [i])
                T.where(vi < 6)
                A[vi] = 0

    with pytest.raises(TesseraError, match="block b's iterator vi occurs in its own predicate"):
        apply("ConvertBlocksToOpaque", before)
