"""``PrimFunc.with_attr`` with the Python values TVM code passes: a Target (kept as the dict of
its settings, as ``T.target`` keeps it), lists, dicts, floats, and a dict of several attributes;
``T.func_attr`` takes a Target object too."""

import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraTypeError
from tessera.script import tir as T
from tessera.target import Target


def _func():
    return tir.PrimFunc([], tir.Evaluate(0))


def test_a_target_attribute_equals_the_script_form():
    f = _func().with_attr("global_symbol", "f").with_attr("target", Target("llvm", host="llvm"))

    @T.prim_func
    def expected():
        T.func_attr({"global_symbol": "f", "target": T.target({"kind": "llvm", "host": "llvm"})})
        T.evaluate(0)

    ts.ir.assert_structural_equal(f, expected)
    assert f.attrs["target"]["kind"] == "llvm"


def test_a_target_object_inside_func_attr():
    @T.prim_func
    def with_object():
        T.func_attr({"global_symbol": "f", "target": Target("cuda"), "tir.noalias": True})
        T.evaluate(0)

    @T.prim_func
    def with_script():
        T.func_attr({"global_symbol": "f", "target": T.target("cuda"), "tir.noalias": True})
        T.evaluate(0)

    ts.ir.assert_structural_equal(with_object, with_script)


def test_plain_values_and_a_dict_of_attributes():
    f = _func().with_attr({"global_symbol": "f", "n": 3, "scale": 0.5, "dims": [1, 2],
                           "opts": {"unroll": True}})

    @T.prim_func
    def expected():
        T.func_attr({"global_symbol": "f", "n": 3, "scale": T.float32(0.5), "dims": [1, 2],
                     "opts": {"unroll": True}})
        T.evaluate(0)

    ts.ir.assert_structural_equal(f, expected)
    g = _func().with_attr("dims", (4, 5))
    assert [int(v) for v in g.attrs["dims"]] == [4, 5]


def test_values_that_are_no_attribute_are_refused():
    with pytest.raises(TesseraTypeError, match="attribute value"):
        _func().with_attr("x", None)
    with pytest.raises(TesseraTypeError, match="attribute value"):
        _func().with_attr({"x": object()})
    with pytest.raises(TypeError, match="one dict"):
        _func().with_attr({"x": 1}, 2)
