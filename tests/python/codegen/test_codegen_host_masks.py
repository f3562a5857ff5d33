"""CodeGenHost vector selects: the mask has the lanes of the selected type's width.

A comparison of 64-bit lanes feeding a select of 64-bit lanes passes its mask as it is (int64
lanes); a comparison of another width is converted with one vector conversion. Every result is
checked against numpy."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T
from tessera.tir import Schedule

N = 64


def _build(func, lanes=8):
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("D"))
    _, iv = sch.split(i, [None, lanes])
    sch.vectorize(iv)
    return ts.build(sch.mod, target="c")


def _data(dtype, rng, nan=False):
    if dtype.startswith("float"):
        x = rng.standard_normal(N).astype(dtype)
        x[::5] = 0.5  # ties with the other input
        if nan:
            x[3::7] = np.nan
        return x
    return rng.integers(-4, 4, N).astype(dtype)


def _select_of_compare(cmp_dtype, val_dtype):
    @T.prim_func
    def f(A: T.Buffer((N,), cmp_dtype), B: T.Buffer((N,), cmp_dtype),
          X: T.Buffer((N,), val_dtype), Y: T.Buffer((N,), val_dtype),
          D: T.Buffer((N,), val_dtype)):
        for i in range(N):
            with T.block("D"):
                vi = T.axis.spatial(N, i)
                D[vi] = T.Select(A[vi] < B[vi], X[vi], Y[vi])

    return f


def _run_select_of_compare(cmp_dtype, val_dtype, nan=False):
    lib = _build(_select_of_compare(cmp_dtype, val_dtype))
    rng = np.random.default_rng(0)
    a, b = _data(cmp_dtype, rng, nan), _data(cmp_dtype, rng, nan)
    x, y = _data(val_dtype, rng), _data(val_dtype, rng)
    d = np.empty(N, val_dtype)
    lib(a, b, x, y, d)
    np.testing.assert_array_equal(d, np.where(a < b, x, y))
    return lib.get_source()


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_a_64_bit_compare_selecting_64_bit_lanes_passes_its_mask_unconverted(dtype):
    src = _run_select_of_compare(dtype, dtype, nan=True)
    helper = (f"static inline tessera_{dtype}x8 tessera_select_{dtype}x8(tessera_int64x8 a0, "
              f"tessera_{dtype}x8 a1, tessera_{dtype}x8 a2)")
    assert helper in src
    assert f"tessera_select_{dtype}x8((tessera_load_{dtype}x8(" in src
    assert "__builtin_convertvector" not in src


@pytest.mark.parametrize("cmp_dtype,val_dtype,mask", [
    ("float64", "int32", "int32"),   # narrowed
    ("float64", "float32", "int32"),
    ("int64", "float32", "int32"),
    ("float32", "float64", "int64"),  # widened
    ("int32", "int64", "int64"),
    ("int8", "float64", "int64"),
    ("int16", "int64", "int64"),
])
def test_a_compare_of_another_width_converts_its_mask_once(cmp_dtype, val_dtype, mask):
    src = _run_select_of_compare(cmp_dtype, val_dtype, nan=cmp_dtype.startswith("float"))
    converts = re.findall(r"__builtin_convertvector\(\(tessera_load_{0}x8\(\(A_1 [^;]*? < "
                          r"tessera_load_{0}x8\(\(B_1 [^;]*?\), (tessera_\w+)\)".format(cmp_dtype), src)
    assert converts == [f"tessera_{mask}x8"]
    assert f"tessera_select_{val_dtype}x8(tessera_{'int64' if val_dtype.endswith('64') else 'int32'}x8 a0" in src


def test_float32_selects_keep_32_bit_masks():
    src = _run_select_of_compare("float32", "float32", nan=True)
    assert ("tessera_select_float32x8(tessera_int32x8 a0, tessera_float32x8 a1, "
            "tessera_float32x8 a2)") in src
    assert "__builtin_convertvector" not in src


@T.prim_func
def _combined(A: T.Buffer((N,), "float64"), B: T.Buffer((N,), "float32"),
              C: T.Buffer((N,), "bool"), D: T.Buffer((N,), "float64")):
    for i in range(N):
        with T.block("D"):
            vi = T.axis.spatial(N, i)
            D[vi] = T.Select(
                T.Not(A[vi] != A[vi]) and (B[vi] > T.float32(0)) or C[vi], A[vi], T.float64(-1))


def test_and_or_not_of_compares_combine_at_the_selected_width():
    lib = _build(_combined)
    rng = np.random.default_rng(1)
    a = rng.standard_normal(N)
    a[::6] = np.nan
    b = rng.standard_normal(N).astype("float32")
    c = rng.random(N) < 0.3
    d = np.empty(N)
    lib(a, b, c, d)
    np.testing.assert_array_equal(d, np.where((~np.isnan(a) & (b > 0)) | c, a, -1.0))
    src = lib.get_source()
    # The float64 compare as it is, the float32 compare and the bool (int8) lanes widened once
    # each; nothing goes through 32-bit lanes.
    assert "(~(cse_v1 != cse_v1))" in src
    assert re.search(r"__builtin_convertvector\(\(tessera_broadcast_float32x8\(0.0f\) < "
                     r"tessera_load_float32x8\(\(B_1 [^;]*?\), tessera_int64x8\)", src)
    assert re.search(r"__builtin_convertvector\(\(tessera_load_int8x8\([^;]*? != "
                     r"\(tessera_int8x8\)\{0\}\), tessera_int64x8\)", src)
    assert "int32x8" not in src


@pytest.mark.parametrize("n", [256, 1024])
def test_float64_argmax_rows_search_with_64_bit_masks(n):
    A = te.placeholder((5, n), "float64", name="A")
    # topi's forms (without tir.ArgExtremeRows float64 rows of 512 or more keep them on the host)
    with ts.transform.PassContext(disabled_pass=["tir.ArgExtremeRows"]):
        lib = ts.build(te.create_prim_func([A, topi.argmax(A, axis=1)]), target="c")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, n))
    a[1, n // 3] = np.nan
    a[2, :] = a[2, 7]  # all equal
    a[3, n - 1] = 10.0
    a[4, ::3] = 9.0  # ties
    out = np.empty(5, "int32")
    lib(a, out)
    np.testing.assert_array_equal(out, a.argmax(1))
    src = lib.get_source()
    # NaN is read as +inf: a float64 select on a float64 compare, with its mask as it is.
    assert re.search(r"tessera_select_float64x\d+\(\(\w+ != \w+\), tessera_broadcast_float64x\d+",
                     src)
    assert not re.search(r"tessera_select_float64x\d+\(__builtin_convertvector", src)


@pytest.mark.parametrize("shape", [(2048,), (37, 53), (3, 5, 64)])
@pytest.mark.parametrize("op,np_fn", [(topi.logical_xor, np.logical_xor),
                                      (topi.not_equal, np.not_equal), (topi.equal, np.equal)])
def test_bools_equal_or_not_compare_their_byte_masks(shape, op, np_fn):
    # topi.logical_xor is `a != b` of bools: computed on the bytes themselves (0 or 1: a ^ b,
    # equal a ^ b ^ 1, tir.FlattenBuffer), the widths of the buffers (no 32-bit lanes of the
    # bool vector type, no test of each byte against zero). Odd shapes take the vector tails.
    A = te.placeholder(shape, "bool", name="A")
    B = te.placeholder(shape, "bool", name="B")
    lib = ts.build(te.create_prim_func([A, B, op(A, B)]), target="c")
    rng = np.random.default_rng(3)
    a, b = rng.random(shape) < 0.5, rng.random(shape) < 0.5
    out = np.empty(shape, bool)
    lib(a, b, out)
    np.testing.assert_array_equal(out, np_fn(a, b))
    src = lib.get_source()
    if shape != (37, 53):  # vectorized (37 x 53 has no vector width dividing it)
        assert re.search(r"tessera_load_int8x\d+\([^;]*?\) \^ tessera_load_int8x\d+\(", src)
        assert "!= (tessera_int8x" not in src and "== (tessera_int8x" not in src
        code = "\n".join(line for line in src.splitlines() if not line.startswith("typedef"))
        assert "int32x" not in code


def test_bools_equal_selecting_float64_lanes_compare_at_64_bits():
    A = te.placeholder((256,), "bool", name="A")
    B = te.placeholder((256,), "bool", name="B")
    X = te.placeholder((256,), "float64", name="X")
    D = te.compute((256,), lambda i: te.if_then_else(A[i] == B[i], X[i], -X[i]), name="D")
    lib = ts.build(te.create_prim_func([A, B, X, D]), target="c")
    rng = np.random.default_rng(4)
    a, b = rng.random(256) < 0.5, rng.random(256) < 0.5
    x = rng.standard_normal(256)
    d = np.empty(256)
    lib(a, b, x, d)
    np.testing.assert_array_equal(d, np.where(a == b, x, -x))
