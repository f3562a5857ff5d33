"""Evaluation of the plain-Python parts of a script (``tvm.script.parser.core.evaluator``)."""

import ast
import builtins

from ....error import TesseraError


class ExprEvaluator:
    """Evaluates an expression node of a parsed source against a table of values."""

    @staticmethod
    def eval(parser, value_table, node):
        """The value of the expression ``node`` with the names of ``value_table`` (a dict) in
        scope, and Python's builtins. ``parser`` (a :class:`Parser`, or None) turns a failure
        into a diagnostic at the node."""
        if not isinstance(node, ast.expr):
            raise TypeError(f"ExprEvaluator.eval takes an expression node, got {type(node).__name__}")
        env = {"__builtins__": builtins}
        env.update(value_table or {})
        expr = ast.Expression(body=node)
        ast.fix_missing_locations(expr)
        filename = parser.source.file if parser is not None else "<expr>"
        code = compile(expr, filename, "eval")
        try:
            return eval(code, env)  # noqa: S307 - the script's own Python expression
        except TesseraError:
            raise
        except Exception as err:
            if parser is None:
                raise
            raise parser.error(node, f"{type(err).__name__}: {err}") from None


__all__ = ["ExprEvaluator"]
