"""bfloat16 vector +, - and *: shown in `.c_code` as C operators (`a[0] + b[0]`), as Compass
prints every vector type's operators, while the compiler gets tessera/dsl.h's
`__vadd(a[0], b[0], ALL_TRUE_h)` (bfloat16x16 is a struct, which C has no operators for). Each
lane is computed in float32 and rounded once to the nearest bfloat16, ties to even: the result
of numpy's bfloat16 (ml_dtypes) arithmetic. Compiled kernels and PySim are checked against it
on the rounding corners."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S

from _util import rand

BF16 = ml_dtypes.bfloat16
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _bits(*values):
    return np.array(values, dtype=np.uint16).view(BF16)


def _reference(op, a, b):
    """Lane by lane in float32 (exact for bfloat16 inputs), rounded once to bfloat16."""
    with np.errstate(over="ignore", invalid="ignore"):
        return OPS[op](a.astype(np.float32), b.astype(np.float32)).astype(BF16)


def _assert_same_bf16(got, want):
    """Equal bits, except that a NaN only has to be a NaN (its payload is not specified)."""
    got, want = np.asarray(got, BF16), np.asarray(want, BF16)
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    np.testing.assert_array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


@S.prim_func
def ops(a: S.ptr("bfloat16x16", "global"), b: S.ptr("bfloat16x16", "global"),
        out: S.ptr("bfloat16x16", "global")):
    out[0] = a[0] + b[0]
    out[1] = a[0] - b[0]
    out[2] = a[0] * b[0]


def _run_both(func, *args):
    """The outputs of the compiled kernel and of PySim, each on its own copy of ``args``."""
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    pysim = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    BuildManager().build(func)(*compiled)
    func(*pysim)
    return compiled, pysim


def test_operators_are_shown_as_c_operators_and_compiled_as_calls():
    ex = BuildManager().build(ops)
    for op, name in (("+", "__vadd"), ("-", "__vsub"), ("*", "__vmul")):
        assert f"a[0] {op} b[0]" in ex.c_code, ex.c_code
        assert f"{name}(a[0], b[0], ALL_TRUE_h)" in ex.compiled_source, ex.compiled_source
    assert "__vadd" not in ex.c_code and " + " not in ex.compiled_source


# (a, b) bit pairs: ties to even at 1 + 2^-8 and 1 + 3 * 2^-8, the largest finite values
# overflowing to infinity, inf - inf, NaN operands, signed zeros, subnormal results, and a
# product of two 8-bit significands that needs rounding.
CORNERS = [
    (0x3F80, 0x3B80),  # 1 + 2^-8: a tie, rounds down to 1 (even)
    (0x3F81, 0x3B80),  # (1 + 2^-7) + 2^-8: a tie, rounds up to 1 + 2^-6 (even)
    (0x3F80, 0x3B81),  # just above the tie: rounds up
    (0x7F7F, 0x7F7F),  # max + max: +inf; max - max: 0; max * max: +inf
    (0x7F80, 0xFF80),  # inf and -inf: inf + -inf is NaN
    (0x7FC0, 0x3F80),  # NaN operand
    (0x3F80, 0xFFC1),  # negative NaN with a payload
    (0x0000, 0x8000),  # +0 and -0
    (0x8000, 0x8000),  # -0 and -0
    (0x0001, 0x0001),  # smallest subnormals
    (0x0080, 0x8001),  # smallest normal minus the smallest subnormal: a subnormal
    (0x3F81, 0x3F81),  # (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14: rounds to 1 + 2^-6
    (0x3F83, 0x3F85),  # a product that rounds up
    (0xC2C8, 0x42C8),  # -100 and 100
    (0x4049, 0x3E80),  # 3.140625 and 0.25
    (0x7F00, 0x4000),  # a large value doubled
]


@pytest.mark.parametrize("op", list(OPS))
def test_rounding_corners_match_numpy(op):
    a = _bits(*[x for x, _ in CORNERS])
    b = _bits(*[y for _, y in CORNERS])
    want = _reference(op, a, b)
    compiled, pysim = _run_both(ops, a, b, np.zeros(48, BF16))
    k = list(OPS).index(op)
    _assert_same_bf16(compiled[2][16 * k:16 * (k + 1)], want)
    _assert_same_bf16(pysim[2][16 * k:16 * (k + 1)], want)


def test_random_values_match_numpy():
    for seed in range(3):
        a = rand(16, "bfloat16", seed=seed)
        b = rand(16, "bfloat16", seed=seed + 10, low=-3.0, high=3.0)
        want = np.concatenate([_reference(op, a, b) for op in OPS])
        compiled, pysim = _run_both(ops, a, b, np.zeros(48, BF16))
        _assert_same_bf16(compiled[2], want)
        _assert_same_bf16(pysim[2], want)


@S.prim_func
def nested(a: S.ptr("bfloat16x16", "global"), b: S.ptr("bfloat16x16", "global"),
           c: S.ptr("bfloat16", "global"), out: S.ptr("bfloat16x16", "global")):
    t = (a[0] - b[0]) * a[0]
    out[0] = t + c[0]
    out[1] = S.vadd(a[0], b[0], mask="8T8F")
    out[2] = S.max(a[0] * b[0], b[0])


def test_nested_operators_round_each_operation():
    ex = BuildManager().build(nested)
    assert "((a[0] - b[0]) * a[0])" in ex.c_code, ex.c_code
    assert "(t + __vbcast(c[0]))" in ex.c_code, ex.c_code
    assert "__vmul(__vsub(a[0], b[0], ALL_TRUE_h), a[0], ALL_TRUE_h)" in ex.compiled_source
    a = rand(16, "bfloat16", seed=3, low=-4.0, high=4.0)
    b = rand(16, "bfloat16", seed=4, low=-4.0, high=4.0)
    c = _bits(0x3F81)  # 1 + 2^-7
    t = _reference("mul", _reference("sub", a, b), a)  # rounded after each operation
    out0 = _reference("add", t, np.full(16, c[0], BF16))
    compiled, pysim = _run_both(nested, a, b, c, np.zeros(48, BF16))
    for out in (compiled[3], pysim[3]):
        _assert_same_bf16(out[:16], out0)
        # The active lanes of a masked add; the others are not specified.
        _assert_same_bf16(out[16:24], _reference("add", a, b)[:8])
        prod = _reference("mul", a, b)
        _assert_same_bf16(out[32:], np.maximum(prod.astype(np.float32), b.astype(np.float32)).astype(BF16))


@S.prim_func
def bf16_scalar_times_float(a: S.ptr("bfloat16", "global"), out: S.ptr("float32", "global")):
    out[0] = a[0] * 2.0


def test_bfloat16_scalar_with_a_float_literal_computes_in_float32():
    # Compass's result type of a bfloat16 scalar and a float literal is float32: the value is
    # widened exactly and computed in float32, with no bfloat16 rounding.
    a = _bits(0x3F81)
    compiled, pysim = _run_both(bf16_scalar_times_float, a, np.zeros(1, "float32"))
    for out in (compiled[1], pysim[1]):
        np.testing.assert_array_equal(out, np.float32(a[0]) * np.float32(2.0))
