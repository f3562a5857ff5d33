#!/usr/bin/env python3
"""Run Compass DSL 4.2's own unit tests on tessera through ``tessera.compat`` and count the results.

    python tests/compat/run_compass_tests.py /path/to/Compass_Apache_TVM             # every file
    python tests/compat/run_compass_tests.py /path/to/Compass_Apache_TVM --sample 10 # 1 test in 10
    python tests/compat/run_compass_tests.py /path/to/Compass_Apache_TVM -k vadd --reasons 20

The files are those of ``compass/tests/python/unittest/dsl`` except the ones about AIFF, inline
``asm`` and ``pdb`` (left out of tessera, see the README); a test of one of those in another
file, named after it as a word (``test_sub_func_aiff_desc_dtype``), is reported as skipped with
the reason. Tests marked ``REQUIRE_RPC`` (real hardware) are deselected. Each file runs in its own ``python -m tessera.compat -m pytest`` process
(``run_tvm_tests.run_file``). ``--sample N`` keeps the tests whose CRC-32 of
``<file name>::<test name>`` is 0 modulo N, so that the same sample is drawn on every run and on
every machine. Nothing is written into the Compass checkout.

Files that import torch or cv2 (only to compute reference results or inputs) are reported as left
out for the environment ("env") when those modules are absent; they are not dependencies of
tessera. A file that imports a Compass-internal module (``COMPASS_INTERNAL_MODULES``: undocumented
helpers of Compass's own implementation, not its DSL API) is reported as left out the same way,
with the reason. Compass 4.2's test code assumes NumPy 1.x (its docker scripts install numpy 1.21-1.23):
under NumPy 2 some of it raises OverflowError (NEP 50: ``shift[:7] = [3, -3, ...]`` into a uint
array, ``2**bits + np.int8(x)``) or computes a different reference (``np.clip`` of float32 by
Python ints stays float32, so 2**31 - 1 rounds up and wraps). ``--python`` runs the tests with
another interpreter, e.g. a venv holding numpy<2, pytest and ml_dtypes with tessera on its path:

    python3 -m venv /tmp/np1 && /tmp/np1/bin/pip install "numpy<2" "ml_dtypes<0.6" pytest
    python tests/compat/run_compass_tests.py /path/to/Compass_Apache_TVM --python /tmp/np1/bin/python
"""

import argparse
import json
import os
import re
import sys
import zlib

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run_tvm_tests import run_and_report  # noqa: E402

LEFT_OUT = ("aiff", "asm", "pdb")
LEFT_OUT_WHY = {"aiff": "AIFF (the NPU's fixed-function units)", "asm": "inline assembly (S.asm)",
                "pdb": "pdb breakpoints in kernels"}
# Third-party libraries that some Compass test files import at the top only to compute reference
# results or inputs (torch.nn.Upsample, a torch softmax, cv2.cvtColor); they are not dependencies
# of tessera and are not installed in its environment. A file that cannot be imported for want of
# one of them is reported as skipped for the environment, not as a tessera load failure.
REFERENCE_ONLY_MODULES = ("torch", "cv2")
ENV_SKIP = "environment: "
# Compass-internal modules that a test file imports to unit-test Compass's own implementation:
# not part of the Compass DSL API (undocumented, under the IR builder's package), so tessera does
# not provide them. Such a file is reported as left out with the reason, not as a load failure.
COMPASS_INTERNAL_MODULES = {
    "tvm.compass.dsl.script.ir": "imports tvm.compass.dsl.script.ir.utils (canonicalize_r, "
    "PARAM_R_MARK), an undocumented helper of Compass's IR builder that rewrites the 'r' argument "
    "of masked intrinsics into Compass's internal call form of a broadcast (call_extern "
    "\"__vbcast\"); tessera's parser handles 'r' itself and builds Broadcast nodes, so there is "
    "no such module to map",
}


def pytest_addoption(parser):
    parser.addoption("--tessera-sample", type=int, default=1)


