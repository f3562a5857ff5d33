"""tessera.DataType: a str subclass with TVM's and Compass's dtype attributes."""

import pickle

import numpy as np
import pytest

import tessera
from tessera import te, tir
from tessera.ir import DataType, DataTypeCode


def test_is_a_canonical_str():
    t = DataType("fp16x16")
    assert isinstance(t, str)
    assert str(t) == "float16x16" and t == "float16x16" and t == "fp16x16"
    assert t != "float32" and t != 3
    assert repr(t) == "dtype('float16x16')"
    assert {"float16x16": 1}[t] == 1 and hash(t) == hash("float16x16")
    assert DataType(t) is t
    assert DataType("int") == "int32" and DataType("float") == "float32"
    assert tessera.DataType is DataType


def test_from_numpy_and_python_types():
    assert DataType(np.float16) == "float16"
    assert DataType(np.dtype("int8")) == "int8"
    assert DataType(bool) == "bool"
    assert np.zeros(3, dtype=DataType("float32")).dtype == np.float32


def test_unknown_names_raise():
    with pytest.raises(TypeError, match='unknown data type "int7"'):
        DataType("int7")
    with pytest.raises(TypeError, match="expected a dtype name"):
        DataType(3.5)


@pytest.mark.parametrize(
    "name, code, bits, lanes, itemsize",
    [("int8x32", DataTypeCode.INT, 8, 32, 32), ("uint16", DataTypeCode.UINT, 16, 1, 2),
     ("float32x8", DataTypeCode.FLOAT, 32, 8, 32), ("bfloat16", DataTypeCode.BFLOAT, 16, 1, 2),
     ("bool", DataTypeCode.UINT, 1, 1, 1), ("handle", DataTypeCode.HANDLE, 64, 1, 8)])
def test_components(name, code, bits, lanes, itemsize):
    t = DataType(name)
    assert (t.type_code, t.bits, t.lanes, t.itemsize) == (code, bits, lanes, itemsize)


def test_predicates():
    f16, bf16, i8, u32, b8 = (DataType(n) for n in ("float16x16", "bfloat16", "int8", "uint32", "boolx8"))
    assert f16.is_float and f16.is_float16 and f16.is_floating16 and f16.is_vector
    assert f16.is_float_vector and f16.is_floating16_vector and not f16.is_scalar
    assert not bf16.is_float and bf16.is_floating and bf16.is_bfloat16 and bf16.is_floating16
    assert bf16.is_bfloat16_scalar and bf16.is_floating_scalar
    assert i8.is_int and i8.is_int8 and i8.is_integer and i8.is_integer_scalar and not i8.is_uint
    assert u32.is_uint and u32.is_uint32 and u32.is_integer and not u32.is_int
    assert b8.is_bool and b8.is_bool_vector and not b8.is_scalable
    assert DataType("float32").is_float32 and DataType("float64").is_float64
    assert DataType("void").is_void and not DataType("handle").is_void


def test_derived_types():
    t = DataType("int32x8")
    assert isinstance(t.with_lanes(4), DataType) and t.with_lanes(4) == "int32x4"
    assert t.with_bits(16) == "int16x8"
    assert t.with_uint() == "uint32x8" and DataType("float16x16").with_int() == "int16x16"
    assert t.element_of == "int32" and isinstance(t.element_of, DataType)
    assert DataType("bool").with_lanes(16) == "boolx16"
    with pytest.raises(TypeError, match="lanes must be a positive int"):
        t.with_lanes(0)
    with pytest.raises(TypeError, match='unknown data type "int3x8"'):
        t.with_bits(3)


def test_pickles():
    t = DataType("uint8x32")
    assert pickle.loads(pickle.dumps(t)) == t


def test_ir_objects_return_datatypes():
    x = tir.Var("x", "int32")
    assert type(x.dtype) is DataType and x.dtype.is_int32
    assert type((x < 3).dtype) is DataType and (x < 3).dtype.is_bool
    A = te.placeholder((4,), DataType("float16"), name="A")
    assert type(A.dtype) is DataType and A.dtype == "float16"
    B = te.compute((4,), lambda i: A[i] + tir.const(1, A.dtype), name="B")
    func = te.create_prim_func([A, B])
    assert type(func.buffer_map[0][1].dtype) is DataType
    arr = tessera.nd.array(np.zeros(4, "float32"))
    assert type(arr.dtype) is DataType and arr.dtype == "float32"


def test_datatype_accepted_where_a_string_is():
    t = DataType("float32")
    v = tir.Var("v", t)
    assert v.dtype == "float32"
    assert tir.const(1.5, t).dtype == "float32"
    assert tir.Cast(DataType("int8"), v).dtype == "int8"


@pytest.mark.parametrize("name, itemsize", [("float8_e5m2x4", 4), ("float6_e2m3fnx4", 3),
                                            ("float4_e2m1fnx4", 2), ("float4_e2m1fn", 1),
                                            ("boolx8", 1), ("float32x4", 16)])
def test_itemsize_packs_sub_byte_lanes(name, itemsize):
    assert DataType(name).itemsize == itemsize


def test_itemsize_of_a_scalable_vector_is_an_error():
    with pytest.raises(ValueError, match=r"int32xvscalex4 \(vscale \* 4 lanes\)"):
        DataType("int32xvscalex4").itemsize
