"""tests/compat/run_compass_tests.py: a test of a left-out feature (AIFF, inline asm, pdb) in a file
about something else is reported as skipped with the reason, not as a tessera failure."""

import os
import subprocess
import sys
import textwrap

import pytest

COMPAT = os.path.join(os.path.dirname(__file__), "..", "..", "compat")
sys.path.insert(0, COMPAT)

import run_compass_tests  # noqa: E402


@pytest.mark.parametrize("name, word", [
    ("test_aiff_desc_dtype", "aiff"),
    ("test_sub_func_aiff_desc_dtype", "aiff"),
    ("test_inline_asm", "asm"),
    ("test_case[aiff-int8]", "aiff"),
    ("test_vadd", None),
    ("test_plasm_like_name", None),      # only a whole word counts
    ("test_aiffle", None),
])
def test_left_out_word(name, word):
    assert run_compass_tests.left_out_word(name) == word


def test_left_out_tests_are_reported_as_skipped(tmp_path):
    (tmp_path / "test_mixed.py").write_text(textwrap.dedent("""
        def test_vadd():
            assert 1 + 1 == 2

        def test_sub_func_aiff_desc_dtype():
            raise AssertionError("never run")
    """))
    env = dict(os.environ, PYTHONPATH=os.path.abspath(COMPAT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "run_compass_tests",
                           "-p", "no:cacheprovider", str(tmp_path / "test_mixed.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "1 passed, 1 skipped" in out, out
    assert "left out: a test of AIFF" in out, out
