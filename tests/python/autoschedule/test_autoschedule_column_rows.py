"""Reductions over the rows of a matrix (axis 0) on several cores: where a row of partial results
fits half the L1, the rows are cut into one block a core (rfactor), each core reducing whole
rows into a local row, and the cores' rows are reduced at the end (ScheduleColumnReduction-
AcrossRows); elsewhere the columns are cut into chunks, as before. Every result is checked
against numpy, on shapes with and without the cut."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

FACTS = {"vector_bits": 512, "vector_registers": 32, "l1_bytes": 32768}


def _input(rng, shape, dtype, op):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool) if op != "all" else rng.random(shape) < 0.999
    if op == "prod":  # near one: the products stay in range
        if np.dtype(dtype).kind == "f":
            return (1 + rng.standard_normal(shape) * 1e-3).astype(dtype)
        # integer products wrap (in any order the same): a few factors of -1 or 3
        other = 3 if np.dtype(dtype).kind == "u" else -1
        return rng.choice(np.array([1, 1, 1, other], dtype), shape)
    if op == "all":
        x = rng.integers(1, 5, shape).astype(dtype)
        x[rng.random(shape) < 0.001] = 0
        return x
    if op == "any":
        x = np.zeros(shape, dtype)
        x[rng.random(shape) < 0.001] = 1
        return x
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


OPS = {
    "sum": (lambda A: topi.sum(A, axis=0), lambda a: a.sum(0, dtype=a.dtype)),
    "max": (lambda A: topi.max(A, axis=0), lambda a: a.max(0)),
    "min": (lambda A: topi.min(A, axis=0), lambda a: a.min(0)),
    "prod": (lambda A: topi.prod(A, axis=0), lambda a: a.prod(0, dtype=a.dtype)),
    "all": (lambda A: topi.all(A, axis=0), lambda a: a.all(0)),
    "any": (lambda A: topi.any(A, axis=0), lambda a: a.any(0)),
    "argmax": (lambda A: topi.argmax(A, axis=0), lambda a: a.argmax(0)),
    "argmin": (lambda A: topi.argmin(A, axis=0), lambda a: a.argmin(0)),
}


def _check(op, dtype, shape, cores, across):
    make, ref = OPS[op]
    A = te.placeholder(shape, dtype, name="A")
    B = make(A)
    facts = dict(FACTS, cores=cores)
    sch = ts.autoschedule(te.create_prim_func([A, B]), target="c", facts=facts)
    script = sch.mod.script()
    if across is not None:
        assert ("_rf" in script) == across, script
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(abs(hash((op, dtype, shape))) % 2**32)
    a = _input(rng, shape, dtype, op)
    out = np.zeros(shape[1], str(B.dtype))
    lib(a, out)
    want = ref(a)
    if np.dtype(dtype).kind == "f" and op in ("sum", "prod"):
        tol = 2e-2 if dtype == "float16" else 1e-4
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.sqrt(shape[0]))
    else:
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int16", "uint8", "int8"])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_rows_cut_across_the_cores(op, dtype):
    # 1000 rows: 500 a core of 2 (a multiple of the 4 unrolled rows), 250 of 4 (not of 4: no
    # unrolled rows); 198 rows: 99 a core; columns that fill one or several vectors
    for shape, cores in (((1000, 512), 2), ((1000, 512), 4), ((198, 256), 2), ((256, 64), 2)):
        _check(op, dtype, shape, cores, True)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "int8"])
@pytest.mark.parametrize("op", ["all", "any"])
def test_bool_rows_cut_across_the_cores(op, dtype):
    for shape, cores in (((1000, 512), 2), ((198, 1024), 2), ((400, 128), 4)):
        _check(op, dtype, shape, cores, True)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_extremes_over_rows(op, dtype):
    # argmax / argmin over axis 0: the column extremes and the index search are column
    # reductions (the search's minimum of indices may take the cut); checked, not asserted
    for shape, cores in (((1000, 512), 2), ((198, 256), 4), ((64, 96), 2)):
        _check(op, dtype, shape, cores, None)


@pytest.mark.parametrize("op", ["sum", "max"])
def test_columns_cut_where_the_rows_do_not_divide_or_fit(op):
    # rows no multiple of the cores, too few rows a core, a row of partials over half the L1,
    # one core: the columns are cut into chunks (or not at all), as before
    for shape, cores in (((999, 512), 2), ((40, 512), 2), ((256, 8192), 2), ((1000, 512), 1)):
        _check(op, "float32", shape, cores, False)
