"""Render a Doc tree as Python source (TVM's ``tvm.script.printer.doc_printer``), with the
fewest parentheses Python's operator precedence needs, optional line numbers, and ``^^^``
underlines below the text printed from given AccessPaths (with a few lines of context).

>>> from tessera.script.printer.doc import IdDoc, OperationDoc, OperationKind
>>> x, y = IdDoc("x"), IdDoc("y")
>>> to_python_script(OperationDoc(OperationKind.Mult, [OperationDoc(OperationKind.Add, [x, y]), y]))
'(x + y) * y'
"""

from .doc import (AssertDoc, AssignDoc, AttrAccessDoc, CallDoc, ClassDoc, CommentDoc, DictDoc,
                  DocStringDoc, ExprStmtDoc, ForDoc, FunctionDoc, IdDoc, IfDoc, IndexDoc,
                  LambdaDoc, ListDoc, LiteralDoc, OperationDoc, OperationKind, ReturnDoc,
                  ScopeDoc, SliceDoc, StmtBlockDoc, StmtDoc, TupleDoc, WhileDoc)

K = OperationKind

_TOKENS = {
    K.USub: "-", K.Invert: "~", K.Not: "not ",
    K.Add: "+", K.Sub: "-", K.Mult: "*", K.Div: "/", K.FloorDiv: "//", K.Mod: "%", K.Pow: "**",
    K.LShift: "<<", K.RShift: ">>", K.BitAnd: "&", K.BitOr: "|", K.BitXor: "^", K.Lt: "<",
    K.LtE: "<=", K.Eq: "==", K.NotEq: "!=", K.Gt: ">", K.GtE: ">=", K.And: "and", K.Or: "or",
}

# Python's precedence, lowest first.
LAMBDA, IF_ELSE, OR, AND, NOT, COMPARE, BIT_OR, BIT_XOR, BIT_AND, SHIFT, ADD, MULT, UNARY, POW, \
    POSTFIX, ATOM = range(16)

_PRECEDENCE = {
    K.IfThenElse: IF_ELSE, K.Or: OR, K.And: AND, K.Not: NOT,
    K.Lt: COMPARE, K.LtE: COMPARE, K.Eq: COMPARE, K.NotEq: COMPARE, K.Gt: COMPARE, K.GtE: COMPARE,
    K.BitOr: BIT_OR, K.BitXor: BIT_XOR, K.BitAnd: BIT_AND, K.LShift: SHIFT, K.RShift: SHIFT,
    K.Add: ADD, K.Sub: ADD, K.Mult: MULT, K.Div: MULT, K.FloorDiv: MULT, K.Mod: MULT,
    K.USub: UNARY, K.Invert: UNARY, K.Pow: POW,
}


def _precedence(doc):
    if isinstance(doc, OperationDoc):
        return _PRECEDENCE[doc.kind]
    if isinstance(doc, LambdaDoc):
        return LAMBDA
    if isinstance(doc, (AttrAccessDoc, IndexDoc, CallDoc)):
        return POSTFIX
    return ATOM


