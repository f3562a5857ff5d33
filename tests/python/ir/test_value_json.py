"""save_json / load_json of expressions and containers of values."""

import json
import math

import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.runtime import String, convert


def round_trip(value):
    return ts.ir.load_json(ts.ir.save_json(value))


def test_expressions_round_trip_with_shared_variables():
    x = tir.Var("x", "int32")
    e = (x + tir.const(10, "int32")) * x
    back = round_trip(e)
    ts.ir.assert_structural_equal(back, e, map_free_vars=True)
    assert back.a.a.same_as(back.b)  # one variable in the document, one after loading
    assert str(back.b.dtype) == "int32" and back.b.name == "x"


@pytest.mark.parametrize("value, dtype", [(math.inf, "float64"), (-math.inf, "float32"),
                                          (-3.4028234663852886e38, "float32"), (0.1, "float64")])
def test_float_constants_keep_their_value(value, dtype):
    back = round_trip(tir.const(value, dtype))
    assert back.value == value and str(back.dtype) == dtype


def test_arrays_and_maps_of_values():
    x, y = tir.const(1, "int32"), tir.const(10, "int32")
    smap = convert({"z": tir.Add(x, y), "x": x})
    arr = round_trip(convert([smap, 3.5]))
    assert isinstance(arr, ts._core.Array) and len(arr) == 2
    ts.ir.assert_structural_equal(arr[0]["z"].a, arr[0]["x"])
    ts.ir.assert_structural_equal(arr, convert([smap, 3.5]))
    assert not ts.ir.structural_equal(arr, convert([smap, 4.5]))
    assert round_trip("xy\x01z") == "xy\x01z" and round_trip(None) is None
    ts.ir.assert_structural_equal(String("xyz"), round_trip(String("xyz")))


def test_unstorable_values_and_malformed_documents():
    with pytest.raises(TesseraTypeError, match="cannot store object"):
        ts.ir.save_json([object()])
    with pytest.raises(TesseraTypeError, match="keys must be strings"):
        ts.ir.save_json({1: 2})
    doc = json.dumps({"format": "tessera-value", "version": 1, "root": ["Nope", 1], "vars": [], "ops": []})
    with pytest.raises(TesseraValueError, match="unknown value kind 'Nope'"):
        ts.ir.load_json(doc)
