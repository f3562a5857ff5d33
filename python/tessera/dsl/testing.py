"""Testing helpers for DSL kernels: random inputs with corner values, and a comparison that is
exact for integers and accepts a 2-ULP difference for floats.

>>> a = rand((4, 8), "int16")           # prints the seed the first time
>>> assert_allclose(out, expected)
"""

import os

import numpy as np

_MAX_ULP = 2
_state = {"rng": None, "seed": None}


def _np_dtype(dtype):
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    aliases = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
               "u32": "uint32", "fp16": "float16", "fp32": "float32", "bf16": "bfloat16"}
    name = aliases.get(name, name)
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def seed():
    """The seed of this process's draws: $TESSERA_DSL_SEED, or a fresh one printed once."""
    if _state["rng"] is None:
        env = os.environ.get("TESSERA_DSL_SEED")
        value = int(env) if env else int.from_bytes(os.urandom(4), "little")
        _state["seed"] = value
        _state["rng"] = np.random.default_rng(value)
        print(f"tessera.dsl.testing: seed {value} (set TESSERA_DSL_SEED={value} to reproduce)")
    return _state["seed"]


def _rng():
    seed()
    return _state["rng"]


def _is_float(dt):
    return dt.kind == "f" or dt.name == "bfloat16"


def _range(dt):
    if _is_float(dt):
        info = np.finfo(dt) if dt.name != "bfloat16" else None
        if info is None:
            import ml_dtypes

            info = ml_dtypes.finfo(dt)
        return float(info.min), float(info.max)
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def rand(shape, dtype, low=None, high=None, enable_corner_values=True, return_python_type=False):
    """Random values of ``dtype`` in ``[low, high)`` (default: the dtype's whole range), with
    the corner values (minimum, maximum, and zero when in range) planted at random positions.

    >>> rand(8, "int8")                  # may contain -128, 127 and 0
    >>> rand((2, 16), "float16", -1, 1)
    """
    dt = _np_dtype(dtype)
    rng = _rng()
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = int(np.prod(shape)) if shape else 1
    dmin, dmax = _range(dt)
    lo = dmin if low is None else low
    hi = dmax if high is None else high
    if _is_float(dt):
        span = float(hi) - float(lo)
        if not np.isfinite(span):  # the whole float range: draw halves separately
            values = rng.uniform(-1.0, 1.0, size=n) * float(hi)
        else:
            values = rng.uniform(float(lo), float(hi), size=n)
        values = np.clip(values, lo, hi).astype(dt)
        corners = [lo, hi, 0.0] if low is None and high is None else [lo, 0.0]
    else:
        top = hi if high is None else hi - 1  # [low, high) for explicit bounds
        values = rng.integers(int(lo), int(top), size=n, endpoint=True, dtype=np.int64)
        corners = [lo, top, 0]
        values = values.astype(dt)
    corners = [c for c in corners if lo <= c <= (hi if _is_float(dt) else top)]
    if enable_corner_values and n > 0:
        pos = rng.permutation(n)[: len(corners)]
        for p, c in zip(pos, corners):
            values[p] = np.asarray(c).astype(dt)
    out = values.reshape(shape)
    if return_python_type and out.size == 1:
        return out.reshape(()).item()
    return out


def _ordered_bits(x):
    """Float bit patterns mapped to integers that are monotonic in the value (ULP distance)."""
    width = x.dtype.itemsize * 8
    ints = x.view(f"int{width}").astype(np.int64)
    magnitude = ints & ((1 << (width - 1)) - 1)
    return np.where(ints < 0, -magnitude, magnitude)


def assert_allclose(actual, desired, rtol=None, atol=None):
    """Compare a kernel's result with a reference: dtypes must match; integers must be equal;
    floats pass within ``rtol``/``atol`` (default 0 and 1e-6), or when their bit patterns are
    at most 2 units in the last place apart. NaN equals NaN."""
    actual, desired = np.asarray(actual), np.asarray(desired)
    if actual.dtype != desired.dtype:
        raise AssertionError(f"dtypes differ: {actual.dtype} vs. {desired.dtype}")
    if actual.shape != desired.shape:
        raise AssertionError(f"shapes differ: {actual.shape} vs. {desired.shape}")
    if not _is_float(actual.dtype):
        bad = actual != desired
        if bad.any():
            idx = np.argwhere(bad)
            raise AssertionError(
                f"{int(bad.sum())} of {actual.size} elements differ, first at {tuple(idx[0])}: "
                f"{actual[tuple(idx[0])]} vs. {desired[tuple(idx[0])]}")
        return
    rtol = 0.0 if rtol is None else rtol
    atol = 1e-6 if atol is None else atol
    a64, d64 = actual.astype(np.float64), desired.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(d64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(a64 - d64) <= atol + rtol * np.abs(d64)
        close |= a64 == d64
    ulp = np.abs(_ordered_bits(actual) - _ordered_bits(desired)) <= _MAX_ULP
    ok = both_nan | close | (ulp & ~np.isnan(a64) & ~np.isnan(d64))
    if not ok.all():
        idx = np.argwhere(~ok)
        first = tuple(idx[0])
        raise AssertionError(
            f"{int((~ok).sum())} of {actual.size} elements differ (rtol={rtol}, atol={atol}, "
            f"{_MAX_ULP} ULP), first at {first}: {actual[first]} vs. {desired[first]}")
