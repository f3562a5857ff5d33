"""Parser core shared by the script dialects.

A dialect subclasses :class:`Parser` and defines ``visit_<AstNode>`` methods; the core provides
the function's source with exact spans, diagnostics rendered with a caret, a C-like scoped
variable table and evaluation of plain Python (closures, globals, compile-time helpers).
"""

import ast
import builtins
import contextlib
import inspect
import linecache
import sys
import textwrap

from .... import _core
from ....error import DiagnosticError, TesseraError


class Source:
    """The source of a Python function (or a string of code), parsed, with the offsets that map
    AST positions back to the file.

    As TVM's ``tvm.script.parser.core.diagnostics.Source``: ``source_name``, ``start_line``,
    ``start_column``, ``source`` (the function's text as written), ``full_source`` (its whole
    file) and ``as_ast()``.
    """

    def __init__(self, func):
        if isinstance(func, str):
            lines, start, self.file = func.splitlines(keepends=True) or [""], 1, "<str>"
        else:
            try:
                lines, start = inspect.getsourcelines(func)
            except (OSError, TypeError) as err:
                raise DiagnosticError(f"cannot read the source of {func!r}: {err}") from None
            self.file = inspect.getsourcefile(func) or inspect.getfile(func)
        self.start_line = start
        raw = "".join(lines)
        self.source = raw
        dedented = textwrap.dedent(raw)
        first_raw = lines[0]
        first_dedented = dedented.splitlines(keepends=True)[0] if dedented else ""
        self.col_offset = len(first_raw) - len(first_dedented)
        self.tree = ast.parse(dedented)
        full = linecache.getlines(self.file) if not isinstance(func, str) else None
        self.full_source = "".join(full) if full else raw
        _core.register_source(self.file, self.full_source)
        self.func_def = next((n for n in self.tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))), None)

    @property
    def source_name(self):
        """The file the source comes from (``"<str>"`` for a string)."""
        return self.file

    @property
    def start_column(self):
        """The column where the function's text starts in its file."""
        return self.col_offset

    def as_ast(self):
        """The parsed (dedented) source: a Python ``ast.Module``."""
        return self.tree

    def span(self, node):
        """The Span of an AST node in file coordinates."""
        if node is None or not hasattr(node, "lineno"):
            return _core.Span(self.file, self.start_line, 0)
        line = self.start_line + node.lineno - 1
        end_line = self.start_line + (node.end_lineno or node.lineno) - 1
        col = node.col_offset + self.col_offset
        end_col = (node.end_col_offset if node.end_col_offset is not None else node.col_offset + 1) + self.col_offset
        return _core.Span(self.file, line, col, end_line, end_col)


class VarTable:
    """Names visible at each point: a stack of C-like block scopes."""

    def __init__(self):
        self.frames = [{}]

    @contextlib.contextmanager
    def scope(self):
        self.frames.append({})
        try:
            yield
        finally:
            self.frames.pop()

    def define(self, name, value):
        self.frames[-1][name] = value

    def lookup(self, name):
        for frame in reversed(self.frames):
            if name in frame:
                return True, frame[name]
        return False, None

    def set(self, name, value):
        """Rebind an existing name in the frame that defines it."""
        for frame in reversed(self.frames):
            if name in frame:
                frame[name] = value
                return
        self.frames[-1][name] = value

    def all_values(self):
        merged = {}
        for frame in self.frames:
            merged.update(frame)
        return merged


def function_env(func):
    """Globals and closure values of a Python function, as they are now."""
    env = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    return env


class Parser:
    """Walks a function's AST; a dialect supplies ``visit_<Node>`` methods."""

    def __init__(self, source, env):
        self.source = source
        self.env = env
        self.vars = VarTable()

    # ---- diagnostics ----
    def error(self, node, message, cls=DiagnosticError):
        """An exception pointing at ``node`` (a ``cls``, by default a DiagnosticError); raise it."""
        span = self.source.span(node)
        return cls(_core.render_diagnostic(span, message), message, span.file, span.line, span.column)

    @contextlib.contextmanager
    def at(self, node):
        """Report errors from IR construction that carry no location at ``node``."""
        try:
            yield
        except DiagnosticError:
            raise
        except TesseraError as err:
            if err.file:
                raise
            raise self.error(node, err.message) from None

    @contextlib.contextmanager
    def with_source(self, source, env, vars=None):
        """Parse a nested body (a macro) from another function's source and environment."""
        saved = (self.source, self.env, self.vars)
        self.source, self.env = source, env
        if vars is not None:
            self.vars = vars
        try:
            yield
        finally:
            self.source, self.env, self.vars = saved

    # ---- dispatch ----
    def visit(self, node):
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported syntax: {type(node).__name__}")
        return method(node)

    def visit_body(self, stmts):
        for k, stmt in enumerate(stmts):
            # Whether the statement being visited ends its body (a scoped statement written
            # alone binds over what follows it, so it needs something to follow).
            self.stmt_is_last = k == len(stmts) - 1
            self.visit(stmt)

    # ---- expressions shared by the dialects (each supplies ``expr``) ----
    def fold_left_chain(self, node, combine):
        """Folds a left-associated chain of operators (``a + b + c + ...``) along its left
        operands without recursion, so a sum of thousands of terms parses:
        ``combine(op_node, left, right)`` per operator, operands evaluated left to right."""
        spine = []
        while isinstance(node, ast.BinOp):
            spine.append(node)
            node = node.left
        value = self.expr(node)
        for op_node in reversed(spine):
            value = combine(op_node, value, self.expr(op_node.right))
        return value

    def nested_too_deeply(self, node):
        """The error for an expression nested past Python's recursion limit; raise it (an
        outer expression raises it again, with more room, if this frame has none left)."""
        return self.error(node, "expression nested too deeply to parse (more levels than "
                          f"Python's recursion limit of {sys.getrecursionlimit()}); "
                          "split it with intermediate variables")

    # ---- Python evaluation ----
    def lookup_name(self, node, name):
        """A script variable, else a Python value from the environment, else a NameError."""
        found, value = self.vars.lookup(name)
        if found:
            return value
        if name in self.env:
            return self.env[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.error(node, f"name '{name}' is not defined")

    def eval_python(self, node, extra=None):
        """Evaluate an expression node as Python, seeing script variables as their values."""
        env = dict(self.env)
        env.update(self.vars.all_values())
        if extra:
            env.update(extra)
        code = compile(ast.Expression(body=node), self.source.file, "eval")
        try:
            return eval(code, env)
        except TesseraError:
            raise
        except Exception as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None
