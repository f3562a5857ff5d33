"""``python -m tessera.compat script.py [args]``: run a script written for TVM on tessera.

``python -m tessera.compat -m module [args]`` runs a module instead (``-m pytest tests/...`` runs
TVM's test files with the helpers of ``tvm.testing`` as a pytest plugin);
``python -m tessera.compat -c "code"`` runs a string.
"""

import runpy
import sys

from . import install

_USAGE = ("usage: python -m tessera.compat script.py [args...]\n"
          "       python -m tessera.compat -m module [args...]   (e.g. -m pytest tests/)\n"
          "       python -m tessera.compat -c \"code\" [args...]\n"
          "Runs code written for Apache TVM v0.23 with 'import tvm' mapped onto tessera.")


def _map_tvm_in_children():
    """Child processes started by the code (``subprocess.run([sys.executable, "-c", "import
    tvm; ..."])``) import ``tvm`` as tessera too: their PYTHONPATH begins with the directory of
    the ``tvm`` stand-in (tessera/compat/_child) and the one tessera itself is in."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    package_root = os.path.dirname(os.path.dirname(here))
    paths = [os.path.join(here, "_child"), package_root]
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in paths]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + rest)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install()
    _map_tvm_in_children()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        module, rest = argv[1], argv[2:]
        if module == "pytest" and "tessera.testing.plugin" not in rest:
            # tvm.testing's fixtures and markers (correlated parameters, target/dev, requires_*).
            rest = ["-p", "tessera.testing.plugin"] + rest
        sys.argv = [module] + rest
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    if argv[0] == "-c":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = ["-c"] + argv[2:]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        return 0
    path = argv[0]
    sys.argv = argv
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(path)))
    runpy.run_path(path, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
