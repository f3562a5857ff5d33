"""T.realize / tir.BufferRealize: TVM's pre-TensorIR buffer realization. It is built, parsed,
printed, compared and carried through passes; lowering refuses it with its source location."""

import pytest

import tessera as ts
from tessera import tir
from tessera.error import BuildError, TesseraTypeError
from tessera.script import DiagnosticError
from tessera.script import tir as T
from tessera.script.ir_builder import IRBuilder


@T.prim_func
def realized(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8, 8))
    B = T.match_buffer(b, (8, 8))
    C = T.Buffer((8, 8))
    T.realize(C[0:8, 0:8], "")
    for i in T.serial(8):
        with T.realize(C[i, 0:8], "global", condition=i < 4):
            for j in range(8):
                C[i, j] = A[i, j] * T.float32(2)
    for i, j in T.grid(8, 8):
        B[i, j] = C[i, j]


def test_a_bare_realize_binds_over_the_rest_of_the_body():
    body = realized.body
    assert isinstance(body, tir.AttrStmt) and body.attr_key == "realize_scope"
    assert body.value.value == ""
    realize = body.body
    assert isinstance(realize, tir.BufferRealize)
    assert realize.buffer.name == "C" and len(realize.bounds) == 2
    assert isinstance(realize.body, tir.SeqStmt) and len(realize.body) == 2
    inner = realize.body[0].body
    assert isinstance(inner, tir.AttrStmt) and inner.value.value == "global"
    assert inner.body.bounds[0].extent.value == 1
    assert "i < 4" in inner.body.condition.script()


def test_realize_prints_as_tvm_does_and_round_trips():
    text = realized.script()
    assert 'T.realize(C[0:8, 0:8], ""):' in text
    assert 'with T.realize(C[i:i + 1, 0:8], "global", condition=i < 4):' in text
    # C is declared in the body (no definition site), so it compares as a free buffer.
    ts.ir.assert_structural_equal(realized, ts.script.from_source(text), map_free_vars=True)


def test_structural_equality_and_hash_see_bounds_condition_and_body():
    A = tir.decl_buffer((4, 4), "float32", name="A")

    def make(extent=4, condition=True, value=0):
        return tir.BufferRealize(A, [(0, 4), ts.ir.Range(0, extent)], condition, tir.Evaluate(value))

    ts.ir.assert_structural_equal(make(), make())
    assert ts.ir.structural_hash(make()) == ts.ir.structural_hash(make())
    assert not ts.ir.structural_equal(make(), make(extent=2))
    assert not ts.ir.structural_equal(make(), make(condition=False))
    assert not ts.ir.structural_equal(make(), make(value=1))
    assert ts.ir.structural_hash(make()) != ts.ir.structural_hash(make(extent=2))
    realize = make()
    assert isinstance(realize, tir.BufferRealize) and realize.condition.dtype == "bool"
    assert tir.stmt.BufferRealize is tir.BufferRealize  # TVM's module name too


def test_ir_builder_realize_with_a_condition():
    A = tir.decl_buffer((16,), "int32", name="A")
    with IRBuilder() as ib:
        with T.realize(A[2:10], "local", False):
            T.evaluate(1)
    stmt = ib.get()
    expected = tir.AttrStmt(A, "realize_scope", tir.StringImm("local"),
                            tir.BufferRealize(A, [(2, 10)], False, tir.Evaluate(1)))
    ts.ir.assert_structural_equal(stmt, expected)
    assert 'with T.realize(A[2:10], "local", condition=T.bool(False)):' in stmt.script()


def test_a_realize_without_its_scope_attribute_prints_without_a_scope():
    A = tir.decl_buffer((4, 4), "float32", name="A")
    realize = tir.BufferRealize(A, [(0, 2), (1, 3)], True, tir.Evaluate(0))
    text = realize.script()
    assert text.endswith("with T.realize(A[0:2, 1:3]):\n    T.evaluate(0)")

    @T.prim_func
    def func(a: T.handle):
        B = T.match_buffer(a, (4, 4))
        with T.realize(B[0:2, 1:3]):
            T.evaluate(0)

    assert isinstance(func.body, tir.BufferRealize)
    assert "with T.realize(B[0:2, 1:3]):" in func.script()
    ts.ir.assert_structural_equal(func, ts.script.from_source(func.script()))


def test_passes_carry_realize_through():
    mod = ts.ir.IRModule({"main": realized})
    simplified = tir.transform.Simplify()(mod)
    assert 'T.realize(C[0:8, 0:8], ""):' in simplified["main"].script()
    ts.ir.assert_structural_equal(tir.transform.RemoveNoOp()(mod)["main"], realized)


def test_lowering_refuses_realize_at_its_line():
    with pytest.raises(BuildError, match="T.realize of buffer C cannot be lowered") as err:
        ts.build(realized, target="c")
    assert "T.alloc_buffer" in str(err.value)
    assert "T.realize(C[" in str(err.value) and "^" in str(err.value)  # the source line


def test_realize_with_no_body_is_an_error():
    with pytest.raises(DiagnosticError, match="T.realize has no body") as err:
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(a, (16, 16))
            T.realize(A[0:16, 0:16], "")  # no body
    assert err.value.line is not None and "^" in str(err.value)


def test_realize_takes_a_region_not_a_buffer():
    with pytest.raises(DiagnosticError, match="not the whole buffer A"):
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(a, (16, 16))
            T.realize(A, "")
            T.evaluate(0)
    A = tir.decl_buffer((4,), "float32", name="A")
    with pytest.raises(TesseraTypeError, match="storage scope must be a string"):
        T.realize(A[0:4], 1)


def test_bounds_must_match_the_rank():
    A = tir.decl_buffer((4, 4), "float32", name="A")
    with pytest.raises(Exception, match="one bound per dimension"):
        tir.BufferRealize(A, [(0, 4)], True, tir.Evaluate(0))
