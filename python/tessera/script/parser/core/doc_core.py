"""The syntax tree the parsers walk: Python's own :mod:`ast` node classes.

TVM mirrors Python's AST in a "doc" tree of its own (``tvm.script.parser.core.doc_core``);
tessera parses with :mod:`ast` directly, so this module names those classes
(``doc_core.Module``, ``doc_core.FunctionDef``, ``doc_core.With``, ...).
"""

import ast as _ast

AST = _ast.AST
globals().update({name: cls for name, cls in vars(_ast).items()
                  if isinstance(cls, type) and issubclass(cls, _ast.AST)})

__all__ = sorted(name for name, cls in globals().items()
                 if isinstance(cls, type) and issubclass(cls, _ast.AST))
