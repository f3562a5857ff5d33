"""Bitwise operators, shifts and reinterpretations in a vectorized loop: vector code on the
host (GCC's vector operators and casts), with numpy's results in every integer width."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.tir import Schedule

INT = ["int8", "uint8", "int16", "int32", "int64"]


def _vectorized(outs, lanes):
    sch = Schedule(te.create_prim_func(outs))
    block = sch.get_block(outs[-1].op.name)
    (i,) = sch.get_loops(block)
    _, inner = sch.split(i, [None, lanes])
    sch.vectorize(inner)
    return ts.build(sch.mod, target="c")


def _data(rng, n, dtype, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, n, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", INT)
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                                  "right_shift"])
def test_vector_bitwise_binary(name, dtype):
    n = 64
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    lib = _vectorized([A, B, getattr(topi, name)(A, B)], 8)
    # vector loads of the operands: the loop is vector code
    assert f"tessera_load_{dtype}x8(" in lib.get_source()
    rng = np.random.default_rng(2)
    shifts = "shift" in name
    a = _data(rng, n, dtype, 0 if name == "left_shift" else None)
    b = _data(rng, n, dtype, 0, 7) if shifts else _data(rng, n, dtype)
    out = np.zeros(n, dtype)
    lib(a, b, out)
    np.testing.assert_array_equal(out, getattr(np, name)(a, b))


@pytest.mark.parametrize("dtype", INT)
def test_vector_bitwise_not(dtype):
    n = 64
    A = te.placeholder((n,), dtype, name="A")
    lib = _vectorized([A, topi.bitwise_not(A)], 8)
    assert f"tessera_load_{dtype}x8(" in lib.get_source()
    a = _data(np.random.default_rng(3), n, dtype)
    out = np.zeros(n, dtype)
    lib(a, out)
    np.testing.assert_array_equal(out, np.invert(a))


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("int32", "float32"),
                                     ("float64", "uint64"), ("int16", "float16")])
def test_vector_reinterpret(src, dst):
    n = 64
    A = te.placeholder((n,), src, name="A")
    lib = _vectorized([A, topi.reinterpret(A, dst)], 8)
    assert f"tessera_load_{src}x8(" in lib.get_source()
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(n) * 100).astype(src)
    out = np.zeros(n, dst)
    lib(a, out)
    np.testing.assert_array_equal(out.view(np.uint8), a.view(np.uint8))


def test_fast_exp_vectorizes():
    # Its exponent bits are a shift of an int32 vector reinterpreted as float32: vector code.
    n = 256
    A = te.placeholder((n,), "float32", name="A")
    lib = _vectorized([A, topi.fast_exp(A)], 16)
    src = lib.get_source()
    assert "tessera_load_float32x16(" in src and "memcpy(&tessera_r_" not in src
    a = np.linspace(-80, 80, n, dtype="float32")
    out = np.zeros(n, "float32")
    lib(a, out)
    np.testing.assert_allclose(out, np.exp(a.astype("float64")), rtol=2e-6)
