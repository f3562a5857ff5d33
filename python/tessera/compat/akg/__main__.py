"""Run AKG's tests on tessera with AKG's sources from a checkout.

    python -m tessera.compat.akg AKG_CHECKOUT -m pytest tests/st/ops/cpu/test_pool2d.py [args]
    python -m tessera.compat.akg AKG_CHECKOUT --cases FILE [--tests SUBSTRING] [--json OUT]

``-m module`` runs a module (``-m pytest`` adds the plugin :mod:`tessera.compat.akg.plugin`).
``--cases`` runs each case of an AKG test file on its own: AKG's test methods run their list of
cases (``("000_case", run_function, args, levels)``) through ``TestBase.common_run`` and stop at
the first failure; here every case runs, and each one's outcome, time and error are printed (and
written to ``OUT`` as JSON). ``--tests cpu_level0`` runs only the test methods whose name contains
it.
"""

import importlib.util
import json
import os
import runpy
import sys
import time
import traceback

from . import install

_USAGE = ("usage: python -m tessera.compat.akg AKG_CHECKOUT -m module [args...]\n"
          "       python -m tessera.compat.akg AKG_CHECKOUT --cases TEST_FILE [--tests SUBSTRING] [--json OUT]")


def _error_text(err):
    lines = traceback.format_exception_only(type(err), err)
    text = "".join(lines).strip()
    return text.splitlines()[0][:500] if text else type(err).__name__


def run_cases(path, tests=""):
    """Run every case of the AKG test file ``path`` (of its test methods and test functions whose
    name contains ``tests``): a list of dicts (test, case, outcome, seconds, error)."""
    import inspect

    path = os.path.abspath(path)
    sys.path.insert(0, os.path.dirname(path))
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    from tests.common.base import TestBase  # AKG's harness, from the checkout

    results = []
    current = {"test": ""}
    original = TestBase.common_run

    def common_run(self, args_list, *args, **kwargs):
        # Each case on its own, whatever the one before it did (AKG's stops at a failure).
        for arg in args_list:
            start = time.time()
            self.case_result, self._exception = True, None
            record = {"test": current["test"], "case": str(arg[0]), "outcome": "passed", "error": ""}
            try:
                ok, _ = original(self, [arg], *args, **kwargs)
                if not ok:
                    record.update(outcome="failed", error="the case's result differs from numpy's")
            except Exception as err:  # noqa: BLE001 - recorded per case
                record.update(outcome="failed", error=_error_text(err))
            record["seconds"] = round(time.time() - start, 2)
            results.append(record)
            print(f"{record['case']:12} {record['outcome']:7} {record['seconds']:7}s  {record['error'][:200]}",
                  flush=True)
        self.case_result = True
        return True, None

    tests_to_run = []
    for obj_name, obj in sorted(vars(module).items()):
        if isinstance(obj, type) and obj.__module__ == name and obj_name.startswith("Test"):
            for test_name in sorted(n for n in vars(obj) if n.startswith("test") and tests in n):
                tests_to_run.append((f"{obj_name}.{test_name}", obj, test_name))
        elif (inspect.isfunction(obj) and obj.__module__ == name and obj_name.startswith("test")
              and tests in obj_name):
            tests_to_run.append((obj_name, None, obj))
    TestBase.common_run = common_run
    try:
        for label, cls, test in tests_to_run:
            current["test"] = label
            if cls is None:
                test()
                continue
            instance = cls()
            if callable(getattr(instance, "setup", None)):
                instance.setup()
            try:
                getattr(instance, test)()
            finally:
                if callable(getattr(instance, "teardown", None)):
                    instance.teardown()
    finally:
        TestBase.common_run = original
    return results


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv[:1] in (["-h"], ["--help"]) else sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        install(argv[0])
    except (ValueError, ImportError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    rest = argv[1:]
    if rest[0] == "--cases" and len(rest) >= 2:
        json_path = rest[rest.index("--json") + 1] if "--json" in rest[2:] else None
        tests = rest[rest.index("--tests") + 1] if "--tests" in rest[2:] else ""
        results = run_cases(rest[1], tests)
        if json_path:
            with open(json_path, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1)
        return 0 if all(r["outcome"] == "passed" for r in results) else 1
    if rest[0] == "-m" and len(rest) >= 2:
        module, args = rest[1], rest[2:]
        if module == "pytest" and "tessera.compat.akg.plugin" not in args:
            args = ["-p", "tessera.compat.akg.plugin"] + args
        sys.argv = [module] + args
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    print(_USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
