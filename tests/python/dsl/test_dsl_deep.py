"""Long and deeply nested DSL expressions: a long sum parses without recursion (compiled and
in PySim); nesting past Python's recursion limit is a located DiagnosticError."""

import runpy
import sys

import numpy as np
import pytest

from tessera.dsl import BuildManager
from tessera.script import DiagnosticError


def _module(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(
        "from tessera.dsl import script as S\n\n"
        "@S.prim_func\n"
        "def f(a: S.ptr(\"int32\", \"global\"), out: S.ptr(\"int32\", \"global\")):\n"
        f"    out[0] = {body}\n")
    return runpy.run_path(str(path))["f"]


def test_sum_of_700_terms_compiled_and_pysim(tmp_path):
    f = _module(tmp_path, "long_sum", " + ".join(f"a[{i}]" for i in range(700)))
    a = np.arange(700, dtype="int32")
    compiled, pysim = np.zeros(1, "int32"), np.zeros(1, "int32")
    BuildManager().build(f)(a, compiled)
    f(a, pysim)
    assert compiled[0] == pysim[0] == a.sum()


def test_nesting_past_the_recursion_limit_is_a_located_error(tmp_path):
    depth = 180
    f = _module(tmp_path, "deep_product",
                "".join("a[%d] * (" % (i % 4) for i in range(depth)) + "a[0]" + ")" * depth)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        with pytest.raises(DiagnosticError) as err:
            BuildManager().build(f)
    finally:
        sys.setrecursionlimit(limit)
    assert "nested too deeply" in err.value.message
    assert err.value.line == 5
    assert "^" in str(err.value)