def left_out_word(test_name):
    """The LEFT_OUT word that a test's name holds as a word of its own (``test_aiff_desc_dtype``,
    ``test_sub_func_aiff_desc_dtype``: tests of AIFF in a file about something else), or None."""
    words = re.split(r"[_\[\]-]+", test_name)
    return next((w for w in LEFT_OUT if w in words), None)


def pytest_collection_modifyitems(config, items):
    """A pytest hook (this file is also loaded as a plugin): reports the tests of a left-out
    feature as skipped, with the reason, and keeps the hash sample."""
    for item in items:
        word = left_out_word(getattr(item, "originalname", None) or item.name)
        if word is not None:
            item.add_marker(pytest.mark.skip(
                reason=f"left out: a test of {LEFT_OUT_WHY[word]}, which tessera does not support"))
    n = config.getoption("--tessera-sample")
    if n <= 1:
        return
    kept, dropped = [], []
    for item in items:
        key = os.path.basename(str(item.path)) + "::" + item.name
        (kept if zlib.crc32(key.encode()) % n == 0 else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A pytest hook: a module whose import fails only for a REFERENCE_ONLY_MODULES module is
    collected as skipped, so that the environment is not counted against tessera."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    text = str(report.longrepr)
    for name, why in COMPASS_INTERNAL_MODULES.items():
        if f"No module named '{name}" in text:
            report.outcome = "skipped"
            report.longrepr = (str(report.fspath), 0,
                               f"Skipped: {ENV_SKIP}Compass-internal module: {why}")
            return
    for name in REFERENCE_ONLY_MODULES:
        if f"ModuleNotFoundError: No module named '{name}'" in text:
            report.outcome = "skipped"
            report.longrepr = (str(report.fspath), 0,
                               f"Skipped: {ENV_SKIP}needs the third-party module '{name}' (reference "
                               f"results only), not installed")
            return


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("compass", help="a Compass_Apache_TVM checkout (holding compass/tests/python)")
    parser.add_argument("-k", "--filter", default="", help="only files whose name contains this")
    parser.add_argument("--sample", type=int, default=1, help="run one test in N (by a hash of its name)")
    parser.add_argument("--skip-measured", nargs="+", default=[], metavar="JSON",
                        help="leave out the files that these --json results of earlier runs hold "
                             "(to go on with a run that was stopped)")
    parser.add_argument("--shard", default="1/1", metavar="I/N",
                        help="run the I-th of N interleaved parts of the file list (1/2 and 2/2 "
                             "together are every file), e.g. to run N parts at once")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per file")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", help="write every result (each test's outcome) here")
    parser.add_argument("--reasons", type=int, default=0, help="print the N most common failure reasons")
    args = parser.parse_args(argv)

    folder = os.path.join(args.compass, "compass", "tests", "python", "unittest", "dsl")
    if not os.path.isdir(folder):
        parser.error(f"{folder} is not a directory")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.startswith("test_") and f.endswith(".py") and args.filter in f
                   and not any(word in f for word in LEFT_OUT))
    try:
        index, count = (int(x) for x in args.shard.split("/"))
        if not 1 <= index <= count:
            raise ValueError
    except ValueError:
        parser.error(f"--shard {args.shard!r}: expected I/N with 1 <= I <= N, e.g. 1/2")
    measured = set()
    for path in args.skip_measured:
        with open(path, encoding="utf-8") as f:
            measured.update(os.path.basename(r["file"]) for r in json.load(f)["files"])
    files = [f for f in files if os.path.basename(f) not in measured][index - 1::count]
    os.environ["PYTHONPATH"] = HERE + os.pathsep + os.environ.get("PYTHONPATH", "")
    extra = ["-p", "run_compass_tests", "--tessera-sample", str(args.sample), "-m", "not REQUIRE_RPC"]
    run_and_report(files, folder, args.python, args.timeout, extra, args.reasons, args.json,
                   "tessera-compass-tests-")
    return 0


if __name__ == "__main__":
    sys.exit(main())
