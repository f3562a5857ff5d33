"""IRModules: functions that call each other, scalar parameters, return values, attributes."""

from tessera.script import ir as I
from tessera.script import tir as T


@I.ir_module
class CallingModule:
    @T.prim_func
    def main(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = cls.add_one(i) + cls.twice(i)

    @T.prim_func(private=True)
    def add_one(x: T.int32) -> T.int32:
        return x + 1

    @T.prim_func
    def twice(x: T.int32) -> T.int32:
        return cls.add_one(x) + x - 1


@I.ir_module
class ModuleWithAttrs:
    I.module_attrs({"target_hint": "c", "version": 2})

    @T.prim_func
    def main(a: T.handle):
        T.func_attr({"tir.noalias": True})
        A = T.match_buffer(a, (8,), "float32")
        for i in range(8):
            A[i] = T.float32(0)


@T.prim_func
def scalar_return(a: T.int32, b: T.int32) -> T.int32:
    return T.max(a, b) - T.min(a, b)


@T.prim_func
def bool_return(x: T.float32) -> T.bool:
    return x > T.float32(0)


@T.prim_func
def renamed_symbol(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "exported_name"})
    A[0] = T.float32(1)


@T.prim_func(private=True)
def private_function(A: T.Buffer((4,), "float32")):
    A[0] = T.float32(2)


@I.ir_module
class BufferPassingModule:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        T.evaluate(cls.fill(A.data, 8))

    @T.prim_func
    def fill(p: T.handle("float32", "global"), n: T.int32) -> T.int32:
        P = T.decl_buffer((8,), "float32", data=p)
        for i in range(n):
            P[i] = T.float32(1)
        return 0
