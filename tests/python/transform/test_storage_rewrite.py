"""tir.StorageRewrite: allocations whose lifetimes do not overlap share storage."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def test_dead_temporary_is_reused(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        Z = T.allocate([8], "float32", "global")
        Z_1 = T.decl_buffer((8,), "float32", data=Z)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            Y_1[i] = X_1[i] + T.float32(1)
        for i in T.serial(8):
            Z_1[i] = Y_1[i] * T.float32(2)
        for i in T.serial(8):
            B[i] = Z_1[i]

    # Y and Z are written in place of the buffer each reads (each element from the same element
    # of the last one): all three share X's storage, as in TVM.
    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y_1 = T.decl_buffer((16,), "float32", data=X)
        Z_1 = T.decl_buffer((8,), "float32", data=X)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            Y_1[i] = X_1[i] + T.float32(1)
        for i in T.serial(8):
            Z_1[i] = Y_1[i] * T.float32(2)
        for i in T.serial(8):
            B[i] = Z_1[i]

    golden("StorageRewrite", before, expected)


def test_different_types_or_overlapping_lifetimes_stay_apart(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "int32", "global")
        Y_1 = T.decl_buffer((16,), "int32", data=Y)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            Y_1[i] = T.Cast("int32", X_1[i])
        for i in T.serial(16):
            B[i] = Y_1[i]

    unchanged("StorageRewrite", func)


def test_disabled_by_config(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            A[i] = X_1[i]
        for i in T.serial(16):
            Y_1[i] = A[i]
        for i in T.serial(16):
            A[i] = Y_1[i]

    with ts.transform.PassContext(config={"tir.disable_storage_rewrite": True}):
        unchanged("StorageRewrite", func)


def test_dead_temporary_storage_is_reused_later(golden):
    # X is dead after the second loop; Y, first written two statements later, takes its storage.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            A[i] = X_1[15 - i]
        for i in T.serial(16):
            Y_1[i] = A[i]
        for i in T.serial(16):
            A[i] = Y_1[15 - i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y_1 = T.decl_buffer((16,), "float32", data=X)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            A[i] = X_1[15 - i]
        for i in T.serial(16):
            Y_1[i] = A[i]
        for i in T.serial(16):
            A[i] = Y_1[15 - i]

    golden("StorageRewrite", before, expected)


def test_not_in_place_when_another_element_is_read(unchanged):
    # Y[i] reads X[15 - i], which an earlier iteration would have overwritten.
    @T.prim_func
    def func(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            Y_1[i] = X_1[15 - i]
        for i in T.serial(16):
            A[i] = Y_1[i]

    unchanged("StorageRewrite", func)


def test_not_in_place_when_an_element_is_written_twice(unchanged):
    # The store ignores j: the second j iteration would read the element the first one wrote.
    @T.prim_func
    def func(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i, j in T.grid(16, 2):
            Y_1[i] = X_1[i] + T.float32(1)
        for i in T.serial(16):
            A[i] = Y_1[i]

    unchanged("StorageRewrite", func)


def test_unused_allocation_goes_with_its_declaration(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        U = T.allocate([16], "float32", "global")
        U_1 = T.decl_buffer((16,), "float32", data=U)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            A[i] = X_1[15 - i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        for i in T.serial(16):
            X_1[i] = A[i]
        for i in T.serial(16):
            A[i] = X_1[15 - i]

    golden("StorageRewrite", before, expected)


def test_buffers_of_several_axes_share_only_with_their_own_shape(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16, 16), "float32")):
        X = T.allocate([16, 16], "float32", "global")
        X_1 = T.decl_buffer((16, 16), "float32", data=X, axis_separators=[1])
        Y = T.allocate([20, 20], "float32", "global")
        Y_1 = T.decl_buffer((20, 20), "float32", data=Y, axis_separators=[1])
        for i, j in T.grid(16, 16):
            X_1[i, j] = A[i, j]
        for i, j in T.grid(16, 16):
            A[i, j] = X_1[i, j]
        for i, j in T.grid(16, 16):
            Y_1[i, j] = A[i, j]
        for i, j in T.grid(16, 16):
            A[i, j] = Y_1[i, j]

    unchanged("StorageRewrite", func)


def test_allocations_move_out_of_serial_loops_and_share(golden):
    # As in TVM: allocations move to the top of the function out of serial loops, so A and B,
    # each alive within one iteration of its own loop, share one allocation.
    @T.prim_func
    def before(X: T.Buffer((10,), "float32"), n: T.int32):
        for i in range(n):
            for j in range(10):
                A = T.allocate([200], "float32", "global")
                A_1 = T.Buffer((200,), data=A)
                A_1[j] = X[j]
                X[j] = A_1[j] + T.float32(1)
            for j in range(10):
                B = T.allocate([200], "float32", "global")
                B_1 = T.Buffer((200,), data=B)
                B_1[j] = X[j]
                X[j] = B_1[j] * T.float32(2)

    @T.prim_func
    def expected(X: T.Buffer((10,), "float32"), n: T.int32):
        A = T.allocate([200], "float32", "global")
        for i in range(n):
            for j in range(10):
                A_1 = T.Buffer((200,), data=A)
                A_1[j] = X[j]
                X[j] = A_1[j] + T.float32(1)
            for j in range(10):
                B_1 = T.Buffer((200,), data=A)
                B_1[j] = X[j]
                X[j] = B_1[j] * T.float32(2)

    golden("StorageRewrite", before, expected)


def test_allocation_alive_across_a_loop_keeps_its_own_storage(golden):
    # A is allocated outside the loop and read in every iteration: it lives across the whole
    # loop, so B (allocated inside) cannot take its storage even though B's uses come after
    # A's in the loop body.
    @T.prim_func
    def before(X: T.Buffer((10,), "float32")):
        A = T.allocate([10], "float32", "global")
        A_1 = T.Buffer((10,), data=A)
        for j in range(10):
            A_1[j] = X[j]
        for i in range(4):
            X[i] = A_1[i]
            B = T.allocate([10], "float32", "global")
            B_1 = T.Buffer((10,), data=B)
            B_1[i] = X[i]
            X[i] = B_1[i]

    @T.prim_func
    def expected(X: T.Buffer((10,), "float32")):
        B = T.allocate([10], "float32", "global")
        A = T.allocate([10], "float32", "global")
        A_1 = T.Buffer((10,), data=A)
        for j in range(10):
            A_1[j] = X[j]
        for i in range(4):
            X[i] = A_1[i]
            B_1 = T.Buffer((10,), data=B)
            B_1[i] = X[i]
            X[i] = B_1[i]

    golden("StorageRewrite", before, expected)


def test_parallel_loop_keeps_its_allocations_and_loop_sized_ones_stay(golden):
    # A parallel loop's iterations need storage of their own: its allocations move to the top
    # of its body, not out of it. An allocation sized by a loop variable stays in that loop.
    @T.prim_func
    def before(X: T.Buffer((64,), "float32")):
        for i in T.parallel(4):
            for j in range(4):
                A = T.allocate([16], "float32", "global")
                A_1 = T.Buffer((16,), data=A)
                A_1[j] = X[i * 16 + j]
                X[i * 16 + j] = A_1[j]
                C = T.allocate([j + 1], "float32", "global")
                C_1 = T.Buffer((j + 1,), data=C)
                C_1[0] = X[j]
                X[j] = C_1[0]

    @T.prim_func
    def expected(X: T.Buffer((64,), "float32")):
        for i in T.parallel(4):
            A = T.allocate([16], "float32", "global")
            for j in range(4):
                A_1 = T.Buffer((16,), data=A)
                A_1[j] = X[i * 16 + j]
                X[i * 16 + j] = A_1[j]
                C = T.allocate([j + 1], "float32", "global")
                C_1 = T.Buffer((j + 1,), data=C)
                C_1[0] = X[j]
                X[j] = C_1[0]

    golden("StorageRewrite", before, expected)


@pytest.fixture
def sram():
    """A special memory: 64-bit wide accesses, 256 bits."""
    ts.runtime.register_func("tvm.info.mem.local.tsr_sram", lambda: ts.target.MemoryInfo(
        unit_bits=16, max_simd_bits=64, max_num_bits=256), override=True)
    yield
    ts.runtime.remove_global_func("tvm.info.mem.local.tsr_sram")


def test_special_memory_shares_storage_across_types(golden, sram):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((32,), "int16")):
        X = T.allocate([4], "float32", "local.tsr_sram")
        X_1 = T.decl_buffer((4,), "float32", data=X, scope="local.tsr_sram")
        Y = T.allocate([8], "int16", "local.tsr_sram")
        Y_1 = T.decl_buffer((8,), "int16", data=Y, scope="local.tsr_sram")
        for i in T.serial(4):
            X_1[i] = A[i]
        for i in T.serial(4):
            A[i] = X_1[3 - i]
        for i in T.serial(8):
            Y_1[i] = B[i]
        for i in T.serial(8):
            B[i] = Y_1[7 - i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((32,), "int16")):
        X = T.allocate([4], "float32", "local.tsr_sram")
        X_1 = T.decl_buffer((4,), "float32", data=X, scope="local.tsr_sram")
        Y_1 = T.decl_buffer((8,), "int16", data=X, scope="local.tsr_sram")
        for i in T.serial(4):
            X_1[i] = A[i]
        for i in T.serial(4):
            A[i] = X_1[3 - i]
        for i in T.serial(8):
            Y_1[i] = B[i]
        for i in T.serial(8):
            B[i] = Y_1[7 - i]

    golden("StorageRewrite", before, expected)


def test_special_memory_is_one_allocation_laid_out_at_aligned_offsets(golden, sram):
    # X takes 96 bits, rounded up to the 64-bit access width: Y starts at bit 128, its element 8.
    @T.prim_func
    def before(A: T.Buffer((3,), "float32"), B: T.Buffer((5,), "int16")):
        X = T.allocate([3], "float32", "local.tsr_sram")
        X_1 = T.decl_buffer((3,), "float32", data=X, scope="local.tsr_sram")
        Y = T.allocate([5], "int16", "local.tsr_sram")
        Y_1 = T.decl_buffer((5,), "int16", data=Y, scope="local.tsr_sram")
        for i in T.serial(3):
            X_1[i] = A[i]
        for i in T.serial(5):
            Y_1[i] = B[i]
        for i in T.serial(3):
            A[i] = X_1[i] + T.float32(1)
        for i in T.serial(5):
            B[i] = Y_1[i] + T.int16(1)

    @T.prim_func
    def expected(A: T.Buffer((3,), "float32"), B: T.Buffer((5,), "int16")):
        X = T.allocate([8], "float32", "local.tsr_sram")
        X_1 = T.decl_buffer((3,), "float32", data=X, scope="local.tsr_sram")
        Y_1 = T.decl_buffer((5,), "int16", data=X, scope="local.tsr_sram")
        for i in T.serial(3):
            X_1[i] = A[i]
        for i in T.serial(5):
            Y_1[i + 8] = B[i]
        for i in T.serial(3):
            A[i] = X_1[i] + T.float32(1)
        for i in T.serial(5):
            B[i] = Y_1[i + 8] + T.int16(1)

    golden("StorageRewrite", before, expected)


def test_special_memory_over_its_capacity_is_an_error(sram, apply):
    @T.prim_func
    def func(A: T.Buffer((6,), "float32")):
        X = T.allocate([6], "float32", "local.tsr_sram")
        X_1 = T.decl_buffer((6,), "float32", data=X, scope="local.tsr_sram")
        Y = T.allocate([6], "float32", "local.tsr_sram")
        Y_1 = T.decl_buffer((6,), "float32", data=Y, scope="local.tsr_sram")
        for i in T.serial(6):
            X_1[i] = A[i]
        for i in T.serial(6):
            Y_1[i] = A[i]
        for i in T.serial(6):
            A[i] = X_1[i] + Y_1[i]

    with pytest.raises(ValueError, match=r'"local.tsr_sram" need 384 bits, more than the 256'):
        apply("StorageRewrite", func)


def test_single_store_in_place_shares_within_a_loop(golden):
    # Y[j] is written from X[j] alone, X's last use: Y takes X's storage.
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        for j in range(4):
            X = T.allocate([4], "float32", "global")
            X_1 = T.decl_buffer((4,), "float32", data=X)
            Y = T.allocate([4], "float32", "global")
            Y_1 = T.decl_buffer((4,), "float32", data=Y)
            X_1[j] = A[j]
            Y_1[j] = X_1[j] * T.float32(2)
            A[j] = Y_1[j]

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        X = T.allocate([4], "float32", "global")
        for j in range(4):
            X_1 = T.decl_buffer((4,), "float32", data=X)
            Y_1 = T.decl_buffer((4,), "float32", data=X)
            X_1[j] = A[j]
            Y_1[j] = X_1[j] * T.float32(2)
            A[j] = Y_1[j]

    golden("StorageRewrite", before, expected)


def test_single_store_in_place_builds_and_matches_numpy():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for j in range(4):
            X = T.allocate([4], "float32", "global")
            X_1 = T.decl_buffer((4,), "float32", data=X)
            Y = T.allocate([4], "float32", "global")
            Y_1 = T.decl_buffer((4,), "float32", data=Y)
            X_1[j] = A[j] + T.float32(1)
            Y_1[j] = X_1[j] * T.float32(2)
            A[j] = Y_1[j]

    a = np.arange(4, dtype="float32")
    expect = (a + 1) * 2
    ts.build(func, target="c")(a)
    np.testing.assert_allclose(a, expect)
