"""The examples in examples/ run and print what their comments promise."""

import os
import subprocess
import sys

import pytest

import tessera

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Where the tessera under test lives: the source tree's python/ or an installed site-packages.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))


def run_example(name):
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize(
    "name,expect",
    [
        ("quickstart.py", "[0 1 2 3 4 5 6 7] [1 2 3 4 5 6 7 8]"),
        ("dsl_subroutine.py", "[41] [42]"),
        ("dsl_macro.py", "[1 2] [9 0]"),
    ],
)
def test_example_output(name, expect):
    out = run_example(name)
    assert out.strip().splitlines()[-1] == expect
    assert "#include <compass/dsl.h>" in out
