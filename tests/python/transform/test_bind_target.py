"""tir.BindTarget, tir.AnnotateEntryFunc and tir.Filter."""

import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir import transform as tt


@I.ir_module
class Calls:
    @T.prim_func(private=True)
    def twice(a: T.int32) -> T.int32:
        return a * 2

    @T.prim_func(private=True)
    def unused():
        T.evaluate(0)

    @T.prim_func
    def main(A: T.Buffer((64,), "int32")):
        T.func_attr({"global_symbol": "main"})
        n: T.int32 = Calls.twice(16)
        for tx in T.thread_binding(n, "threadIdx.x"):
            A[tx] = Calls.twice(A[tx])


def test_functions_get_the_target_of_where_they_run():
    after = tt.BindTarget(ts.target.Target("cuda", host="llvm"))(Calls)

    @I.ir_module
    class Expected:
        @T.prim_func(private=True)
        def twice(a: T.int32) -> T.int32:
            T.func_attr({"target": T.target("cuda")})
            return a * 2

        @T.prim_func(private=True)
        def unused():
            T.func_attr({"target": T.target("cuda")})
            T.evaluate(0)

        @T.prim_func
        def main(A: T.Buffer((64,), "int32")):
            T.func_attr({"global_symbol": "main", "target": T.target("cuda", host="llvm")})
            n: T.int32 = Expected.twice_host(16)
            for tx in T.thread_binding(n, "threadIdx.x"):
                A[tx] = Expected.twice(A[tx])

        @T.prim_func(private=True)
        def twice_host(a: T.int32) -> T.int32:
            T.func_attr({"target": T.target("llvm")})
            return a * 2

    assert_structural_equal(after, Expected)
    assert after["main"].attrs["target"] == ts.target.Target("cuda", host="llvm")
    # Negative: the device call must not be redirected to the host copy.
    wrong = Expected.script().replace("A[tx] = Expected.twice(", "A[tx] = Expected.twice_host(")
    wrong = wrong.replace("A[tx] = cls.twice(", "A[tx] = cls.twice_host(")
    assert not ts.ir.structural_equal(after, ts.script.from_source(wrong))


def test_existing_target_kept_and_given_a_host_when_public():
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            T.func_attr({"global_symbol": "main", "target": T.target("nvptx")})
            T.evaluate(0)

        @T.prim_func(private=True)
        def inner():
            T.func_attr({"target": T.target("nvptx")})
            T.evaluate(0)

        @T.prim_func(private=True)
        def on_host():
            T.func_attr({"tir.is_host_func": 1})
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main():
            T.func_attr({"global_symbol": "main", "target": T.target("nvptx", host="llvm -opt-level=0")})
            T.evaluate(0)

        @T.prim_func(private=True)
        def inner():
            T.func_attr({"target": T.target("nvptx")})
            T.evaluate(0)

        @T.prim_func(private=True)
        def on_host():
            T.func_attr({"target": T.target("llvm -opt-level=0", host="llvm -opt-level=0")})
            T.evaluate(0)

    after = tt.BindTarget(ts.target.Target("cuda", host="llvm -opt-level=0"))(Before)
    assert_structural_equal(after, Expected)


def test_bind_target_takes_a_target():
    with pytest.raises(TesseraError, match="tir.BindTarget takes a Target"):
        tt.BindTarget(3)


def test_annotate_entry_func_marks_the_only_public_function():
    after = tt.AnnotateEntryFunc()(Calls)
    assert bool(after["main"].attrs["tir.is_entry_func"])
    assert "tir.is_entry_func" not in after["twice"].attrs

    @I.ir_module
    class TwoPublic:
        @T.prim_func
        def a():
            T.evaluate(0)

        @T.prim_func
        def b():
            T.evaluate(0)

    assert_structural_equal(tt.AnnotateEntryFunc()(TwoPublic), TwoPublic)


def test_filter_keeps_the_functions_the_condition_accepts():
    after = tt.Filter(lambda f: "global_symbol" in f.attrs)(Calls)
    assert [gv.name_hint for gv in after.get_global_vars()] == ["main"]
    assert len(tt.Filter(lambda f: True)(Calls).functions) == 3
    with pytest.raises(TesseraError, match="tir.Filter takes a function"):
        tt.Filter("main")
