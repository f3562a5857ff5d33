"""tests/check_imports.py (a `make lint` step) finds circles among module-level imports."""

import os
import subprocess
import sys

CHECKER = os.path.join(os.path.dirname(__file__), "..", "check_imports.py")


def write(root, files):
    for rel, text in files.items():
        path = os.path.join(root, "python", "tessera", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def run(root):
    return subprocess.run([sys.executable, CHECKER, str(root)], capture_output=True, text=True)


def test_tessera_has_no_import_circles():
    r = run(os.path.join(os.path.dirname(__file__), "..", ".."))
    assert r.returncode == 0, r.stderr
    assert "no import circles" in r.stdout


def test_a_circle_is_reported_with_its_lines(tmp_path):
    write(tmp_path, {
        "__init__.py": "from . import a\n",
        "a.py": "from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "import os\nfrom ..a import thing\n",
    })
    r = run(tmp_path)
    assert r.returncode == 1
    assert "import circle among 2 modules" in r.stderr
    assert "a.py:1: tessera.a -> tessera.sub.b" in r.stderr
    assert "b.py:2: tessera.sub.b -> tessera.a" in r.stderr


def test_imports_inside_functions_and_type_checking_are_not_edges(tmp_path):
    write(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                 "def f():\n    from . import a\n    return a\n"),
        "c.py": "from . import _core\n",
    })
    r = run(tmp_path)
    assert r.returncode == 0, r.stderr
