"""T.allocate_const: constant storage whose data travels with the IR and into the generated C."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraError
from tessera.script import tir as T


@T.prim_func
def add_constants(A: T.Buffer((10,), "int32"), C: T.Buffer((10,), "int32")):
    K_data = T.allocate_const([1, 2, 3, 4, 5, 6, 7, 8, 9, -10], "int32", [10])
    K = T.decl_buffer((10,), "int32", data=K_data)
    for x in range(10):
        C[x] = A[x] + K[x]


@T.prim_func
def scale_2d(A: T.Buffer((2, 3), "float32"), C: T.Buffer((2, 3), "float32")):
    W_data = T.allocate_const([0.5, 0.1, -2.0, 3.25, 1e-3, 7.0], "float32", [2, 3])
    W = T.decl_buffer((2, 3), "float32", data=W_data)
    for i, j in T.grid(2, 3):
        C[i, j] = A[i, j] * W[i, j]


def test_parses_into_an_allocate_const_node():
    stmt = add_constants.body
    while not isinstance(stmt, tir.AllocateConst):
        stmt = stmt.body
    assert stmt.dtype == "int32"
    assert [int(e) for e in stmt.extents] == [10]
    np.testing.assert_array_equal(stmt.data.numpy(), [1, 2, 3, 4, 5, 6, 7, 8, 9, -10])
    assert stmt.buffer_var.name == "K_data"


@pytest.mark.parametrize("func", [add_constants, scale_2d], ids=["int32", "float32-2d"])
def test_prints_and_round_trips(func):
    text = func.script()
    assert "T.allocate_const(" in text
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(func, again)
    assert again.script() == text


def test_printed_form():
    text = scale_2d.script()
    assert 'W_data = T.allocate_const([0.5, 0.1, -2.0, 3.25, 0.001, 7.0], "float32", [2, 3])' in text


def test_data_takes_part_in_structural_equality():
    @T.prim_func
    def other(A: T.Buffer((10,), "int32"), C: T.Buffer((10,), "int32")):
        K_data = T.allocate_const([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "int32", [10])
        K = T.decl_buffer((10,), "int32", data=K_data)
        for x in range(10):
            C[x] = A[x] + K[x]

    assert not ts.ir.structural_equal(add_constants, other)
    assert ts.ir.structural_hash(add_constants) != ts.ir.structural_hash(other)
    with pytest.raises(ValueError, match="data"):
        ts.ir.assert_structural_equal(add_constants, other)


def test_constructor_matches_the_script():
    # tir.AllocateConst(buffer_var, dtype, extents, data, body) as TVM spells it, data a numpy
    # array or an NDArray; with T.allocate_const in a `with` it is the same node.
    data = np.arange(6, dtype="int16")
    var = tir.Var("v", ts.ir.PointerType(ts.ir.PrimType("int16")))
    built = tir.AllocateConst(var, "int16", [2, 3], ts.nd.array(data), tir.Evaluate(1))

    @T.prim_func
    def scripted():
        with T.allocate_const([0, 1, 2, 3, 4, 5], "int16", [2, 3]) as v:
            T.evaluate(1)

    ts.ir.assert_structural_equal(scripted.body, built, map_free_vars=True)
    np.testing.assert_array_equal(built.data.numpy(), data.reshape(2, 3))


@pytest.mark.parametrize("func,dtype", [(add_constants, "int32"), (scale_2d, "float32")])
def test_builds_with_the_data_embedded(func, dtype):
    lib = ts.build(func, target="c")
    assert "static const" in lib.get_source()
    shape = tuple(int(s) for s in func.buffer_map[func.params[0]].shape)
    a = (np.arange(np.prod(shape)).reshape(shape) - 3).astype(dtype)
    c = np.zeros(shape, dtype)
    lib(a, c)
    if dtype == "int32":
        expect = a + np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, -10], dtype)
    else:
        expect = a * np.array([0.5, 0.1, -2.0, 3.25, 1e-3, 7.0], dtype).reshape(shape)
    np.testing.assert_array_equal(c, expect)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "float16", "float64"])
def test_every_element_type_reaches_the_c_code_exactly(dtype):
    values = np.array([0, 1, -1, 127, 3, 100], dtype="int64")
    if dtype.startswith("float"):
        values = np.array([0.0, 0.1, -2.5, 65504.0, 1e-4, 3.0])
    values = values.astype(dtype)

    @T.prim_func
    def copy(C: T.Buffer((6,), dtype)):
        K_data = T.allocate_const(values.tolist(), dtype, [6])
        K = T.decl_buffer((6,), dtype, data=K_data)
        for x in range(6):
            C[x] = K[x]

    again = ts.script.from_source(copy.script())
    ts.ir.assert_structural_equal(copy, again)
    c = np.zeros(6, dtype)
    ts.build(copy, target="c")(c)
    np.testing.assert_array_equal(c, values)


def test_wrong_element_count_is_a_located_error():
    with pytest.raises(TesseraError, match=r"3 values for extents \[4\]") as info:
        @T.prim_func
        def bad():
            K = T.allocate_const([1, 2, 3], "int32", [4])
            T.evaluate(K)

    assert "T.allocate_const" in str(info.value)


def test_symbolic_extent_is_refused():
    n = tir.Var("n", "int32")
    with pytest.raises(TesseraError, match="constant"):
        tir.AllocateConst(tir.Var("v", ts.ir.PointerType(ts.ir.PrimType("int32"))), "int32", [n],
                          np.zeros(4, "int32"), tir.Evaluate(0))


def test_bytes_must_match_the_extents_in_cpp():
    var = tir.Var("v", ts.ir.PointerType(ts.ir.PrimType("int32")))
    with pytest.raises(TesseraError, match="needs 16 bytes of data, got 3"):
        ts._core.AllocateConst(var, "int32", [tir.const(4)], b"abc", tir.Evaluate(0))


def test_bool_data_is_refused():
    var = tir.Var("v", ts.ir.PointerType(ts.ir.PrimType("bool")))
    with pytest.raises(TesseraError, match="AllocateConst holds"):
        tir.AllocateConst(var, "bool", [2], np.array([True, False]), tir.Evaluate(0))
