"""Smoke test of bench/bench_akg_cpu.py (AKG's CPU operator cases): a quick run of one case of
each kind builds it with no schedule, checks it against numpy and prints its row."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BENCH = os.path.join(ROOT, "bench", "bench_akg_cpu.py")
ONE_OF_EACH = ("conv2d_NCHWc_009", "conv2d_NCHWc_003", "depthwise_NCHWc_008",
               "layout_transform_004", "pool2d_006", "global_pool_010")


def _run(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), BENCH_TIMER="cpu")
    return subprocess.run([sys.executable, BENCH, *args], env=env, capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.mark.skipif(not os.path.exists(BENCH), reason="no bench/ folder beside the tests")
def test_bench_akg_cpu_quick_run_checks_and_prints_every_kind():
    out = _run("--quick", "--no-tvm", "--no-plot", "--rounds", "2", "--only", ",".join(ONE_OF_EACH))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [line.split()[0] for line in out.stdout.splitlines() if line.split()[:1]]
    for name in ONE_OF_EACH:
        assert name in rows, out.stdout
    assert "numpy faster on:" in out.stdout


@pytest.mark.skipif(not os.path.exists(BENCH), reason="no bench/ folder beside the tests")
def test_bench_akg_cpu_refuses_unknown_cases():
    out = _run("--only", "conv2d_NCHWc_999")
    assert out.returncode != 0 and "unknown case or kind conv2d_NCHWc_999" in out.stderr