def _escape(text):
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Printer:
    def __init__(self, indent_spaces):
        self.parts = []
        self.size = 0
        self.indent = 0
        self.step = indent_spaces
        self.spans = []  # (source_paths, start, end) of every doc that has paths

    def write(self, text):
        self.parts.append(text)
        self.size += len(text)

    def newline(self):
        self.write("\n" + " " * self.indent)

    def print(self, doc):
        start = self.size
        method = getattr(self, "_" + type(doc).__name__, None)
        if method is None:
            raise TypeError(f"to_python_script cannot print {doc!r}")
        method(doc)
        if doc.source_paths:
            self.spans.append((doc.source_paths, start, self.size))

    # ---- expressions ----

    def sub(self, doc, parenthesize):
        if parenthesize:
            self.write("(")
            self.print(doc)
            self.write(")")
        else:
            self.print(doc)

    def items(self, docs, sep=", "):
        for i, d in enumerate(docs):
            if i:
                self.write(sep)
            self.print(d)

    def _LiteralDoc(self, doc):
        v = doc.value
        if v is None or isinstance(v, bool):
            self.write(str(v))
        elif isinstance(v, str):
            self.write(_escape(v))
        elif isinstance(v, float):
            self.write(repr(v))
        else:
            self.write(str(v))

    def _IdDoc(self, doc):
        self.write(doc.name)

    def _AttrAccessDoc(self, doc):
        self.sub(doc.value, _precedence(doc.value) < POSTFIX)
        self.write("." + doc.name)

    def _IndexDoc(self, doc):
        self.sub(doc.value, _precedence(doc.value) < POSTFIX)
        self.write("[")
        if doc.indices:
            self.items(doc.indices)
        else:
            self.write("()")
        self.write("]")

    def _SliceDoc(self, doc):
        if doc.start is not None:
            self.print(doc.start)
        self.write(":")
        if doc.stop is not None:
            self.print(doc.stop)
        if doc.step is not None:
            self.write(":")
            self.print(doc.step)

    def _CallDoc(self, doc):
        self.sub(doc.callee, _precedence(doc.callee) < POSTFIX)
        self.write("(")
        self.items(doc.args)
        for i, (key, value) in enumerate(zip(doc.kwargs_keys, doc.kwargs_values)):
            if i or doc.args:
                self.write(", ")
            self.write(key + "=")
            self.print(value)
        self.write(")")

    def _OperationDoc(self, doc):
        kind, ops, own = doc.kind, doc.operands, _PRECEDENCE[doc.kind]
        if K._UnaryStart < kind < K._UnaryEnd:
            if len(ops) != 1:
                raise ValueError(f"the unary operator {kind.name} takes 1 operand, got {len(ops)}")
            self.write(_TOKENS[kind])
            self.sub(ops[0], _precedence(ops[0]) < own)
        elif K._BinaryStart < kind < K._BinaryEnd:
            if len(ops) != 2:
                raise ValueError(f"the binary operator {kind.name} takes 2 operands, got {len(ops)}")
            lhs, rhs = ops
            if kind == K.Pow:  # right-associative; a unary operand on the right needs none
                self.sub(lhs, _precedence(lhs) <= own)
                self.write(" ** ")
                self.sub(rhs, _precedence(rhs) < UNARY)
            else:
                self.sub(lhs, _precedence(lhs) < own)
                self.write(f" {_TOKENS[kind]} ")
                self.sub(rhs, _precedence(rhs) <= own)
        elif kind == K.IfThenElse:
            if len(ops) != 3:
                raise ValueError(f"IfThenElse takes 3 operands (condition, then, else), got {len(ops)}")
            cond, then, other = ops
            self.sub(then, _precedence(then) < own)
            self.write(" if ")
            self.sub(cond, _precedence(cond) <= own)
            self.write(" else ")
            self.sub(other, _precedence(other) <= own)
        else:
            raise ValueError(f"cannot print the operation {kind.name}")

    def _LambdaDoc(self, doc):
        self.write("lambda ")
        self.items(doc.args)
        self.write(": ")
        self.print(doc.body)

    def _TupleDoc(self, doc, parens=True):
        if parens:
            self.write("(")
        self.items(doc.elements)
        if len(doc.elements) == 1:
            self.write(",")
        if parens:
            self.write(")")

    def _ListDoc(self, doc):
        self.write("[")
        self.items(doc.elements)
        self.write("]")

    def _DictDoc(self, doc):
        self.write("{")
        for i, (k, v) in enumerate(zip(doc.keys, doc.values)):
            if i:
                self.write(", ")
            self.print(k)
            self.write(": ")
            self.print(v)
        self.write("}")

    # ---- statements ----

    def bare_tuple(self, doc):
        """A tuple on the left of `=` or `in` prints without its outer parentheses."""
        if isinstance(doc, TupleDoc) and doc.elements:
            start = self.size
            self._TupleDoc(doc, parens=False)
            if doc.source_paths:
                self.spans.append((doc.source_paths, start, self.size))
        else:
            self.print(doc)

    def block(self, stmts):
        self.indent += self.step
        if not stmts:
            self.newline()
            self.write("pass")
        for s in stmts:
            self.newline()
            self.print(s)
        self.indent -= self.step

    def trailing_comment(self, doc):
        if doc.comment:
            if "\n" in doc.comment:
                raise ValueError(f"the comment of a {type(doc).__name__} cannot have newline "
                                 f"characters: {doc.comment!r}")
            self.write("  # " + doc.comment)

    def leading_comment(self, doc):
        if doc.comment:
            for line in doc.comment.split("\n"):
                self.write(("# " + line).rstrip())
                self.newline()

    def docstring(self, comment):
        self.write('"""')
        for line in comment.split("\n"):
            if line:
                self.newline()
                self.write(line)
            else:
                self.write("\n")
        self.newline()
        self.write('"""')

    def _StmtBlockDoc(self, doc):
        for i, s in enumerate(doc.stmts):
            if i:
                self.newline()
            self.print(s)

    def _AssignDoc(self, doc):
        self.bare_tuple(doc.lhs)
        if doc.annotation is not None:
            self.write(": ")
            self.print(doc.annotation)
        if doc.rhs is not None:
            self.write(" = ")
            self.bare_tuple(doc.rhs)
        self.trailing_comment(doc)

    def _IfDoc(self, doc):
        self.leading_comment(doc)
        self.write("if ")
        self.print(doc.predicate)
        self.write(":")
        self.block(doc.then_branch)
        if doc.else_branch:
            self.newline()
            self.write("else:")
            self.block(doc.else_branch)

    def _WhileDoc(self, doc):
        self.leading_comment(doc)
        self.write("while ")
        self.print(doc.predicate)
        self.write(":")
        self.block(doc.body)

    def _ForDoc(self, doc):
        self.leading_comment(doc)
        self.write("for ")
        self.bare_tuple(doc.lhs)
        self.write(" in ")
        self.print(doc.rhs)
        self.write(":")
        self.block(doc.body)

    def _ScopeDoc(self, doc):
        self.leading_comment(doc)
        self.write("with ")
        self.print(doc.rhs)
        if doc.lhs is not None:
            self.write(" as ")
            self.bare_tuple(doc.lhs)
        self.write(":")
        self.block(doc.body)

    def _ExprStmtDoc(self, doc):
        self.print(doc.expr)
        self.trailing_comment(doc)

    def _AssertDoc(self, doc):
        self.write("assert ")
        self.print(doc.test)
        if doc.msg is not None:
            self.write(", ")
            self.print(doc.msg)
        self.trailing_comment(doc)

    def _ReturnDoc(self, doc):
        self.write("return ")
        self.print(doc.value)
        self.trailing_comment(doc)

    def decorators(self, doc):
        for d in doc.decorators:
            self.write("@")
            self.print(d)
            self.newline()

    def body_with_docstring(self, doc):
        self.indent += self.step
        if doc.comment:
            self.newline()
            self.docstring(doc.comment)
        if not doc.body:
            self.newline()
            self.write("pass")
        for s in doc.body:
            self.newline()
            self.print(s)
        self.indent -= self.step

    def _FunctionDoc(self, doc):
        self.decorators(doc)
        self.write("def ")
        self.print(doc.name)
        self.write("(")
        for i, arg in enumerate(doc.args):
            if i:
                self.write(", ")
            start = self.size
            self.print(arg.lhs)
            if arg.annotation is not None:
                self.write(": ")
                self.print(arg.annotation)
            if arg.rhs is not None:
                self.write(" = ")
                self.print(arg.rhs)
            if arg.source_paths:
                self.spans.append((arg.source_paths, start, self.size))
        self.write(")")
        if doc.return_type is not None:
            self.write(" -> ")
            self.print(doc.return_type)
        self.write(":")
        self.body_with_docstring(doc)
        self.write("\n")  # a blank line after a function

    def _ClassDoc(self, doc):
        self.decorators(doc)
        self.write("class ")
        self.print(doc.name)
        self.write(":")
        self.body_with_docstring(doc)

    def _CommentDoc(self, doc):
        if doc.comment:
            for i, line in enumerate(doc.comment.split("\n")):
                if i:
                    self.newline()
                self.write(("# " + line).rstrip())

    def _DocStringDoc(self, doc):
        if doc.comment:
            self.docstring(doc.comment)


