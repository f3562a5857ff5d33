"""Long and deeply nested TVMScript expressions: a long sum parses without recursion; nesting
past Python's recursion limit is a located DiagnosticError, not a RecursionError."""

import runpy
import sys

import numpy as np
import pytest

from tessera.script import DiagnosticError


def _module(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(
        "from tessera.script import tir as T\n\n"
        "@T.prim_func\n"
        f"def f(A: T.Buffer((800,), \"float32\"), B: T.Buffer((1,), \"float32\")):\n"
        f"    B[0] = {body}\n")
    return path


def test_sum_of_800_terms_parses_and_builds(tmp_path):
    import tessera as ts

    path = _module(tmp_path, "long_sum", " + ".join(f"A[{i}]" for i in range(800)))
    f = runpy.run_path(str(path))["f"]
    lib = ts.build(f, target="c")
    a = np.random.default_rng(0).random(800).astype("float32")
    b = np.zeros(1, "float32")
    lib(a, b)
    np.testing.assert_allclose(b[0], a.astype("float64").sum(), rtol=1e-4)


def test_nesting_past_the_recursion_limit_is_a_located_error(tmp_path):
    depth = 180
    body = "".join("A[%d] * (" % i for i in range(depth)) + "A[0]" + ")" * depth
    path = _module(tmp_path, "deep_product", body)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        with pytest.raises(DiagnosticError) as err:
            runpy.run_path(str(path))
    finally:
        sys.setrecursionlimit(limit)
    assert "nested too deeply" in err.value.message
    assert err.value.line == 5
    assert "^" in str(err.value)
