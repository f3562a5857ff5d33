"""tir.PlanBufferAllocationDown over a loop fused from several: its variable f is read as digits
of mixed radix (f // c, f // c % d or f % (c d) // c, f % c). Two iterations differ in one digit
at least, so the buffer moves into the loop when, for every digit, one dimension that reads no
other digit keeps that digit's values apart (a register tile of C under a parallel loop fused
from rows and columns of tiles); it stays where it is when a digit is not read (iterations that
differ only there touch the same elements) or the digits do not make up f."""

import pytest

from tessera import _core
from tessera.script import tir as T


def _plan(func):
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return _core.apply_pass("tir.PlanBufferAllocationDown", mod).lookup("main").script()


def _allocated_inside_the_loop(script):
    lines = script.splitlines()
    loop = next(i for i, line in enumerate(lines) if line.strip().startswith("for f in"))
    alloc = next(i for i, line in enumerate(lines) if "T.alloc_buffer" in line)
    return alloc > loop


def _tiles(rows, cols):
    """Y = A + 1 and C = 2 Y over 2 x 2 tiles, the tile loop fused from rows and columns of
    tiles: Y's tile (rows, cols) maps the fused variable to the tile's first row and column."""

    @T.prim_func
    def f(A: T.Buffer((6, 8), "float32"), C: T.Buffer((6, 8), "float32")):
        Y = T.alloc_buffer((6, 8))
        for f in range(12):
            for a, b in T.grid(2, 2):
                with T.block("Y"):
                    vi = T.axis.spatial(6, rows(f) + a)
                    vj = T.axis.spatial(8, cols(f) + b)
                    Y[vi, vj] = A[vi, vj] + T.float32(1)
            for a, b in T.grid(2, 2):
                with T.block("C"):
                    vi = T.axis.spatial(6, rows(f) + a)
                    vj = T.axis.spatial(8, cols(f) + b)
                    C[vi, vj] = Y[vi, vj] * T.float32(2)

    return f


@pytest.mark.parametrize("rows, cols, moves", [
    (lambda f: f // 4 * 2, lambda f: f % 4 * 2, True),   # both digits, one dimension each
    (lambda f: f // 4 * 2, lambda f: 0 * f, False),      # the column digit unread: shared tiles
    (lambda f: f // 6 * 2, lambda f: f % 4 * 2, False),  # f // 6 and f % 4 do not make up f
    (lambda f: f % 3 * 2, lambda f: f // 3 * 2, True),   # the digits in the other dimensions
])
def test_a_two_digit_loop(rows, cols, moves):
    assert _allocated_inside_the_loop(_plan(_tiles(rows, cols))) == moves


def test_three_digits_of_a_batch_row_and_column_loop():
    # f over 2 batches x 3 rows x 4 columns of tiles; the middle digit as f % 12 // 4
    @T.prim_func
    def f(A: T.Buffer((2, 6, 8), "float32"), C: T.Buffer((2, 6, 8), "float32")):
        Y = T.alloc_buffer((2, 6, 8))
        for f in range(24):
            for a, b in T.grid(2, 2):
                with T.block("Y"):
                    vn = T.axis.spatial(2, f // 12)
                    vi = T.axis.spatial(6, f % 12 // 4 * 2 + a)
                    vj = T.axis.spatial(8, f % 4 * 2 + b)
                    Y[vn, vi, vj] = A[vn, vi, vj] + T.float32(1)
            for a, b in T.grid(2, 2):
                with T.block("C"):
                    vn = T.axis.spatial(2, f // 12)
                    vi = T.axis.spatial(6, f // 4 % 3 * 2 + a)
                    vj = T.axis.spatial(8, f % 4 * 2 + b)
                    C[vn, vi, vj] = Y[vn, vi, vj] * T.float32(2)

    assert _allocated_inside_the_loop(_plan(f))


def test_a_dimension_reading_two_digits_does_not_count():
    # one flat dimension f // 4 * 8 + f % 4 * 2 + b: apart for every pair, but each digit's
    # dimension must read no other digit; the planner keeps the buffer where it is
    @T.prim_func
    def f(A: T.Buffer((48,), "float32"), C: T.Buffer((48,), "float32")):
        Y = T.alloc_buffer((48,))
        for f in range(12):
            for b in range(2):
                with T.block("Y"):
                    v = T.axis.spatial(48, f // 4 * 16 + f % 4 * 2 + b)
                    Y[v] = A[v] + T.float32(1)
            for b in range(2):
                with T.block("C"):
                    v = T.axis.spatial(48, f // 4 * 16 + f % 4 * 2 + b)
                    C[v] = Y[v] * T.float32(2)

    assert not _allocated_inside_the_loop(_plan(f))