def _underlined_spans(spans, paths):
    """The (start, end) text ranges to underline: for each path, the docs whose source path is
    the longest prefix of it (all of them when several share that length)."""
    ranges = []
    for target in paths:
        best, chosen = -1, []
        for source_paths, start, end in spans:
            for p in source_paths:
                if p.is_prefix_of(target):
                    n = len(p.steps)
                    if n > best:
                        best, chosen = n, [(start, end)]
                    elif n == best:
                        chosen.append((start, end))
        ranges.extend(chosen)
    return ranges


def _layout(text, ranges, print_line_numbers, num_context_lines):
    """The lines of ``text`` (offsets as printed; trailing spaces and blank lines dropped), each
    followed by its underline, numbered and cut to the context lines as asked."""
    lines = text.split("\n")
    starts, offset = [], 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    lines = [line.rstrip() for line in lines]
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    # Columns to underline per line.
    marks = {}
    for start, end in ranges:
        for i, line in enumerate(lines):
            lo, hi = starts[i], starts[i] + len(line)
            if end <= lo or start >= hi:
                continue
            indent = len(line) - len(line.lstrip(" "))
            first, last = max(start - lo, indent), min(end, hi) - lo
            if first < last:
                marks.setdefault(i, set()).update(range(first, last))
    shown = set(range(len(lines)))
    if marks and num_context_lines is not None and num_context_lines >= 0:
        shown = {j for i in marks for j in range(i - num_context_lines, i + num_context_lines + 1)
                 if 0 <= j < len(lines)}
        # A gap of one line prints that line rather than a marker line.
        for j in range(1, len(lines) - 1):
            if j not in shown and j - 1 in shown and j + 1 in shown:
                shown.add(j)
        if 0 not in shown and 1 in shown:
            shown.add(0)
        if len(lines) - 1 not in shown and len(lines) - 2 in shown:
            shown.add(len(lines) - 1)
    width = len(str(len(lines)))
    out, skipped = [], 0
    for i, line in enumerate(lines):
        if i not in shown:
            skipped += 1
            continue
        if skipped:
            out.append(f"(... {skipped} lines skipped ...)")
            skipped = 0
        prefix = f"{i + 1:>{width}} " if print_line_numbers else ""
        out.append((prefix + line).rstrip())
        if i in marks:
            cols = marks[i]
            under = "".join("^" if c in cols else " " for c in range(max(cols) + 1))
            out.append(" " * len(prefix) + under)
    if skipped:
        out.append(f"(... {skipped} lines skipped ...)")
    return "\n".join(out).rstrip()


def to_python_script(doc, indent_spaces=4, print_line_numbers=False, num_context_lines=None,
                     path_to_underline=None):
    """The Python text of ``doc`` (a Doc tree).

    ``path_to_underline`` (AccessPaths) underlines the text of the docs printed from them (the
    longest matching prefix wins); ``num_context_lines`` then keeps only that many lines around
    each underline; ``print_line_numbers`` numbers the lines.
    """
    if isinstance(doc, (list, tuple)):
        doc = StmtBlockDoc(list(doc))
    printer = _Printer(indent_spaces)
    printer.print(doc)
    text = "".join(printer.parts)
    if num_context_lines is not None and num_context_lines < 0:
        num_context_lines = None
    ranges = _underlined_spans(printer.spans, path_to_underline or [])
    return _layout(text, ranges, print_line_numbers, num_context_lines)


__all__ = ["to_python_script"]
