"""tir.LowerMatchBuffer: views declared with T.match_buffer become offset source accesses."""

import pytest

from tessera import tir
from tessera.error import TesseraError
from tessera.script import tir as T


def test_tile_view_reads_the_source_at_the_offset(golden):
    @T.prim_func
    def before(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for io, jo in T.grid(4, 4):
            with T.block("tile"):
                T.reads(A[io * 16:io * 16 + 16, jo * 16:jo * 16 + 16])
                T.writes(B[io * 16:io * 16 + 16, jo * 16:jo * 16 + 16])
                At = T.match_buffer(A[io * 16:io * 16 + 16, jo * 16:jo * 16 + 16], (16, 16))
                Bt = T.match_buffer(B[io * 16:io * 16 + 16, jo * 16:jo * 16 + 16], (16, 16))
                for i, j in T.grid(16, 16):
                    Bt[i, j] = At[i, j] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for io, jo in T.grid(4, 4):
            with T.block("tile"):
                T.reads(A[io * 16:io * 16 + 16, jo * 16:jo * 16 + 16])
                T.writes(B[io * 16:io * 16 + 16, jo * 16:jo * 16 + 16])
                for i, j in T.grid(16, 16):
                    B[io * 16 + i, jo * 16 + j] = A[io * 16 + i, jo * 16 + j] * T.float32(2)

    golden("LowerMatchBuffer", before, expected)


def test_lower_rank_view_fixes_the_leading_dimension(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 32), "float32")):
        for r in T.serial(8):
            with T.block("row"):
                T.reads(A[r, 0:32])
                T.writes(A[r, 0:32])
                Ar = T.match_buffer(A[r, 0:32], (32,))
                for j in T.serial(32):
                    Ar[j] = Ar[j] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8, 32), "float32")):
        for r in T.serial(8):
            with T.block("row"):
                T.reads(A[r, 0:32])
                T.writes(A[r, 0:32])
                for j in T.serial(32):
                    A[r, j] = A[r, j] + T.float32(1)

    golden("LowerMatchBuffer", before, expected)


def test_view_that_does_not_fit_its_region_is_rejected(apply):
    # The script parser already refuses it (as TVM's MatchBufferRegion does) ...
    with pytest.raises(TesseraError, match=r"extents \(16\) do not match the shape \(32\)"):
        @T.prim_func
        def bad_script(A: T.Buffer((64,), "float32")):
            with T.block("view"):
                T.reads(A[0:16])
                T.writes(A[0:16])
                Av = T.match_buffer(A[0:16], (32,))
                for i in T.serial(16):
                    Av[i] = T.float32(0)

    # ... and the pass refuses the same IR built by hand.
    a = tir.Var("a", "handle")
    A = tir.decl_buffer((64,), "float32", name="A")
    Av = tir.decl_buffer((32,), "float32", name="Av")
    i = tir.Var("i", "int32")
    loop = tir.For(i, 0, 16, tir.ForKind.SERIAL, tir.BufferStore(Av, tir.const(0.0, "float32"), [i]))
    view = tir.Block([], [A[0:16]], [A[0:16]], "view", loop,
                     match_buffers=[tir.MatchBufferRegion(Av, A[0:16])])
    bad = tir.PrimFunc([a], tir.BlockRealize([], True, view), buffer_map={a: A})
    with pytest.raises(TesseraError, match="shape\\[0\\] is 32 but the region's extent is 16"):
        apply("LowerMatchBuffer", bad)


def test_symbolic_strides_take_the_source_strides(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 8), "float32")):
        for i in T.serial(8):
            with T.block("row"):
                T.reads()
                T.writes(A[i, 0:8])
                s0 = T.int32()
                s1 = T.int32()
                Ar = T.match_buffer(A[i, 0:8], (1, 8), strides=[s0, s1], offset_factor=1)
                for j in T.serial(8):
                    Ar[0, j] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((8, 8), "float32")):
        for i in T.serial(8):
            with T.block("row"):
                T.reads()
                T.writes(A[i, 0:8])
                for j in T.serial(8):
                    A[i, j] = T.float32(0)

    golden("LowerMatchBuffer", before, expected)


def test_stride_variable_bound_to_two_values_is_rejected(apply):
    @T.prim_func(check_well_formed=False)
    def before(A: T.Buffer((8, 8), "float32")):
        for i in T.serial(8):
            with T.block("row"):
                T.reads()
                T.writes(A[i, 0:8])
                s = T.int32()
                Ar = T.match_buffer(A[i, 0:8], (1, 8), strides=[s, s], offset_factor=1)
                for j in T.serial(8):
                    Ar[0, j] = T.float32(0)

    with pytest.raises(TesseraError, match=r"strides\[1\] is 8 but the region gives 1"):
        apply("LowerMatchBuffer", before)


def test_stride_that_is_not_an_integer_is_rejected(apply):
    @T.prim_func(check_well_formed=False)
    def before(A: T.Buffer((8, 8), "float32"), m: T.handle, n: T.handle):
        for i in T.serial(8):
            with T.block("row"):
                T.reads()
                T.writes(A[i, 0:8])
                Ar = T.match_buffer(A[i, 0:8], (1, 8), strides=[m, n], offset_factor=1)
                for j in T.serial(8):
                    Ar[0, j] = T.float32(0)

    with pytest.raises(TesseraError, match=r"strides\[0\] m has type handle, where an integer"):
        apply("LowerMatchBuffer", before)
