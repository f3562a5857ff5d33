"""Diagnostics hooks as TVM has them: ``override_renderer(render)`` makes ``render`` see the
diagnostics of a script that fails to parse (the DiagnosticError is still raised).

>>> errors = []
>>> override_renderer(lambda ctx: errors.extend(ctx.diagnostics))
>>> ts.script.from_source(bad_text)        # raises DiagnosticError; errors holds it
>>> override_renderer(None)                # back to the default
"""

import contextlib
import enum

from ..error import DiagnosticError

__all__ = ["DiagnosticLevel", "Diagnostic", "DiagnosticContext", "override_renderer",
           "get_renderer"]


class DiagnosticLevel(enum.IntEnum):
    BUG = 10
    ERROR = 20
    WARNING = 30
    NOTE = 40
    HELP = 50


class DiagnosticSpan:
    """Where a diagnostic points: ``source_name``, ``line``, ``column`` (1-based)."""

    def __init__(self, source_name, line, column):
        self.source_name = source_name
        self.line = line
        self.column = column
        self.end_line = line
        self.end_column = column

    def __repr__(self):
        return f"{self.source_name}:{self.line}:{self.column}"


class Diagnostic:
    """One diagnostic: ``level``, ``span`` and ``message``."""

    def __init__(self, level, span, message):
        self.level = level
        self.span = span
        self.message = message

    def __repr__(self):
        return f"Diagnostic({self.level.name}, {self.span!r}, {self.message!r})"


class DiagnosticContext:
    """The diagnostics a renderer is given (``ctx.diagnostics``)."""

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)

    def render(self):
        _render(self)


_renderer = [None]
_depth = [0]


def override_renderer(render_func):
    """Route diagnostics to ``render_func(ctx)``; ``None`` restores the default."""
    if render_func is not None and not callable(render_func):
        raise TypeError(f"override_renderer takes a callable or None, got {render_func!r}")
    _renderer[0] = render_func


def get_renderer():
    """The renderer set by :func:`override_renderer`, or None."""
    return _renderer[0]


def _render(ctx):
    if _renderer[0] is not None:
        _renderer[0](ctx)


@contextlib.contextmanager
def reporting():
    """Around a parse: a DiagnosticError leaving the outermost one reaches the renderer."""
    _depth[0] += 1
    try:
        yield
    except DiagnosticError as err:
        if _depth[0] == 1 and _renderer[0] is not None:
            span = DiagnosticSpan(getattr(err, "file", None) or "<unknown>",
                                  getattr(err, "line", None) or 0, getattr(err, "column", None) or 0)
            message = getattr(err, "message", None) or str(err)
            _render(DiagnosticContext([Diagnostic(DiagnosticLevel.ERROR, span, message)]))
        raise
    finally:
        _depth[0] -= 1
