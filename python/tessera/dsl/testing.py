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


_RAND_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "float32",
                "bfloat16", "bool")


def rand(shape, dtype, low=None, high=None, enable_corner_values=True, return_python_type=False):
    """Random values of ``dtype`` in ``[low, high)`` (default: the dtype's whole range).

    * ``"bool"`` gives random masks (each element True with probability 1/2).
    * Integers are uniform; floats are normally distributed around the middle of the range
      (a standard deviation of a sixth of it, at most 700 for float16 and 1e6 otherwise), so
      most of them have a fractional part, and clipped to the range.
    * With ``enable_corner_values``, the corner values (the minimum, 0 when inside, and the
      largest value below ``high``) are planted at distinct random positions when there are more
      elements than corner values.
    * ``shape == 1`` gives one value rather than an array; ``return_python_type`` gives Python
      numbers or (nested) lists.

    >>> rand(8, "int8")                  # contains -128, 0 and 127
    >>> rand((2, 16), "float16", -1, 1)
    >>> rand(32, "bool")                 # a random mask
    """
    name = _np_dtype(dtype).name if not (isinstance(dtype, str) and dtype == "bool") else "bool"
    if name not in _RAND_DTYPES:
        raise ValueError(f'rand: the dtype must be one of {", ".join(_RAND_DTYPES)}, got "{dtype}"')
    dt = _np_dtype(name) if name != "bool" else np.dtype(bool)
    rng = _rng()

    def finish(out):
        out = out[0] if _is_one(shape) else out
        return out.tolist() if return_python_type else out

    if name == "bool":
        return finish(rng.uniform(size=shape) < 0.5)
    is_float = _is_float(dt)
    dmin, dmax = _range(dt)
    lo = dmin if low is None else low
    hi = dmax if high is None else (high - (1e-5 if is_float else 1))
    if lo == hi:
        return finish(np.full(shape, lo, dtype=dt))
    if lo > hi:
        raise ValueError(f"rand: the range [{low}, {high}) of {name} is empty")
    if is_float:
        std = min((float(hi) - float(lo)) / 6, 700.0 if name == "float16" else 1e6)
        mean = (float(lo) + float(hi)) / 2
        out = np.clip(rng.normal(mean, std, shape), lo, hi).astype(dt)
    else:
        out = rng.integers(int(lo), int(hi), size=shape, endpoint=False, dtype=np.int64).astype(dt)
    out = np.asarray(out)
    corners = (lo, 0, hi) if lo < 0 < hi else (lo, hi)
    if enable_corner_values and out.size > len(corners):
        flat = out.reshape(-1)
        for pos, value in zip(rng.choice(out.size, size=len(corners), replace=False), corners):
            flat[pos] = np.asarray(value).astype(dt)
    return finish(out)


def _is_one(shape):
    return isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) and shape == 1


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
        if actual.ndim and desired.ndim:
            raise AssertionError(f"shapes differ: {actual.shape} vs. {desired.shape}")
        actual, desired = np.broadcast_arrays(actual, desired)  # a scalar against an array
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


def clear_traceback(test):
    """Decorator of a test: an exception it raises leaves with the local variables of its frames
    released (``traceback.clear_frames``), so that large arrays or built kernels held there are
    freed at once. Compass uses it on tests that talk to a board; here it changes nothing else."""
    import functools
    import traceback

    @functools.wraps(test)
    def run(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except Exception as err:
            traceback.clear_frames(err.__traceback__)
            raise

    return run
