"""AKG's own CPU operator test files (tests/st/ops/cpu of an AKG source checkout), run unchanged
through tessera.compat.akg, every case on its own. Slow (minutes) and needs the checkout: it runs
only when TESSERA_AKG_CHECKOUT names one (PYTHONPATH must also reach the ``decorator`` package
AKG's harness imports). CI does not set it; tests/compat/run_akg_tests.py runs the same files."""

import json
import os
import subprocess
import sys

import pytest

AKG = os.environ.get("TESSERA_AKG_CHECKOUT", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

pytestmark = pytest.mark.skipif(not AKG, reason="TESSERA_AKG_CHECKOUT (an AKG source checkout) is not set")


@pytest.mark.parametrize("name", ["test_conv2d", "test_depthwise_conv2d", "test_layout_transform", "test_pool2d"])
def test_akg_cpu_cases(name, tmp_path):
    path = os.path.join(AKG, "tests", "st", "ops", "cpu", name + ".py")
    out = tmp_path / "cases.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-m", "tessera.compat.akg", AKG, "--cases", path,
                           "--json", str(out)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    cases = json.loads(out.read_text())
    assert cases, f"{name}: no case ran"
    failed = [f"{c['case']}: {c['error']}" for c in cases if c["outcome"] != "passed"]
    assert not failed, "\n".join(failed)
