"""The parser core: source and spans, diagnostics, scoped variable tables, node dispatch."""

from .core import Parser, Source, VarTable

__all__ = ["Parser", "Source", "VarTable"]
