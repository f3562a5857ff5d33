"""Dict attribute values, T.target, T.If/T.Then/T.Else, T.While, T.buffer_store,
T.func_name and T.continue_loop/T.break_loop as TVM v0.23 writes them."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def roundtrip(func):
    text = func.script()
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(func, again)
    assert again.script() == text
    return text


@T.prim_func
def dict_attrs(a: T.handle):
    T.func_attr({"global_symbol": "dict_attrs", "nested": {"x": [1, 2], "y": {"z": "w"}}})
    A = T.match_buffer(a, (4,), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            T.block_attr({"arr": [0, 0], "key": 3, "meta": {"a": 1}})
            A[vi] = T.float32(0)


def test_dict_attribute_values_print_and_round_trip():
    text = roundtrip(dict_attrs)
    assert '"nested": {"x": [1, 2], "y": {"z": "w"}}' in text
    assert 'T.block_attr({"arr": [0, 0], "key": 3, "meta": {"a": 1}})' in text
    nested = dict_attrs.attrs["nested"]
    assert sorted(nested.keys()) == ["x", "y"] and nested["y"]["z"].value == "w"
    assert [k for k, _ in nested.items()] == ["x", "y"]


@T.prim_func
def with_target():
    T.func_attr({"target": T.target("cuda -arch=sm_80", host="llvm")})
    T.evaluate(0)


def test_target_attribute():
    text = roundtrip(with_target)
    target = with_target.attrs["target"]
    assert target["kind"].value == "cuda" and target["arch"].value == "sm_80"
    assert target["host"]["kind"].value == "llvm"
    assert '"arch": "sm_80"' in text


@T.prim_func
def explicit_frames(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (8,), "int32")
    for i in range(8):
        with T.If(i < n):
            with T.Then():
                T.buffer_store(A, i * 2, [i])
            with T.Else():
                A[i] = -1


@T.prim_func
def python_branches(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (8,), "int32")
    for i in range(8):
        if i < n:
            A[i] = i * 2
        else:
            A[i] = -1


def test_explicit_if_then_else_frames():
    ts.ir.assert_structural_equal(explicit_frames.with_attr("global_symbol", "f"),
                                  python_branches.with_attr("global_symbol", "f"))
    out = np.zeros(8, "int32")
    ts.build(explicit_frames, target="c")(out, 5)
    np.testing.assert_array_equal(out, [0, 2, 4, 6, 8, -1, -1, -1])


@T.prim_func
def while_frame(a: T.handle):
    T.func_name("counted")
    A = T.match_buffer(a, (1,), "int32")
    with T.While(A[0] < 10):
        A[0] = A[0] + 3
    for i in range(5):
        if i == 1:
            T.continue_loop()
        if i == 3:
            T.break_loop()
        A[0] = A[0] + 100


def test_while_frame_func_name_and_jumps():
    assert while_frame.attrs["global_symbol"].value == "counted"
    text = roundtrip(while_frame)
    assert "while A[0] < 10:" in text and "continue" in text and "break" in text
    out = np.zeros(1, "int32")
    ts.build(while_frame, target="c")(out)
    assert out[0] == 12 + 200


@T.prim_func
def target_by_config():
    T.func_attr({"target": T.target({"kind": "cuda", "arch": "sm_70", "keys": ["cuda", "gpu"],
                                     "host": T.target({"kind": "llvm", "keys": ["cpu"]})})})
    T.evaluate(0)


def test_target_from_a_config_with_a_nested_target():
    roundtrip(target_by_config)
    assert target_by_config.attrs["target"]["host"]["kind"].value == "llvm"


@T.prim_func
def string_strides(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), strides=("A_s0",))
    for i in range(n):
        A[i * A.strides[0]] = T.float32(0)


def test_string_strides_name_new_variables():
    stride = string_strides.buffer_map[0][1].strides[0] if isinstance(string_strides.buffer_map, list) \
        else list(string_strides.buffer_map.values())[0].strides[0]
    assert isinstance(stride, ts.tir.Var) and stride.name == "A_s0"
    roundtrip(string_strides)
