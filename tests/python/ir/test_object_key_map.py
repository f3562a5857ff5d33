"""Maps whose keys are IR objects (TVM's ``Map`` of nodes), next to string-keyed maps."""

import pytest

import tessera as ts
from tessera import _core, te, tir
from tessera.ir import assert_structural_equal, load_json, save_json, structural_equal, structural_hash
from tessera.runtime import convert


def test_var_keys_are_by_identity():
    a, b = te.var("a"), te.var("b")
    amap = convert({a: 2, b: 3})
    assert isinstance(amap, _core.Map)
    assert len(amap) == 2
    assert a in amap and b in amap
    assert te.var("a") not in amap  # another variable of the same name is another key
    assert a + 1 not in amap
    assert amap[a].value == 2 and amap[b].value == 3
    assert amap.get(te.var("c")) is None
    keys = amap.keys()
    assert len(keys) == 2 and keys[0].same_as(a) and keys[1].same_as(b)
    assert [v.value for v in amap.values()] == [2, 3]
    assert [(k.name, v.value) for k, v in amap.items()] == [("a", 2), ("b", 3)]
    with pytest.raises(KeyError):
        amap[te.var("a")]


def test_string_keys_are_by_value_and_mix_with_object_keys():
    a = te.var("a")
    amap = convert({"x": 1, a: 2})
    assert "x" in amap and a in amap and "a" not in amap
    assert amap["x"].value == 1 and amap[a].value == 2
    assert len(amap) == 2


def test_number_keys_are_by_value():
    amap = convert({1: "llvm", 2: "cuda"})
    assert 2 in amap and 3 not in amap
    assert amap[2].value == "cuda"
    assert amap[tir.const(1, "int32")].value == "llvm"


def test_structural_equality_and_hash():
    a, b = te.var("a"), te.var("b")
    m1 = convert({a: 2, b: 3})
    m2 = convert({b: 3, a: 2})  # the same keys, another order
    assert structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)
    assert not structural_equal(m1, convert({a: 2, b: 4}))
    assert not structural_equal(m1, convert({a: 2}))
    assert not structural_equal(convert({a: 2}), m1)
    assert not structural_equal(m1, convert({a: 2, te.var("b"): 3}))


def test_structural_mismatch_names_the_key():
    a = te.var("a")
    with pytest.raises(ValueError, match=r"<root>\[a\]"):
        assert_structural_equal(convert({a: 2}), convert({a: 3}))


def test_save_load_json_with_var_keys():
    a, b = te.var("a"), te.var("b")
    loaded = load_json(save_json(convert({a: 2, b: a + 1})))
    assert len(loaded) == 2
    by_name = {k.name: v for k, v in loaded.items()}
    assert by_name["a"].value == 2
    # The key `a` and the `a` inside b's value are one variable after loading.
    key_a = [k for k in loaded.keys() if k.name == "a"][0]
    assert by_name["b"].a.same_as(key_a)


def test_arrays_hold_strings():
    arr = convert(["a", "b", "c"])
    assert "a" in arr and "d" not in arr
    assert arr[1].value == "b"


def test_a_map_of_a_target_is_its_settings():
    from tessera.target import Target

    amap = convert({2: Target("cuda")})
    assert isinstance(amap, _core.Map)
    assert Target(amap[2]).kind.name == "cuda"


def test_bad_keys_and_values_are_type_errors():
    with pytest.raises(TypeError, match="a Map key must be a str or an IR object"):
        _core.Map({(1, 2): tir.const(1)})
    with pytest.raises(TypeError, match="a Map value must be an IR object"):
        _core.Map({"x": object()})
