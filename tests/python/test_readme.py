"""Every ```python block of the README and of the user guide (docs/*.md) runs as written, each
in a fresh interpreter.

A block that builds for CUDA runs on the CPU emulator when there is no GPU, as the README says.
Blocks are extracted from the README itself, so an edit that breaks one fails here."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

import tessera

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
DOCS = [README] + sorted(os.path.join(ROOT, "docs", f) for f in (os.listdir(os.path.join(ROOT, "docs"))
                                                                 if os.path.isdir(os.path.join(ROOT, "docs")) else [])
                         if f.endswith(".md"))
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))


def python_blocks(paths=None):
    blocks = []
    for path in paths or DOCS:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        name = os.path.relpath(path, ROOT)
        for m in re.finditer(r"^([ \t]*)```python\n(.*?)^\1```", text, flags=re.M | re.S):
            line = text.count("\n", 0, m.start()) + 1
            blocks.append(pytest.param(textwrap.dedent(m.group(2)), id=f"{name}:{line}"))
    return blocks


def test_the_readme_has_python_blocks():
    if not os.path.exists(README):
        pytest.skip("no README beside the tests (an installed package)")
    assert len(python_blocks([README])) >= 5


@pytest.mark.parametrize("code", python_blocks())
def test_readme_block_runs(code, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if 'target="cuda"' in code:
        env.setdefault("TESSERA_CUDA_EMULATOR", "1")
    # A file, not `-c`: kernels are parsed from their source text.
    script = tmp_path / "block.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, f"the block failed:\n{code}\n--- stderr ---\n{out.stderr[-4000:]}"
