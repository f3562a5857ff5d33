"""Shared helpers of the DSL tests: building, dtypes, random data with corner values, errors."""

import inspect
import os

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import BuildManager
from tessera.error import DiagnosticError

INT_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32"]
FLOAT_TYPES = ["float16", "float32", "bfloat16"]
ALL_TYPES = INT_TYPES + FLOAT_TYPES


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def lanes(name):
    """Native lanes of a scalar type."""
    return 256 // (np_dtype(name).itemsize * 8)


def build(func, **kwargs):
    ex = BuildManager(**kwargs).build(func)
    if os.environ.get("TESSERA_TEST_PYSIM") and hasattr(func, "parse"):
        return _Both(ex, func)
    return ex


class _Both:
    """TESSERA_TEST_PYSIM=1: every executor call also runs PySim on copies and compares."""

    def __init__(self, ex, func):
        self.ex, self.func = ex, func

    def __getattr__(self, name):
        return getattr(self.ex, name)

    def __call__(self, *args):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        self.ex(*args)
        self.func(*copies)
        for a, c in zip(args, copies):
            if isinstance(a, np.ndarray):
                assert (a.view(np.uint8) == c.view(np.uint8)).all() or np.allclose(
                    a.astype(np.float64), c.astype(np.float64), equal_nan=True, rtol=1e-5), \
                    f"PySim differs from the compiled kernel {self.func.name}"


def rand(shape, dtype, seed=0, low=None, high=None):
    """Random values of ``dtype`` with its minimum, maximum and zero planted at the front."""
    rng = np.random.default_rng(seed)
    dt = np_dtype(dtype)
    n = int(np.prod(shape))
    if dtype in INT_TYPES:
        info = np.iinfo(dt)
        lo = info.min if low is None else low
        hi = info.max if high is None else high
        out = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64)
        corners = [c for c in (info.min, info.max, 0) if lo <= c <= hi]
    else:
        lo = -100.0 if low is None else low
        hi = 100.0 if high is None else high
        out = rng.uniform(lo, hi, size=n)
        corners = [0.0, lo, hi]
    out[: min(len(corners), n)] = corners[: min(len(corners), n)]
    return out.astype(dt).reshape(shape)


def line_of(func, text):
    """The file line of the first source line of ``func`` containing ``text``."""
    lines, start = inspect.getsourcelines(func.func if hasattr(func, "func") else func)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def expect_diag(func, text, message, target="X2_1204", lower=False):
    """Building ``func`` fails with a DiagnosticError quoting ``message`` at the line of
    ``text``, rendered with the source line and a caret."""
    with pytest.raises(DiagnosticError) as info:
        bm = BuildManager(target=target)
        bm.lower(func) if lower else bm.build(func)
    err = info.value
    assert message in err.message, err.message
    assert err.line == line_of(func, text), str(err)
    rendered = str(err)
    assert f":{err.line}:" in rendered
    assert text in rendered
    assert "^" in rendered
    return err


def run_both(func, *args):
    """Run ``func`` compiled and under PySim on copies of ``args``; (compiled, pysim) args."""
    ex = build(func)
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    pysim = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ex(*compiled)
    func(*pysim)
    return compiled, pysim


def check_active(results, expected, active=None):
    """Both results equal ``expected`` on the active lanes (ULP-aware for floats)."""
    from tessera.dsl.testing import assert_allclose

    expected = np.asarray(expected)
    for got in results:
        got = np.asarray(got).reshape(expected.shape)
        if active is None:
            assert_allclose(got, expected.astype(got.dtype))
        else:
            active = np.asarray(active, bool)
            assert_allclose(got[active], expected.astype(got.dtype)[active])


def mask_bits(text, lanes):
    """A mask string's lanes as a bool array."""
    from tessera.dsl.masks import parse_mask_string

    v = parse_mask_string(text)
    return np.array(v + [False] * (lanes - len(v)), bool)
