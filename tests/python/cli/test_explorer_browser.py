"""The IR explorer page in a real headless browser: it loads without script errors and shows
every pass of a known pipeline. CI installs Debian's chromium-headless-shell and sets
TESSERA_REQUIRE_BROWSER=1, so there the test cannot skip; a screenshot is saved under build/."""

import html
import os
import re
import shutil
import subprocess

import pytest

from tessera.cli.explorer import render
from tessera.cli.kernels import Kernel, lower_with_passes
from tessera.dsl import script as S
from tessera.script import tir as T

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


@T.prim_func
def relu(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (64,), "float32")
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.max(A[vi], T.float32(0))


@S.prim_func
def add_one(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    S.vstore(S.vadd(S.vload(a), 1), b)


def browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("TESSERA_REQUIRE_BROWSER") == "1":
        pytest.fail("TESSERA_REQUIRE_BROWSER=1 but no headless browser is installed "
                    "(apt-get install chromium-headless-shell)")
    pytest.skip("no headless browser (apt-get install chromium-headless-shell)")


def run_browser(exe, args, tmp_path):
    # A private profile folder; no sandbox (CI runs as root); no GPU.
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kernel,target", [(Kernel("relu", "tir", relu, __file__), "c"),
                                           (Kernel("add_one", "dsl", add_one, __file__), "X2_1204")])
def test_page_loads_and_lists_every_pass(kernel, target, tmp_path):
    exe = browser()
    lowering = lower_with_passes(kernel, target)
    page = tmp_path / f"{kernel.name}.html"
    page.write_text(render(lowering))
    out = run_browser(exe, ["--dump-dom", page.as_uri()], tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', body.group(1)))
    assert "error" not in attrs, f"script error in the page: {attrs.get('error')}"
    assert attrs.get("ready") == "1"
    assert int(attrs["passes"]) == len(lowering.steps) - 1
    nav = dom[dom.index('id="passes"'):dom.index('id="view"')]
    names = [html.unescape(n) for n in re.findall(r"<span class=\"nm\">([^<]*)</span>", nav)]
    assert names[:1] == ["input"]
    assert names[1:len(lowering.steps)] == [s.name for s in lowering.steps[1:]]
    assert names[-1] == lowering.source_name  # the generated source comes last
    # The first pass that changed the program is shown, with its lines highlighted.
    view = dom[dom.index('id="view"'):]
    assert "changed the program" in view and ("class=\"ins\"" in view or "class=\"rep\"" in view)


def test_screenshot(tmp_path):
    exe = browser()
    lowering = lower_with_passes(Kernel("relu", "tir", relu, __file__), "c")
    page = tmp_path / "relu.html"
    page.write_text(render(lowering))
    out_dir = os.path.join(ROOT, "build") if os.path.isdir(os.path.join(ROOT, "build")) else str(tmp_path)
    shot = os.path.join(out_dir, "explorer.png")
    out = run_browser(exe, ["--hide-scrollbars", "--window-size=1400,900", f"--screenshot={shot}",
                            page.as_uri()], tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(shot) > 10000  # a drawn page, not a blank one
