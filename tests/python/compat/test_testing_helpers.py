"""tessera.testing: the helpers of tvm.testing."""

import numpy as np
import pytest

import tessera as ts
import tessera.testing
from tessera import tir
from tessera.script import tir as T


class TestSimplifyRemovesDeadBranch(tessera.testing.CompareBeforeAfter):
    transform = tir.transform.Simplify()

    def before(A: T.Buffer(1, "int32")):
        if True:
            A[0] = 42
        else:
            A[0] = 5

    def expected(A: T.Buffer(1, "int32")):
        A[0] = 42


class TestTransformAsMethod(tessera.testing.CompareBeforeAfter):
    def transform(self):
        return tir.transform.Simplify()

    def before(self):
        @T.prim_func
        def func(A: T.Buffer(1, "int32")):
            A[0] = 1 + 2

        return func

    def expected(A: T.Buffer(1, "int32")):
        A[0] = 3


class TestDecoratedFunctionsAndScheduleTransform(tessera.testing.CompareBeforeAfter):
    def transform(self):
        def inline(mod):
            sch = tir.Schedule(mod)
            sch.compute_inline("B")
            return sch.mod

        return inline

    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,), "float32")
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + T.float32(1)
        for i in range(4):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = (A[vi] + T.float32(1)) * T.float32(2)


def _before(A: T.Buffer(1, "int32")):
    A[0] = 1 + 2


def _wrong(A: T.Buffer(1, "int32")):
    A[0] = 4


def test_compare_before_after_reports_a_difference_or_a_missing_error():
    compare = tessera.testing.CompareBeforeAfter()
    before = tessera.testing._parse_prim_func(_before, "main", True)
    wrong = tessera.testing._parse_prim_func(_wrong, "main", True)
    simplify = tessera.testing._applying(tir.transform.Simplify())
    with pytest.raises(ValueError, match="StructuralEqual check failed"):
        compare.test_compare(before, wrong, simplify)

    def fails(ir):
        raise ZeroDivisionError

    compare.test_compare(before, ZeroDivisionError, fails)  # the expected error: passes
    with pytest.raises(pytest.fail.Exception, match="expected ZeroDivisionError from the transform"):
        compare.test_compare(before, ZeroDivisionError, simplify)


def test_assert_allclose():
    a = ts.nd.array(np.arange(4, dtype="float32"))
    tessera.testing.assert_allclose(a, np.arange(4))
    with pytest.raises(AssertionError):
        tessera.testing.assert_allclose(a, np.arange(4) + 1)
    with pytest.raises(AssertionError):  # no broadcasting
        tessera.testing.assert_allclose(np.ones((2, 2)), np.ones(2))


def test_prim_expr_equal():
    x = tir.Var("x", "int32")
    tessera.testing.assert_prim_expr_equal(x + 0, x)
    with pytest.raises(ValueError, match="are not equal"):
        tessera.testing.assert_prim_expr_equal(x + 1, x)


def test_targets_and_features():
    targets = dict(tessera.testing.enabled_targets())
    assert targets["llvm"] == ts.cpu(0)
    assert tessera.testing.device_enabled("llvm") and tessera.testing.device_enabled("c")
    assert not tessera.testing.device_enabled("rocm")
    assert tessera.testing.device_enabled("cuda") == ts.cuda(0).exist
    assert ("cuda" in targets) == ts.cuda(0).exist
    assert not tessera.testing.requires_rocm
    assert tessera.testing.requires_llvm
    marks = tessera.testing.requires_vulkan.marks()
    assert [m.name for m in marks] == ["vulkan", "skip"]
    assert "tessera does not support Vulkan" in marks[1].kwargs["reason"]


dtype = tessera.testing.parameter("int8", "float32")
size, doubled = tessera.testing.parameters((1, 2), (3, 6))


def test_parameter(dtype):
    assert dtype in ("int8", "float32")


def test_correlated_parameters(size, doubled):
    assert doubled == 2 * size


@tessera.testing.requires_rocm
def test_skipped_without_rocm():
    raise AssertionError("tessera has no ROCm: the marker must skip this")


@tessera.testing.parametrize_targets("llvm")
def test_parametrize_targets(target):
    assert target == "llvm"


def test_correlated_parameters_with_the_plugin_loaded_twice(tmp_path):
    """A TVM conftest loads tvm.testing.plugin (tessera's plugin under TVM's name) while
    ``python -m tessera.compat -m pytest`` loads it as tessera.testing.plugin: the tests are
    still parametrized once."""
    import os
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tvm.testing.plugin"]\n')
    (tmp_path / "test_twice.py").write_text(
        "import tvm.testing\n\n"
        "class TestPairs:\n"
        "    a, b = tvm.testing.parameters((1, 2), (3, 4))\n\n"
        "    def test_pair(self, a, b):\n"
        "        assert b == a + 1\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    proc = subprocess.run([sys.executable, "-m", "tessera.compat", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "2 passed" in proc.stdout, proc.stdout + proc.stderr
