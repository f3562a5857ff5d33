"""Printing scripts with syntax highlighting (``mod.show(style=...)``, ``cprint``).

Highlighting uses Pygments when it is installed and falls back to plain text otherwise;
``black_format=True`` reformats the text with Black or Ruff when either is available.
"""

import shutil
import subprocess
import sys
import warnings

_STYLES = {"light": "default", "dark": "monokai"}


def _script_text(printable, **kwargs):
    if isinstance(printable, str):
        return printable
    script = getattr(printable, "script", None)
    if script is None:
        raise TypeError(f"cprint prints a string or an IR object with .script(), got {type(printable).__name__}")
    return script(**kwargs)


def _highlight(text, style):
    try:
        import pygments
        from pygments.formatters import Terminal256Formatter, TerminalFormatter
        from pygments.lexers.python import Python3Lexer
    except ImportError:
        return text
    if style is None or style == "ansi":
        formatter = TerminalFormatter()
    elif style in _STYLES:
        formatter = Terminal256Formatter(style=_STYLES[style])
    else:
        formatter = Terminal256Formatter(style=style)  # any Pygments style name
    return pygments.highlight(text, Python3Lexer(), formatter).rstrip("\n")


def cprint(printable, style=None, black_format=False, **script_kwargs):
    """Print ``printable`` (an IRModule, PrimFunc, other IR object, or script text) highlighted.

    ``style``: ``"light"``, ``"dark"``, ``"ansi"`` (the terminal's own colours, the default) or
    any Pygments style name. Without Pygments the text prints plain.
    """
    text = _script_text(printable, **script_kwargs)
    if black_format:
        text = _format(text)
    print(_highlight(text, style), file=sys.stdout)


def _format(code_str, formatter=None):
    """``code_str`` reformatted by ``formatter`` ("black", "ruff", or None for whichever is
    installed); unchanged, with a warning, when none is."""
    if formatter not in (None, "black", "ruff"):
        raise ValueError(f"_format: formatter must be 'black', 'ruff' or None, got {formatter!r}")
    if formatter in (None, "black"):
        try:
            import black
        except ImportError:
            if formatter == "black":
                warnings.warn("black is not installed: the script is printed unformatted", stacklevel=2)
                return code_str
        else:
            return black.format_str(code_str, mode=black.FileMode())
    ruff = shutil.which("ruff") or shutil.which("ruff", path=sys.prefix + "/bin")
    if ruff is None:
        warnings.warn("neither black nor ruff is installed: the script is printed unformatted", stacklevel=2)
        return code_str
    proc = subprocess.run([ruff, "format", "-"], input=code_str, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        warnings.warn(f"ruff could not format the script: {proc.stderr.strip()}", stacklevel=2)
        return code_str
    return proc.stdout


__all__ = ["cprint"]
