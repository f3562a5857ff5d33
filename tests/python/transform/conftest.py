"""Helpers of the pass golden tests: run one pass on `before`, compare with `expected`."""

import pytest

from tessera import _core
from tessera.ir import assert_structural_equal
from tessera.tir import transform as tt


def run_pass(name, func):
    """`func` as the "main" of a module after the pass `tir.<name>`, as a PrimFunc."""
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return getattr(tt, name)()(mod).lookup("main")


def check(name, before, expected):
    after = run_pass(name, before)
    assert_structural_equal(after, expected.with_attr("global_symbol", _core.StringImm("main")))


@pytest.fixture
def golden():
    return check


def check_unchanged(name, func):
    """The pass returns the very module it was given."""
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    assert getattr(tt, name)()(mod).same_as(mod)


@pytest.fixture
def unchanged():
    return check_unchanged


@pytest.fixture
def apply():
    return run_pass
