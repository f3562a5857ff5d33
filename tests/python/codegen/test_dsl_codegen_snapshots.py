"""Snapshots of the generated code of DSL kernels: the C unit that BuildManager compiles for a
few kernels (the kernel source after dsl.AlignVectorWidth, dsl.CombineInstructions and
CodeGenDSL, then its packed entry point) is compared with the text stored under
tests/python/codegen/snapshots/dsl/, so that a change which alters DSL code generation shows up
as a reviewed diff. The code is generated without running the C compiler (fast). After an
intended change, regenerate the snapshots with

    TESSERA_UPDATE_SNAPSHOTS=1 PYTHONPATH=python .venv/bin/python -m pytest tests/python/codegen/test_dsl_codegen_snapshots.py

and commit the new files with the change: with that variable set the kernels are also compiled,
run and checked against numpy (test_snapshot_kernels_compute_what_they_say), so a snapshot is
only written for working code; CI, which does not set it, skips that slower test. The DSL target
(X2_1204: 256-bit vectors, 4 TECs) is fixed, so the code does not depend on this machine."""

import difflib
import os

import numpy as np
import pytest

from tessera.dsl import BuildManager
from tessera.dsl import script as S

SNAPSHOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshots", "dsl")


@S.prim_func
def spmd_add(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"),
             c: S.ptr("int32", "global"), n: S.i32):
    # The work split across the TECs, the tail handled by a mask.
    per_tec = (n + S.get_local_size() - 1) // S.get_local_size()
    i = S.get_local_id() * per_tec
    end = S.min(i + per_tec, n)
    while i < end:
        m = S.tail_mask(end - i, 8)
        S.vstore(S.vadd(S.vload(a + i, mask=m), S.vload(b + i, mask=m), saturate=True), c + i,
                 mask=m)
        i += 8


@S.prim_func
def multi_width(a: S.ptr("float16", "global"), b: S.ptr("float16", "global"),
                o: S.ptr("float16", "global"), q: S.ptr("fp32", "global"),
                c: S.ptr("int32", "global"), s: S.ptr("int32", "global")):
    # Vectors of twice the native width, split by dsl.AlignVectorWidth.
    x = S.vload(a, lanes=32)
    y = S.vload(b, lanes=32)
    S.vstore(S.vminh(x, y), o)
    S.vstore(S.vqdot(x, y, mask="30T"), q)
    S.vstore(S.vrpadd(S.vload(c, lanes=16)), s)


@S.prim_func
def scalar_math(a: S.ptr("float32", "global"), h: S.ptr("float16", "global"),
                o: S.ptr("float32", "global"), n: S.ptr("int32", "global")):
    # Vector and scalar forms of intrinsics, a compare and select, a widening conversion.
    v = S.vload(a)
    S.vstore(S.vsel(S.exp(v), S.abs(v), v > 1.0), o)
    o[8] = S.exp(a[0]) + S.abs(a[1])
    S.vstore(S.cast(S.vload(h, lanes=16), "float32"), o + 16)
    n[0] = S.clz(n[1])


@S.prim_func
def add_one(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    b[0] = a[0] + 1


@S.prim_func
def calls_subroutine(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    add_one(a, b)


KERNELS = {"spmd_add": spmd_add, "multi_width": multi_width, "scalar_math": scalar_math,
           "calls_subroutine": calls_subroutine}

def _build_(name):
    ex = BuildManager().build(KERNELS[name])
    # The snapshot's kernel part is the compiled kernel source (c_code shows its splats as
    # OpenCL casts, tests/python/dsl/test_splat_spelling.py).
    assert BuildManager().generated_source(KERNELS[name]).startswith(ex.compiled_source + "\n")
    return ex


UPDATE = os.environ.get("TESSERA_UPDATE_SNAPSHOTS") == "1"


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_generated_dsl_code_matches_snapshot(name):
    source = BuildManager().generated_source(KERNELS[name])
    path = os.path.join(SNAPSHOTS, name + ".c")
    if UPDATE:
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
        pytest.fail(f"generated code of the DSL kernel '{name}' differs from its snapshot "
                    f"(regenerate with TESSERA_UPDATE_SNAPSHOTS=1 if the change is intended):\n"
                    f"{diff}")


@pytest.mark.skipif(not UPDATE, reason="compiles four kernels; runs with TESSERA_UPDATE_SNAPSHOTS=1")
def test_snapshot_kernels_compute_what_they_say():
    rng = np.random.default_rng(7)
    # spmd_add: 37 elements over 4 TECs, saturating.
    a = rng.integers(-2**31, 2**31 - 1, 37, dtype=np.int64).astype("int32")
    b = rng.integers(-2**31, 2**31 - 1, 37, dtype=np.int64).astype("int32")
    c = np.zeros(37, "int32")
    _build_("spmd_add")(a, b, c, 37)
    np.testing.assert_array_equal(c, np.clip(a.astype(np.int64) + b, -2**31, 2**31 - 1))

    # multi_width
    x = rng.uniform(-4, 4, 32).astype("float16")
    y = rng.uniform(-4, 4, 32).astype("float16")
    ci = rng.integers(-1000, 1000, 16).astype("int32")
    o, q, s = np.zeros(32, "float16"), np.zeros(16, "float32"), np.full(16, 9, "int32")
    _build_("multi_width")(x, y, o, q, ci, s)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_array_equal(o, np.concatenate([np.minimum(xf[0::2], xf[1::2]),
                                                     np.minimum(yf[0::2], yf[1::2])]))
    sums = np.where(np.arange(32) < 30, xf * yf, 0).reshape(8, 4).sum(1)
    np.testing.assert_allclose(q[0::2], sums, rtol=1e-5, atol=1e-5)
    assert s[0] == ci.sum() and not s[1:].any()

    # scalar_math
    v = rng.uniform(-2, 2, 8).astype("float32")
    h = rng.uniform(-2, 2, 16).astype("float16")
    out, n = np.zeros(32, "float32"), np.array([0, 0x00F0], "int32")
    _build_("scalar_math")(v, h, out, n)
    np.testing.assert_allclose(out[:8], np.where(v > 1, np.exp(v), np.abs(v)), rtol=1e-5)
    np.testing.assert_allclose(out[8], np.exp(v[0]) + abs(v[1]), rtol=1e-5)
    np.testing.assert_array_equal(out[16:], h.astype("float32"))
    assert n[0] == 24

    # calls_subroutine
    a2, b2 = np.array([41], "int32"), np.zeros(1, "int32")
    _build_("calls_subroutine")(a2, b2)
    assert b2[0] == 42
