"""Where TVM keeps the parser's ``Source`` (``tvm.script.parser.core.diagnostics``); tessera's
Source and diagnostics live in :mod:`tessera.script.parser.core`."""

from . import Source

__all__ = ["Source"]
