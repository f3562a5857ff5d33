"""tessera.dsl.testing (rand with corner values and a reproducible seed, assert_allclose with
2-ULP float acceptance) and Executor.benchmark."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.dsl import testing
from tessera.dsl.testing import assert_allclose, rand

from _util import ALL_TYPES, INT_TYPES, build, np_dtype


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_rand_has_corner_values(dtype):
    x = rand((4, 16), dtype)
    assert x.shape == (4, 16) and x.dtype == np_dtype(dtype)
    if dtype in INT_TYPES:
        info = np.iinfo(dtype)
        assert {info.min, info.max, 0} <= set(x.reshape(-1).tolist())
    else:
        assert 0 in x


def test_rand_bounds_and_python_type():
    x = rand(1000, "int16", low=-5, high=5)
    assert x.min() >= -5 and x.max() < 5 and 0 in x and -5 in x
    y = rand(1000, "float32", low=1.0, high=2.0)
    assert y.min() >= 1.0 and y.max() <= 2.0
    assert isinstance(rand(1, "int32", return_python_type=True), int)


def test_rand_bool_masks_and_scalars():
    m = rand((3, 32), "bool")
    assert m.dtype == np.bool_ and m.shape == (3, 32)
    assert 0 < m.sum() < m.size  # both values occur (probability of failure ~2**-95)
    one = rand(1, "int8")
    assert np.ndim(one) == 0 and one.dtype == np.int8  # shape 1 gives one value, as in Compass
    assert isinstance(rand(1, "bool", return_python_type=True), bool)
    assert rand((2, 2), "int32", low=7, high=8).tolist() == [[7, 7], [7, 7]]
    assert rand((2, 3), "uint16", return_python_type=True)[1][2] >= 0


def test_rand_float_distribution_and_corners():
    x = rand(4096, "float16")
    info = np.finfo("float16")
    assert info.min in x and info.max in x and 0 in x
    inner = np.abs(x[np.abs(x) < info.max].astype(np.float32))
    assert np.median(inner) < 2000  # mostly moderate values with fractional parts
    assert (x != np.round(x)).any()
    y = rand(3, "float32", enable_corner_values=True)  # no room for 3 corners: no planting
    assert y.shape == (3,)


def test_rand_rejects_other_dtypes():
    with pytest.raises(ValueError, match="dtype must be one of"):
        rand(4, "int64")
    with pytest.raises(ValueError, match="empty"):
        rand(4, "int8", low=5, high=3)


def test_assert_allclose_scalar_against_array():
    assert_allclose(np.array([3, 3], "int32"), np.int32(3))
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_allclose(np.zeros(2, "int32"), np.zeros(3, "int32"))


def test_seed_reproduces(monkeypatch, capsys):
    monkeypatch.setenv("TESSERA_DSL_SEED", "1234")
    monkeypatch.setattr(testing, "_state", {"rng": None, "seed": None})
    a = rand(16, "int32")
    assert "1234" in capsys.readouterr().out
    monkeypatch.setattr(testing, "_state", {"rng": None, "seed": None})
    assert (rand(16, "int32") == a).all()


def test_assert_allclose_ulps():
    a = np.array([1000.0, -2.0, 0.0, np.nan], "float32")
    b = a.copy()
    b[0] = np.nextafter(np.nextafter(a[0], np.float32(2000)), np.float32(2000))  # 2 ULP away
    assert_allclose(b, a)
    b[0] = np.nextafter(b[0], np.float32(2000))  # 3 ULP
    with pytest.raises(AssertionError):
        assert_allclose(b, a)
    with pytest.raises(AssertionError):
        assert_allclose(np.array([1, 2], "int32"), np.array([1, 3], "int32"))
    with pytest.raises(AssertionError):
        assert_allclose(np.array([1], "int32"), np.array([1], "int16"))
    h = np.array([1.5], ml_dtypes.bfloat16)
    assert_allclose(h, h)


@S.prim_func
def _copy8(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    S.vstore(S.vload(a), b)


def test_benchmark_statistics():
    ex = build(_copy8)
    a, b = rand(8, "int32"), np.zeros(8, "int32")
    r = ex.benchmark(a, b, repeat=4, number=5)
    assert len(r.results) == 4
    assert r.min <= r.median <= r.max and r.min <= r.mean <= r.max and r.std >= 0
    assert (a == b).all()
