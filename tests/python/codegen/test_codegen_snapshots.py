"""Snapshots of generated code: the C that ts.build hands to the compiler for a few kernels is
compared with the text stored under tests/python/codegen/snapshots/, so that a change which
alters code generation is seen in review. After an intended change, regenerate them with

    TESSERA_UPDATE_SNAPSHOTS=1 PYTHONPATH=python .venv/bin/python -m pytest tests/python/codegen/test_codegen_snapshots.py

and commit the new files with the change. The kernels carry explicit schedules and the automatic
schedule is disabled, so the code does not depend on this machine's facts."""

import difflib
import os

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.script import tir as T

SNAPSHOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshots")


@T.prim_func
def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
        C: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def parallel_scale(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8, 32), "float32")):
    for i in T.parallel(8):
        for j in T.serial(32):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(0.5)


@T.prim_func
def checked(A: T.Buffer((4,), "int32"), n: T.int32):
    # A message with quotes, a backslash, a tab and a newline: the C literal must escape them.
    assert n < 4, "n is \"out\" of\trange\\\n (4 elements)"
    A[n] = n


def _matmul():
    n = 8
    a = te.placeholder((n, n), name="A")
    b = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return te.create_prim_func([a, b, c]).with_attr("global_symbol", ts._core.StringImm("matmul"))


KERNELS = {"add": lambda: add, "parallel_scale": lambda: parallel_scale,
           "checked": lambda: checked, "matmul": _matmul}


def _source(func):
    with ts.transform.PassContext(disabled_pass=["tir.AutoSchedule"]):
        return ts.build(func, target="c").get_source()


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_generated_c_matches_snapshot(name):
    source = _source(KERNELS[name]())
    path = os.path.join(SNAPSHOTS, name + ".c")
    if os.environ.get("TESSERA_UPDATE_SNAPSHOTS") == "1":
        os.makedirs(SNAPSHOTS, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
    if not os.path.exists(path):
        pytest.fail(f"no snapshot {path}; run with TESSERA_UPDATE_SNAPSHOTS=1 to write it")
    with open(path, encoding="utf-8") as f:
        expected = f.read()
    if source != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), source.splitlines(True),
                                            path, "generated", n=2))
        pytest.fail(f"generated C for '{name}' differs from its snapshot (regenerate with "
                    f"TESSERA_UPDATE_SNAPSHOTS=1 if the change is intended):\n{diff}")


def test_snapshot_kernels_compute_what_they_say():
    # The snapshots are of working code: each kernel's result is checked against numpy.
    a, b = np.arange(16, dtype="float32"), np.ones(16, dtype="float32")
    c = np.zeros(16, dtype="float32")
    with ts.transform.PassContext(disabled_pass=["tir.AutoSchedule"]):
        ts.build(add, target="c")(a, b, c)
        x = np.random.rand(8, 32).astype("float32")
        y = np.zeros_like(x)
        ts.build(parallel_scale, target="c")(x, y)
        m = np.zeros(4, dtype="int32")
        lib = ts.build(checked, target="c")
        lib(m, 2)
        with pytest.raises(Exception, match="out"):
            lib(m, 5)
        p, q = np.random.rand(8, 8).astype("float32"), np.random.rand(8, 8).astype("float32")
        r = np.zeros((8, 8), dtype="float32")
        ts.build(_matmul(), target="c")(p, q, r)
    np.testing.assert_allclose(c, a + b)
    np.testing.assert_allclose(y, x * 0.5)
    np.testing.assert_array_equal(m, [0, 0, 2, 0])
    np.testing.assert_allclose(r, p @ q, rtol=1e-5)
