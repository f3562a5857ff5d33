"""tir.StorageRewrite: allocations whose lifetimes do not overlap share storage."""

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

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        X = T.allocate([16], "float32", "global")
        X_1 = T.decl_buffer((16,), "float32", data=X)
        Y = T.allocate([16], "float32", "global")
        Y_1 = T.decl_buffer((16,), "float32", data=Y)
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
