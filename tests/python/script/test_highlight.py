"""Highlighted printing: mod.show(style=...), cprint, _format."""

import pytest

from tessera.script import tir as T
from tessera.script.highlight import _format, cprint


@T.prim_func
def add(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] + T.float32(1.0)


def _plain(text):
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.parametrize("style", [None, "light", "dark", "ansi"])
def test_show_prints_the_script_in_every_style(capsys, style):
    pytest.importorskip("pygments")
    add.show(style=style)
    out = capsys.readouterr().out
    assert "\x1b[" in out  # coloured
    assert _plain(out).rstrip("\n") == add.script()


def test_cprint_takes_text_or_objects_and_plain_without_pygments(capsys, monkeypatch):
    cprint("x = 1", style="ansi")
    assert _plain(capsys.readouterr().out).strip() == "x = 1"
    import builtins

    real_import = builtins.__import__

    def no_pygments(name, *args, **kwargs):
        if name.startswith("pygments"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pygments)
    cprint(add)
    assert capsys.readouterr().out.rstrip("\n") == add.script()
    with pytest.raises(TypeError, match="cprint prints"):
        cprint(3)


def test_format_reformats_or_leaves_text_unchanged():
    formatted = _format("x = ( 1+2 )\n")
    assert formatted in ("x = 1 + 2\n", "x = ( 1+2 )\n")
    with pytest.raises(ValueError, match="formatter"):
        _format("x", formatter="yapf")
