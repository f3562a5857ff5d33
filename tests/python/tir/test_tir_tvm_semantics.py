"""TVM's semantics of the tir expression surface that TVM's tir-base tests rely on: narrow integer
arithmetic wraps in built code, intrinsics fold constants, literal ranges, dtype inference and
matching, and the tir.* names of the script's intrinsic builders."""

import numpy as np
import pytest

import tessera as ts
from tessera import _core, ir, te, tir
from tessera.error import TesseraError
from tessera.script import tir as T


def _is_const(e, value, dtype):
    return isinstance(e, (_core.IntImm, _core.FloatImm)) and e.value == value and str(e.dtype) == dtype


@T.prim_func
def _int8_sum(a: T.Buffer((4,), "int8"), b: T.Buffer((4,), "int8"), neg: T.Buffer((4,), "int32")):
    for i in range(4):
        with T.block("s"):
            vi = T.axis.spatial(4, i)
            neg[vi] = T.if_then_else(a[vi] + b[vi] < T.int8(0), 1, 0)


def test_built_int8_arithmetic_wraps_as_numpy():
    lib = ts.build(_int8_sum, target="c")
    a = np.array([127, 100, -128, 5], "int8")
    b = np.array([1, 100, -1, 5], "int8")
    out = ts.nd.empty((4,), "int32")
    lib(ts.nd.array(a), ts.nd.array(b), out)
    with np.errstate(over="ignore"):
        want = ((a + b) < 0).astype("int32")  # numpy wraps int8 sums
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(want, [1, 1, 0, 0])


def test_bitwise_and_shift_intrinsics_fold_int32_constants():
    a, b = tir.const(112), tir.const(138)
    assert _is_const(a & b, 0, "int32") and _is_const(a | b, 250, "int32")
    assert _is_const(a ^ b, 250, "int32")
    assert _is_const(tir.const(3) << 4, 48, "int32") and _is_const(tir.const(-16) >> 2, -4, "int32")
    x = te.var("x")
    assert (x << 0).same_as(x)
    assert isinstance(x & 3, _core.Call)
    assert isinstance(tir.const(3, "int8") & tir.const(1, "int8"), _core.Call)  # not an index type
    with pytest.raises(TesseraError, match="shift amount"):
        x << 32
    with pytest.raises(TesseraError, match="shift amount"):
        x >> -1
    with pytest.raises(TypeError, match="integer or a bool"):
        ~tir.const(1.5, "float32")


def test_rounding_and_classification_fold_constants():
    f = tir.const(3.55, "float32")
    assert _is_const(tir.ceil(f), 4.0, "float32") and _is_const(tir.floor(f), 3.0, "float32")
    assert _is_const(tir.round(tir.const(2.5, "float64")), 2.0, "float64")  # half to even
    assert _is_const(tir.trunc(tir.const(-1.5, "float64")), -1.0, "float64")
    i = te.var("i")
    assert tir.floor(i).same_as(i)
    assert _is_const(tir.abs(tir.const(-3)), 3, "int32")
    assert _is_const(tir.isnan(i), 0, "bool") and _is_const(tir.isfinite(i), 1, "bool")
    assert _is_const(tir.isinf(tir.const(float("inf"), "float32")), 1, "bool")
    assert tir.likely(tir.const(True)).value == 1
    h = te.var("h", "float16")
    assert str(tir.isnan(h)) == 'T.isnan(T.Cast("float32", h))'
    assert isinstance(tir.ceil(te.var("f", "float32")), _core.Call)


def test_literals_and_inferred_dtypes():
    assert tir.const(2**31).dtype == "int64" and tir.const(-(2**31)).dtype == "int32"
    assert tir.const(3.402e39).dtype == "float64" and tir.const(1.5).dtype == "float32"
    assert tir.const(np.uint8(3)).dtype == "uint8" and tir.const(np.float16(1)).dtype == "float16"
    for dtype, value in (("float16", 65505.0), ("float32", 3.5e38), ("bfloat16", -3.4e38)):
        with pytest.raises(ValueError, match="beyond the range"):
            tir.const(value, dtype)
    assert tir.const(float("inf"), "float16").value == float("inf")
    assert ir.DataType("int") == "int32" and ir.DataType("float") == "float32"
    assert ir.DataType("uint") == "uint32"


def test_operand_types_match_as_tvm():
    for lhs, rhs, out in (("bool", "int32", "int32"), ("uint32", "int8", "uint32"),
                          ("uint32", "int32", "uint32"), ("int16", "uint8", "int16")):
        e = te.var("a", lhs) + te.var("b", rhs)
        assert e.dtype == out and e.a.dtype == out and e.b.dtype == out
    assert _is_const(tir.const(3) + tir.const(4, "int64"), 7, "int64")
    with pytest.raises(TypeError, match="bool condition"):
        tir.if_then_else(te.var("c", "int32"), 1, 2)
    with pytest.raises(ValueError):  # TVM raises ValueError for `x and y` on expressions
        te.var("x") and te.var("y")
    with pytest.raises(ValueError):
        tir.all()
    v = te.var("f", "float32").astype("float32x4")
    assert isinstance(v, _core.Broadcast) and v.dtype == "float32x4"
    with pytest.raises(TypeError, match="string"):
        tir.StringImm("s").astype("int32")


def test_tir_names_of_the_script_intrinsics():
    x = tir.Var("x", "handle")
    assert tir.tvm_struct_get(x, 1, 2, dtype="int32").op.name == "tir.tvm_struct_get"
    assert tir.tvm_tuple(1, 2).op.name == "tir.tvm_tuple"
    assert tir.create_barriers(16).op.name == "tir.create_barriers"
    assert tir.vectorlow("int8x8", tir.Var("v", "int8x16")).op.name == "tir.vectorlow"
    dp = tir.dp4a(tir.Var("a", "int8x4"), tir.Var("b", "int8x4"))
    assert dp.op.name == "tir.dp4a" and dp.dtype == "int32"
    assert tir.TVMBackendFreeWorkspace(0, 1, x).op.name == "tir.TVMBackendFreeWorkspace"


def test_prim_func_with_buffer_parameters_and_a_stepped_loop():
    n = te.var("n")
    b = tir.decl_buffer((n,), "float32", name="b")
    func = tir.PrimFunc([n, b], tir.Evaluate(n))
    assert len(func.params) == 2 and func.buffer_map[func.params[1]].same_as(b)
    i = te.var("i")
    loop = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.Evaluate(i), step=2)
    assert loop.step.value == 2


def test_tvm_module_level_names():
    from tessera import runtime
    from tessera.tir import buffer

    assert _is_const(runtime.const(3), 3, "int32") and runtime.const(2**40).dtype == "int64"
    assert buffer.Buffer is _core.Buffer
    func = tir.PrimFunc([], tir.Evaluate(0)).with_attr({"calling_conv": 1, "tir.noalias": True,
                                                          "global_symbol": "f"})
    assert func.attrs["calling_conv"].value == 1 and func.attrs["tir.noalias"].value == 1
    assert func.attrs["global_symbol"].value == "f"
