"""The imperative IR builder (tessera.script.ir_builder): frames entered by Python's own `with`."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraValueError
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.script.ir_builder import IRBuilder
from tessera.script.ir_builder import ir as IB_I
from tessera.script.ir_builder import tir as IB_T


def test_builder_scopes_nest_and_current_is_innermost():
    with pytest.raises(ValueError, match="no IRBuilder"):
        IRBuilder.current()
    with IRBuilder() as outer:
        assert IRBuilder.current() is outer
        with IRBuilder() as inner:
            assert IRBuilder.current() is inner
        assert IRBuilder.current() is outer
    assert not IRBuilder.is_in_scope()


def test_prim_func_equals_the_parsed_script():
    with IRBuilder() as ib:
        with IB_T.prim_func():
            IB_T.func_name("add_one")
            a = IB_T.arg("A", IB_T.Buffer((16,), "float32"))
            b = IB_T.arg("B", IB_T.Buffer((16,), "float32"))
            with IB_T.grid(4, 4) as (i, j):
                ib.name_many(["i", "j"], [i, j])
                with IB_T.block("B"):
                    vi = ib.name("vi", IB_T.axis.spatial(16, i * 4 + j))
                    IB_T.buffer_store(b, a[vi] + 1.0, [vi])
    built = ib.get()

    @T.prim_func
    def add_one(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi = T.axis.spatial(16, i * 4 + j)
                B[vi] = A[vi] + T.float32(1.0)

    ts.ir.assert_structural_equal(built, add_one)
    assert 'for i, j in T.grid(4, 4):' in built.script()
    assert 'vi = T.axis.spatial(16, i * 4 + j)' in built.script()

    rt = ts.build(built, target="llvm")
    a = ts.nd.array(np.arange(16, dtype="float32"))
    out = ts.nd.array(np.zeros(16, dtype="float32"))
    rt(a, out)
    np.testing.assert_allclose(out.numpy(), np.arange(16, dtype="float32") + 1)


def test_statements_at_the_top_are_the_result():
    with IRBuilder() as ib:
        IB_T.evaluate(0)
    ts.ir.assert_structural_equal(ib.get(), tir.Evaluate(tir.const(0)))

    with IRBuilder() as ib:
        with IB_T.serial(8) as i:
            IB_T.evaluate(i)
        IB_T.evaluate(1)
    seq = ib.get()
    assert isinstance(seq, tir.SeqStmt) and len(seq.seq) == 2
    assert isinstance(seq.seq[0], tir.For) and seq.seq[0].kind == tir.ForKind.SERIAL

    with IRBuilder() as ib:
        with IB_T.block(name="named", no_realize=True):
            IB_T.evaluate(0)
    assert isinstance(ib.get(), tir.Block) and ib.get().name_hint == "named"

    with IRBuilder() as ib:
        with IB_T.LetStmt(tir.const(2)) as v:
            IB_T.evaluate(v + 1)
    let = ib.get()
    assert isinstance(let, tir.LetStmt) and let.var.same_as(let.body.value.a)


def test_loops_of_every_kind_and_thread_binding():
    with IRBuilder() as ib:
        with IB_T.parallel(64) as a:
            with IB_T.vectorized(8) as b:
                with IB_T.thread_binding(4, thread="threadIdx.x") as c:
                    IB_T.evaluate(a + b + c)
    loop = ib.get()
    assert loop.kind == tir.ForKind.PARALLEL and loop.extent.value == 64
    assert loop.body.kind == tir.ForKind.VECTORIZED
    assert loop.body.body.kind == tir.ForKind.THREAD_BINDING
    assert loop.body.body.thread_binding.thread_tag == "threadIdx.x"


def test_ir_module_names_its_functions():
    with IRBuilder() as ib:
        with IB_I.ir_module():
            with IB_T.prim_func():
                IB_T.func_name("foo")
                IB_T.evaluate(0)
            with IB_T.prim_func():
                IB_T.func_name("bar")
                n = IB_T.arg("n", IB_T.int32())
                IB_T.func_ret(IB_T.int32)
                IB_T.evaluate(n)
    mod = ib.get()

    @I.ir_module
    class Expected:
        @T.prim_func
        def foo():
            T.evaluate(0)

        @T.prim_func
        def bar(n: T.int32) -> T.int32:
            T.evaluate(n)

    ts.ir.assert_structural_equal(mod, Expected)


def test_unnamed_prim_func_has_no_global_symbol():
    with IRBuilder() as ib:
        with IB_T.prim_func():
            IB_T.evaluate(0)
    func = ib.get()
    assert "global_symbol" not in dict(func.attrs.items())


def test_errors():
    with pytest.raises(TesseraValueError, match="only under an IRBuilder"):
        with IB_T.block("b"):
            pass
    with IRBuilder() as ib:
        pass
    with pytest.raises(ValueError, match="nothing was built"):
        ib.get()
    with pytest.raises(TesseraValueError, match="must be inside a T.block or a function"):
        with IRBuilder():
            IB_T.alloc_buffer((4,), "float32")
    with pytest.raises(TesseraValueError, match="needs T.func_name"):
        with IRBuilder():
            with IB_I.ir_module():
                with IB_T.prim_func():
                    IB_T.evaluate(0)
    with pytest.raises(TesseraValueError, match="outermost"):
        with IRBuilder():
            with IB_T.serial(4):
                with IB_T.prim_func():
                    pass
    with IRBuilder() as ib:
        ib_open = ib
        with pytest.raises(ValueError, match="still open"):
            ib_open.get()


def test_printed_header_names_the_dialects_of_a_function_or_module():
    @T.prim_func
    def f():
        T.evaluate(0)

    assert f.script().splitlines()[:2] == ["# from tessera.script import tir as T", ""]
    mod = ts.ir.IRModule({"f": f})
    assert mod.script().splitlines()[:2] == ["# from tessera.script import ir as I",
                                            "# from tessera.script import tir as T"]
    with pytest.raises(TesseraValueError, match="ir_prefix must be a Python identifier"):
        mod.script(ir_prefix="2I")


def test_realize_is_a_realize_scope_attribute_over_a_buffer_realize():
    A = tir.decl_buffer((16, 8), "float32", name="A")
    with IRBuilder() as ib:
        with T.realize(A[0:16, 2:6], "global"):
            T.evaluate(0)
    stmt = ib.get()
    expected = tir.AttrStmt(A, "realize_scope", tir.StringImm("global"), tir.BufferRealize(
        A, [ts.ir.Range(0, 16), ts.ir.Range.from_min_extent(2, 4)], True, tir.Evaluate(0)))
    ts.ir.assert_structural_equal(stmt, expected)
    assert isinstance(stmt.body, tir.BufferRealize) and stmt.body.buffer.same_as(A)
    assert stmt.script().endswith('with T.realize(A[0:16, 2:6], "global"):\n    T.evaluate(0)')
    other = tir.AttrStmt(A, "realize_scope", tir.StringImm("global"), tir.BufferRealize(
        A, [ts.ir.Range(0, 16), ts.ir.Range(0, 8)], True, tir.Evaluate(0)))
    assert not ts.ir.structural_equal(stmt, other)

    # In a parsed function too, and with a condition.
    @T.prim_func
    def func(a: T.handle):
        B = T.match_buffer(a, (16,))
        with T.realize(B[0:8], "", B[0] > 0):
            T.evaluate(0)

    assert 'T.realize(B[0:8], "", condition=B[0] > T.float32(0.0))' in func.script()
    ts.ir.assert_structural_equal(func, ts.script.from_source(func.script()))
    with pytest.raises(Exception, match="one bound per dimension"):
        tir.BufferRealize(A, [ts.ir.Range(0, 16)], True, tir.Evaluate(0))
