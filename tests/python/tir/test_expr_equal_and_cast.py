"""``PrimExpr.equal`` (TVM's method: the ``==`` expression, folded like the operator) and the
conversion of a Broadcast to another element type (the scalar inside is converted, as TVM's
``cast`` does), for fixed and scalable (``vscale * k``) lane counts."""

import pytest

import tessera as ts
from tessera import _core, tir
from tessera.error import TesseraTypeError


def test_equal_builds_the_comparison_and_folds_constants():
    x = tir.Var("x", "int32")
    e = x.equal(3)
    assert isinstance(e, _core.EQ)
    ts.ir.assert_structural_equal(e.a, x)
    assert e.b.value == 3 and str(e.dtype) == "bool"
    assert isinstance(tir.const(2).equal(2), _core.IntImm) and tir.const(2).equal(2).value == 1
    assert tir.const(2).equal(3).value == 0


def test_two_vscale_calls_are_equal_but_not_vscale_and_a_number():
    t = tir.vscale().equal(tir.vscale())
    assert isinstance(t, _core.IntImm) and t.value == 1 and str(t.dtype) == "bool"
    assert isinstance(tir.vscale().equal(4), _core.EQ)
    assert isinstance(tir.vscale() != tir.vscale(), _core.NE)


@pytest.mark.parametrize("lanes", [lambda: 11 * tir.vscale(), lambda: tir.vscale() * 11])
def test_scalable_lanes_read_back_as_vscale_times_factor(lanes):
    for node in (tir.Ramp(0, 1, lanes()), tir.Broadcast(0, lanes())):
        assert node.lanes.a.equal(tir.vscale())
        assert node.lanes.b == 11
        assert str(node.dtype) == "int32xvscalex11"


def test_broadcast_cast_converts_the_scalar():
    out = tir.Broadcast(1, 4).astype("float32x4")
    ts.ir.assert_structural_equal(out, tir.Broadcast(tir.FloatImm("float32", 1.0), 4))
    x = tir.Var("x", "int32")
    out = tir.Broadcast(x, 8).astype("float16x8")
    ts.ir.assert_structural_equal(out, tir.Broadcast(tir.Cast("float16", x), 8))
    out = tir.Broadcast(1, 12 * tir.vscale()).astype("float32xvscalex12")
    assert isinstance(out, _core.Broadcast) and isinstance(out.value, _core.FloatImm)
    assert str(out.dtype) == "float32xvscalex12"
    store = tir.BufferStore(tir.decl_buffer((24,), "float32"), out, [tir.Ramp(0, 1, 12 * tir.vscale())])
    assert isinstance(store.value.value, _core.FloatImm)


def test_a_non_broadcast_vector_keeps_its_cast_node():
    r = tir.Ramp(0, 1, 4)
    out = r.astype("float32x4")
    assert isinstance(out, _core.Cast) and str(out.dtype) == "float32x4"


def test_broadcast_cast_to_other_lanes_is_refused():
    with pytest.raises(TesseraTypeError, match="lane count"):
        tir.Broadcast(1, 4).astype("float32x8")
    with pytest.raises(TesseraTypeError, match="lane count"):
        tir.Broadcast(1, 4 * tir.vscale()).astype("float32x4")


def test_comparing_an_expression_with_none_is_refused():
    a = tir.IntImm("int8", 1)
    x = tir.Var("x", "int32")
    for e in (a, x, x + 1):
        with pytest.raises(ValueError, match="is None"):
            e == None  # noqa: E711
        with pytest.raises(ValueError, match="is None"):
            e != None  # noqa: E711
    # A string constant is a value, not an expression: it just differs from None.
    s = tir.StringImm("abc")
    assert s != None and not s == None  # noqa: E711
    # Slices with no step still make regions.
    buf = tir.decl_buffer((8, 8), "float32")
    region = ts.tir.expr_ops.to_region(buf[0:4, 2:6])
    assert [int(r.extent) for r in region.region] == [4, 4]


def test_a_bool_meets_an_integer_number_as_int32():
    # As TVM: a Python integer other than 0/1 against a bool is an int32 and the bool is cast
    # (`(a <= 16) < 10`); 0 and 1 stay bool constants.
    a = tir.Var("a", "int32")
    e = tir.LE(a, 16) < 10
    assert isinstance(e.a, _core.Cast) and str(e.a.dtype) == "int32"
    assert e.b.value == 10 and str(e.b.dtype) == "int32"
    b = tir.Var("b", "bool")
    assert str((b == 1).b.dtype) == "bool"
    e = 7 > b  # Python's reflection: b < 7
    assert isinstance(e.a, _core.Cast) and str(e.a.dtype) == "int32" and e.b.value == 7


@pytest.mark.parametrize(
    "value,dtype,want",
    [(1.0, "int8", 1), (2.5, "int32", 2), (-3.0, "int64", -3), (True, "int8", 1),
     (1.0, "bool", True), (1, "float32", 1.0), (1.5, "float16", 1.5), (0.0, "uint8", 0)],
)
def test_cast_of_a_python_number_takes_the_dtype(value, dtype, want):
    # as tir.const: a float cast to an integer type is that integer constant (one_hot's
    # on/off values 1.0 and 0.0 for an int8 result), a bool cast to a number likewise
    c = tir.expr_ops.cast(value, dtype)
    assert c.dtype == dtype
    assert c.value == want


def test_cast_of_a_python_number_out_of_range_keeps_a_cast():
    c = tir.expr_ops.cast(300.0, "int8")
    assert c.dtype == "int8" and isinstance(c, _core.Cast)
