#!/usr/bin/env python3
"""Run AKG's CPU operator tests on tessera, unchanged, with AKG's sources from a checkout.

    python tests/compat/run_akg_tests.py /path/to/akg                 # tests/st/ops/cpu
    python tests/compat/run_akg_tests.py /path/to/akg --json out.json --pythonpath /path/to/deps
    python tests/compat/run_akg_tests.py /path/to/akg -d . --tests cpu_level0 --no-pytest   # tests/st/ops/*.py

Each test file of ``tests/st/ops/<dir>`` (``-d``; default ``cpu``; ``.`` for the files of
``tests/st/ops`` itself, whose test classes hold Ascend, GPU and CPU methods) runs its test
methods whose name contains ``--tests`` (default ``cpu``) in its own process with
``python -m tessera.compat.akg AKG -m pytest FILE`` (AKG's operators, ``tests/common`` harness
and its numpy references come from the checkout; AKG's build/run interface and its TVM fork's
API are tessera's: see ``tessera.compat.akg``). An AKG test method runs a list of cases and
stops at the first failing one, so each file is then also run case by case
(``python -m tessera.compat.akg AKG --cases FILE``; ``--no-cases`` skips this), printing each
case's outcome and, for a failure, why. Nothing is written into the checkout.

AKG's harness needs the Python package ``decorator`` (in AKG's requirements.txt); give a folder
holding it with ``--pythonpath`` when the interpreter lacks it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_tvm_tests  # noqa: E402

ROOT = run_tvm_tests.ROOT


def run_cases(path, checkout, python, timeout, env_extra, tests):
    """Run each case of ``path`` on its own; a list of case records (or one load failure)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(ROOT, "python"), env_extra.get("PYTHONPATH"),
                                                      os.environ.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="tessera-akg-cases-") as workdir:
        out = os.path.join(workdir, "cases.json")
        cmd = [python, "-W", "ignore", "-m", "tessera.compat.akg", checkout, "--cases", path, "--tests", tests, "--json", out]
        try:
            proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
            text = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            return [{"case": "*", "outcome": "failed", "error": f"timed out after {timeout} s", "seconds": timeout}]
        if not os.path.exists(out):
            return [{"case": "*", "outcome": "failed", "error": "did not run: " + text.strip()[-400:],
                     "seconds": 0}]
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("akg", help="an AKG source checkout (holding python/akg and tests/st/ops)")
    parser.add_argument("-d", "--dirs", nargs="+", default=["cpu"], help="directories under tests/st/ops")
    parser.add_argument("-k", "--filter", default="", help="only files whose name contains this")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per file")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pythonpath", default="", help="more folders for PYTHONPATH (e.g. one holding "
                                                         "the 'decorator' package AKG's harness needs)")
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--tests", default="cpu", help="only test methods whose name contains this "
                        "(default: %(default)s; AKG's classes also hold Ascend and GPU methods)")
    parser.add_argument("--no-cases", action="store_true", help="skip the case-by-case runs")
    parser.add_argument("--no-pytest", action="store_true", help="skip the file-by-file pytest runs")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)

    checkout = os.path.abspath(args.akg)
    if not os.path.isfile(os.path.join(checkout, "python", "akg", "__init__.py")):
        parser.error(f"{checkout} is not an AKG checkout (no python/akg/__init__.py)")
    files = []
    for d in args.dirs:
        folder = os.path.normpath(os.path.join(checkout, "tests", "st", "ops", d))
        if not os.path.isdir(folder):
            parser.error(f"{folder} is not a directory")
        files += sorted(os.path.join(folder, f) for f in os.listdir(folder)
                        if f.startswith("test_") and f.endswith(".py") and args.filter in f)
    env_extra = {"PYTHONPATH": args.pythonpath} if args.pythonpath else {}
    json_files = args.json + ".files" if args.json else None
    report = {"cases": {}}
    if not args.no_pytest:
        totals = run_tvm_tests.run_and_report(
            files, os.path.join(checkout, "tests"), args.python, args.timeout,
            ["-W", "ignore", "-k", args.tests] + args.pytest_args, 10, json_files, "tessera-akg-tests-",
            launcher=("-W", "ignore", "-m", "tessera.compat.akg", checkout), env_extra=env_extra)
        report["totals"] = dict(totals)
    if not args.no_cases:
        print(f"\n{'case':60} {'outcome':8} {'secs':>6}")
        counts = {"passed": 0, "failed": 0}
        for path in files:
            start = time.time()
            cases = run_cases(path, checkout, args.python, args.timeout, env_extra, args.tests)
            rel = os.path.relpath(path, os.path.join(checkout, "tests"))
            report["cases"][rel] = cases
            for c in cases:
                counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
                print(f"{rel + '::' + c['case']:60} {c['outcome']:8} {c.get('seconds', 0):6}", flush=True)
                if c["outcome"] != "passed":
                    print(f"    why: {c['error'][:300]}", flush=True)
            print(f"    ({time.time() - start:.0f} s)", flush=True)
        report["case_totals"] = counts
        print(f"\ncases: {counts['passed']} passed, {counts['failed']} failed of {sum(counts.values())}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        if json_files and os.path.exists(json_files):
            os.unlink(json_files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
