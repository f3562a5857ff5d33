#!/usr/bin/env python3
"""Run Apache TVM's own test files on tessera through ``tessera.compat`` and count the results.

    python tests/compat/run_tvm_tests.py /path/to/tvm                  # the default directories
    python tests/compat/run_tvm_tests.py /path/to/tvm -d tir-schedule -k cache
    python tests/compat/run_tvm_tests.py /path/to/tvm --json out.json --reasons 20

Each file of tests/python/{tir-schedule,tvmscript,te} (or the ``-d`` directories) runs in its own
``python -m tessera.compat -m pytest`` process (so that one crash or hang costs one file), with
a time limit. Printed per file: whether it loads (is collected without an import error),
passed / failed / skipped counts; then the totals and, with ``--reasons``, the most common first
lines of the failures. Nothing is written into the TVM checkout.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

DEFAULT_DIRS = ("tir-schedule", "tvmscript", "te")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_file(path, python, timeout, workdir, extra, launcher=("-m", "tessera.compat"), env_extra=None):
    xml_path = os.path.join(workdir, "result.xml")
    if os.path.exists(xml_path):
        os.unlink(xml_path)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for key, value in (env_extra or {}).items():  # PYTHONPATH: prepended
        env[key] = value + os.pathsep + env[key] if key == "PYTHONPATH" else value
    cmd = [python, *launcher, "-m", "pytest", path, "-q", "-p", "no:cacheprovider",
           "--rootdir", os.path.dirname(os.path.dirname(path)), "-o", "junit_family=xunit2", "--junitxml", xml_path] + extra
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
        status, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as err:
        status, output = "timeout", (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else (err.stdout or "")
    result = {"file": path, "status": status, "seconds": round(time.time() - start, 1), "loads": True,
              "passed": 0, "failed": 0, "skipped": 0, "xfailed": 0, "cases": [], "load_error": ""}
    if not os.path.exists(xml_path):
        result["loads"] = False
        result["load_error"] = "no result (" + ("timed out" if status == "timeout" else f"exit {status}") + "): " + output[-400:]
        return result
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = case.get("classname", "") + "::" + case.get("name", "")
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", child.get("message") or (child.text or "")
                if child.tag == "error" and "collection failure" in (message or ""):
                    outcome = "load_error"
                break
            if child.tag == "skipped":
                kind = child.get("type", "")
                outcome = "xfailed" if "xfail" in kind else "skipped"
                message = child.get("message") or ""
                break
        if outcome == "load_error":
            result["loads"] = False
            result["load_error"] = _first_line(child.text or message, prefer_error=True)
            continue
        if outcome == "skipped" and "environment: " in (child.text or ""):
            # A module left out for the environment (run_compass_tests.REFERENCE_ONLY_MODULES).
            result["env_excluded"] = child.text.split("environment: ", 1)[1].rstrip("\")'\"")
        result[outcome] += 1
        result["cases"].append({"name": name, "outcome": outcome, "message": _first_line(message)})
    return result


def _first_line(text, prefer_error=False):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if prefer_error:
        errs = [ln[1:].strip() for ln in lines if re.match(r"^E\s", ln)]
        # A diagnostic ("file:line:col: error: ...") says more than the caret line under it.
        diagnostics = [ln for ln in errs if ": error: " in ln]
        if diagnostics:
            return diagnostics[-1][:300]
        if errs:
            return errs[-1][:300]
    return (lines[0] if lines else "")[:300]


def run_and_report(files, root, python, timeout, pytest_args, n_reasons, json_path, prefix,
                   launcher=("-m", "tessera.compat"), env_extra=None):
    """Run each file (run_file), print a line per file and the totals, the ``n_reasons`` most
    common failure messages, and write every result to ``json_path`` when given (rewritten after
    each file, so that a run stopped part way keeps the files it measured)."""
    results = []
    totals = collections.Counter()
    print(f"{'file':58} {'loads':>5} {'pass':>5} {'fail':>5} {'skip':>5} {'secs':>6}")
    with tempfile.TemporaryDirectory(prefix=prefix) as workdir:
        for path in files:
            r = run_file(path, python, timeout, workdir, pytest_args, launcher, env_extra)
            results.append(r)
            rel = os.path.relpath(path, root)
            excluded = r.get("env_excluded") or ""
            loads = ("int" if excluded.startswith("Compass-internal") else "env" if excluded
                     else "yes" if r["loads"] else "NO")
            print(f"{rel:58} {loads:>5} {r['passed']:5} {r['failed']:5} "
                  f"{r['skipped'] + r['xfailed']:5} {r['seconds']:6}", flush=True)
            if not r["loads"]:
                print(f"    load error: {r['load_error'][:200]}", flush=True)
            if r.get("env_excluded"):
                print(f"    left out: {r['env_excluded'][:200]}", flush=True)
            totals["files"] += 1
            if r.get("env_excluded"):
                totals["env_excluded"] += 1
            else:
                totals["loads"] += int(r["loads"])
            for k in ("passed", "failed", "skipped", "xfailed"):
                totals[k] += r[k]
            if json_path:
                _write_json(json_path, totals, results)
    ran = totals["passed"] + totals["failed"]
    env = (f" (+{totals['env_excluded']} left out: environment or Compass-internal modules)"
           if totals["env_excluded"] else "")
    print(f"\nfiles: {totals['files']}, load: {totals['loads']}{env}, tests passed: {totals['passed']}, "
          f"failed: {totals['failed']}, skipped: {totals['skipped']}, xfailed: {totals['xfailed']}"
          + (f", pass rate of those run: {100.0 * totals['passed'] / ran:.1f}%" if ran else ""))
    if n_reasons:
        reasons = collections.Counter()
        for r in results:
            if not r["loads"]:
                reasons["[load] " + r["load_error"][:150]] += 1
            for c in r["cases"]:
                if c["outcome"] == "failed":
                    reasons[c["message"][:150]] += 1
        print("\nmost common failure reasons:")
        for text, n in reasons.most_common(n_reasons):
            print(f"{n:5}  {text}")
    if json_path:
        _write_json(json_path, totals, results)
    return totals


def _write_json(path, totals, results):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"totals": dict(totals), "files": results}, f, indent=1)
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tvm", help="a TVM checkout (holding tests/python)")
    parser.add_argument("-d", "--dirs", nargs="+", default=list(DEFAULT_DIRS),
                        help="directories under tests/python (default: %(default)s)")
    parser.add_argument("-k", "--filter", default="", help="only files whose name contains this")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per file")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", help="write every result (each test's outcome) here")
    parser.add_argument("--reasons", type=int, default=0, help="print the N most common failure reasons")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)

    files = []
    for d in args.dirs:
        folder = os.path.join(args.tvm, "tests", "python", d)
        if not os.path.isdir(folder):
            parser.error(f"{folder} is not a directory")
        files += sorted(os.path.join(folder, f) for f in os.listdir(folder)
                        if f.startswith("test_") and f.endswith(".py") and args.filter in f)
    run_and_report(files, os.path.join(args.tvm, "tests", "python"), args.python, args.timeout,
                   args.pytest_args, args.reasons, args.json, "tessera-tvm-tests-")
    return 0


if __name__ == "__main__":
    sys.exit(main())
