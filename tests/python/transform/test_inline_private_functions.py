"""tir.InlinePrivateFunctions: call statements of private functions become their bodies."""

import numpy as np

import tessera as ts
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T

inline = ts.tir.transform.InlinePrivateFunctions


def test_each_call_gets_its_own_copy_and_the_callee_goes():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32")):
            for r in range(4):
                Before.scale(T.address_of(A[r, 0]), T.float32(2))
            Before.scale(T.address_of(A[0, 0]), T.float32(3))

        @T.prim_func(private=True)
        def scale(row_data: T.handle("float32"), k: T.float32):
            row = T.decl_buffer((8,), "float32", data=row_data)
            for c in range(8):
                row[c] = row[c] * k

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32")):
            for r in range(4):
                p: T.handle("float32") = T.address_of(A[r, 0])
                row = T.decl_buffer((8,), "float32", data=p)
                for c in range(8):
                    row[c] = row[c] * T.float32(2)
            q: T.handle("float32") = T.address_of(A[0, 0])
            row2 = T.decl_buffer((8,), "float32", data=q)
            for c in range(8):
                row2[c] = row2[c] * T.float32(3)

    after = inline()(Before)
    assert_structural_equal(after, Expected)
    ts.tir.analysis.verify_well_formed(after)

    a = np.arange(32, dtype="float32").reshape(4, 8)
    want = a * 2
    want[0] *= 3
    for mod in (Before, after):
        out = a.copy()
        ts.build(mod, target="c")(out)
        np.testing.assert_array_equal(out, want)


def test_what_is_not_inlined_stays():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(A: T.Buffer((16,), "float32")):
            Mod.countdown(T.address_of(A[0]), 16)
            Mod.public(T.address_of(A[0]))
            A[1] = Mod.value(T.float32(1))

        @T.prim_func(private=True)
        def countdown(A_data: T.handle("float32"), n: T.int32):
            A = T.decl_buffer((n,), "float32", data=A_data)
            A[0] = A[0] + T.float32(1)
            if n > 1:
                Mod.countdown(T.address_of(A[1]), n - 1)

        @T.prim_func
        def public(A_data: T.handle("float32")):
            A = T.decl_buffer((16,), "float32", data=A_data)
            A[0] = T.float32(0)

        @T.prim_func(private=True)
        def value(x: T.float32) -> T.float32:
            T.ret(x + T.float32(1))

    # Recursive, public, and called inside an expression: nothing changes.
    assert inline()(Mod).same_as(Mod)
