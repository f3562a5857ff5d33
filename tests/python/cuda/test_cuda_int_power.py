"""Integer powers are exact: CUDA and C print repeated squaring (wrapping like numpy on
overflow), never a floating-point pow, which is not exact on a GPU (an H200 gave 2 for 3 ** 1)."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

from cuda_support import EMULATED, GPU_OK, requires_cuda_build

DTYPES = ["int8", "int32", "int64", "uint8"]


def operands(dtype):
    signed = np.dtype(dtype).kind == "i"
    bases = np.array([-3, -2, -1, 0, 1, 2, 3, 7, 100] if signed else [0, 1, 2, 3, 7, 100, 255])
    exps = np.array([0, 1, 2, 3, 5, 20, 63])
    a, b = np.meshgrid(bases, exps, indexing="ij")
    return a.astype(dtype), b.astype(dtype)


def power_func():
    ins = [te.placeholder(operands(d)[0].shape, d, name=f"A_{d}") for d in DTYPES]
    exps = [te.placeholder(operands(d)[1].shape, d, name=f"B_{d}") for d in DTYPES]
    outs = [topi.power(a, b) for a, b in zip(ins, exps)]
    return te.create_prim_func(ins + exps + outs), outs


def run(target, device):
    func, outs = power_func()
    lib = ts.build(func, target=target)
    arrays = [operands(d)[0] for d in DTYPES] + [operands(d)[1] for d in DTYPES]
    args = [ts.nd.array(a, device=device) for a in arrays]
    results = [ts.nd.empty(tuple(int(s) for s in o.shape), o.dtype, device) for o in outs]
    lib(*args, *results)
    return lib, [r.numpy() for r in results]


def check_against_numpy(results):
    for d, got in zip(DTYPES, results):
        a, b = operands(d)
        np.testing.assert_array_equal(got, np.power(a, b), err_msg=d)


def test_host_c_power_is_exact_and_wraps_like_numpy():
    lib, results = run("c", ts.cpu(0))
    check_against_numpy(results)
    src = lib.get_source()
    assert "tessera_ipow_int32(" in src and "tessera_ipow_uint8(" in src
    assert not re.search(r"\bpowf?\(", src)


@requires_cuda_build
def test_cuda_prints_an_integer_power_without_float_pow():
    func, _ = power_func()
    [dev] = ts.build(func, target="cuda").imported_modules
    src = dev.get_source()
    for d in DTYPES:
        assert f"__tessera_ipow_{d}(" in src
    assert not re.search(r"\bpowf?\(", src)
    # Signed types take the negative exponents apart; unsigned ones have none.
    assert "if (b < 0)" in src.split("__tessera_ipow_int32(")[1].split("}\n")[0]
    assert "if (b < 0)" not in src.split("__tessera_ipow_uint8(")[1].split("}\n")[0]


@pytest.mark.skipif(not GPU_OK and not EMULATED, reason="needs a CUDA GPU or the emulator")
def test_cuda_power_matches_numpy():
    _, results = run("cuda", ts.cuda(0))
    check_against_numpy(results)


def test_negative_exponents_truncate_where_numpy_raises():
    a = te.placeholder((5,), "int32", name="a")
    b = te.placeholder((5,), "int32", name="b")
    f = ts.build(te.create_prim_func([a, b, topi.power(a, b)]), target="c")
    out = ts.nd.empty((5,), "int32")
    f(ts.nd.array(np.array([1, -1, -1, 2, 0], "int32")),
      ts.nd.array(np.array([-3, -3, -2, -1, -1], "int32")), out)
    np.testing.assert_array_equal(out.numpy(), [1, -1, 1, 0, 0])
