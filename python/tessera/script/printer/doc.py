"""The Doc tree of Python source (TVM's ``tvm.script.printer.doc``): expressions (``IdDoc``,
``CallDoc``, ``OperationDoc``, ...) and statements (``AssignDoc``, ``ForDoc``, ``FunctionDoc``,
...) that :func:`tessera.script.printer.doc_printer.to_python_script` renders as text.

Each doc may carry ``source_paths`` (AccessPaths of the IR it stands for), which the renderer
uses to underline; statements may carry a ``comment``. tessera's own TVMScript printer is C++ and
prints text directly; this tree is the Python-level API that code written against TVM builds.

>>> from tessera.script.printer.doc import ExprStmtDoc, IdDoc, LiteralDoc
>>> from tessera.script.printer.doc_printer import to_python_script
>>> to_python_script(ExprStmtDoc(IdDoc("T").attr("evaluate").call(LiteralDoc(0))))
'T.evaluate(0)'
"""

import enum

from ... import _core


class Doc:
    """Base of every doc: the AccessPaths of the IR object(s) it was printed from."""

    def __init__(self):
        self._source_paths = ()

    @property
    def source_paths(self):
        return self._source_paths

    @source_paths.setter
    def source_paths(self, paths):
        self._source_paths = tuple(paths or ())


class ExprDoc(Doc):
    """An expression: ``.attr(name)``, ``[indices]`` and ``.call(*args, **kwargs)`` build the
    postfix docs around it."""

    def attr(self, name):
        return AttrAccessDoc(self, name)

    def call(self, *args, **kwargs):
        return CallDoc(self, *args, **kwargs)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return IndexDoc(self, list(indices))

    # Docs are identities, not values: `==` must not build an OperationDoc (as IR exprs do).
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def _expr(value, what):
    if not isinstance(value, ExprDoc):
        raise TypeError(f"{what} must be an ExprDoc, got {value!r}")
    return value


def _opt_expr(value, what):
    return None if value is None else _expr(value, what)


def _exprs(values, what):
    return tuple(_expr(v, what) for v in values)


def _stmts(values, what):
    out = tuple(values)
    for v in out:
        if not isinstance(v, StmtDoc):
            raise TypeError(f"{what} must hold StmtDocs, got {v!r}")
    return out


class LiteralDoc(ExprDoc):
    """A literal: None, a bool, an int, a float or a string (IR constants give their value)."""

    def __init__(self, value, path=None):
        super().__init__()
        if isinstance(value, (_core.IntImm, _core.FloatImm)):
            value = bool(value.value) if value.dtype == "bool" else value.value
        elif isinstance(value, _core.StringImm):
            value = value.value
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise TypeError(f"LiteralDoc takes None, bool, int, float or str, got {value!r}")
        self.value = value
        if path is not None:
            self.source_paths = [path]


class IdDoc(ExprDoc):
    """An identifier."""

    def __init__(self, name):
        super().__init__()
        if not isinstance(name, str) or not name:
            raise ValueError(f"IdDoc takes a non-empty name, got {name!r}")
        self.name = name


class AttrAccessDoc(ExprDoc):
    """``value.name``."""

    def __init__(self, value, name):
        super().__init__()
        self.value = _expr(value, "AttrAccessDoc's value")
        self.name = name


class IndexDoc(ExprDoc):
    """``value[indices]``; an index is an ExprDoc or a SliceDoc."""

    def __init__(self, value, indices):
        super().__init__()
        self.value = _expr(value, "IndexDoc's value")
        for i in indices:
            if not isinstance(i, (ExprDoc, SliceDoc)):
                raise TypeError(f"an index must be an ExprDoc or a SliceDoc, got {i!r}")
        self.indices = tuple(indices)


class CallDoc(ExprDoc):
    """``callee(*args, **kwargs)``, keyword arguments in the order given."""

    def __init__(self, callee, *args, **kwargs):
        super().__init__()
        self.callee = _expr(callee, "CallDoc's callee")
        self.args = _exprs(args, "a positional argument")
        self.kwargs_keys = tuple(kwargs)
        self.kwargs_values = _exprs(kwargs.values(), "a keyword argument")


class OperationKind(enum.IntEnum):
    """The operators of OperationDoc: unary, binary, and the conditional expression."""

    _UnaryStart = 0
    USub = 1
    Invert = 2
    Not = 3
    _UnaryEnd = 4
    _BinaryStart = 5
    Add = 6
    Sub = 7
    Mult = 8
    Div = 9
    FloorDiv = 10
    Mod = 11
    Pow = 12
    LShift = 13
    RShift = 14
    BitAnd = 15
    BitOr = 16
    BitXor = 17
    Lt = 18
    LtE = 19
    Eq = 20
    NotEq = 21
    Gt = 22
    GtE = 23
    And = 24
    Or = 25
    _BinaryEnd = 26
    _SpecialStart = 27
    IfThenElse = 28
    _SpecialEnd = 29


class OperationDoc(ExprDoc):
    """An operator applied to operands (``IfThenElse``: condition, then, else)."""

    def __init__(self, kind, operands):
        super().__init__()
        self.kind = OperationKind(kind)
        self.operands = _exprs(operands, "an operand")


class LambdaDoc(ExprDoc):
    """``lambda args: body``."""

    def __init__(self, args, body):
        super().__init__()
        self.args = tuple(args)
        for a in self.args:
            if not isinstance(a, IdDoc):
                raise TypeError(f"a lambda's arguments are IdDocs, got {a!r}")
        self.body = _expr(body, "LambdaDoc's body")


class TupleDoc(ExprDoc):
    """``(a, b)``."""

    def __init__(self, elements):
        super().__init__()
        self.elements = _exprs(elements, "a tuple element")


class ListDoc(ExprDoc):
    """``[a, b]``."""

    def __init__(self, elements):
        super().__init__()
        self.elements = _exprs(elements, "a list element")


class DictDoc(ExprDoc):
    """``{k: v}``, in the order given."""

    def __init__(self, content):
        super().__init__()
        self.keys = _exprs(content.keys(), "a dict key")
        self.values = _exprs(content.values(), "a dict value")


class SliceDoc(Doc):
    """``start:stop:step`` inside an index; each part may be absent."""

    def __init__(self, start=None, stop=None, step=None):
        super().__init__()
        self.start = _opt_expr(start, "a slice's start")
        self.stop = _opt_expr(stop, "a slice's stop")
        self.step = _opt_expr(step, "a slice's step")


class StmtDoc(Doc):
    """A statement; its ``comment`` prints after it, above it or as its docstring."""

    def __init__(self):
        super().__init__()
        self._comment = None

    @property
    def comment(self):
        return self._comment

    @comment.setter
    def comment(self, text):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"a comment is a string, got {text!r}")
        self._comment = text


class StmtBlockDoc(Doc):
    """Statements one after another."""

    def __init__(self, stmts):
        super().__init__()
        self.stmts = _stmts(stmts, "StmtBlockDoc")


class AssignDoc(StmtDoc):
    """``lhs = rhs``, ``lhs: annotation = rhs`` or ``lhs: annotation``."""

    def __init__(self, lhs, rhs=None, annotation=None):
        super().__init__()
        self.lhs = _expr(lhs, "AssignDoc's lhs")
        self.rhs = _opt_expr(rhs, "AssignDoc's rhs")
        self.annotation = _opt_expr(annotation, "AssignDoc's annotation")
        if rhs is None and annotation is None:
            raise ValueError("AssignDoc needs a right-hand side or an annotation (or both)")
        if isinstance(lhs, TupleDoc) and annotation is not None:
            raise ValueError("AssignDoc: a tuple on the left cannot have an annotation")


class IfDoc(StmtDoc):
    """``if predicate: then_branch else: else_branch``."""

    def __init__(self, predicate, then_branch, else_branch):
        super().__init__()
        self.predicate = _expr(predicate, "IfDoc's predicate")
        self.then_branch = _stmts(then_branch, "IfDoc's then branch")
        self.else_branch = _stmts(else_branch, "IfDoc's else branch")
        if not self.then_branch and not self.else_branch:
            raise ValueError("IfDoc needs a then branch or an else branch (both are empty)")


class WhileDoc(StmtDoc):
    """``while predicate: body``."""

    def __init__(self, predicate, body):
        super().__init__()
        self.predicate = _expr(predicate, "WhileDoc's predicate")
        self.body = _stmts(body, "WhileDoc's body")


class ForDoc(StmtDoc):
    """``for lhs in rhs: body``."""

    def __init__(self, lhs, rhs, body):
        super().__init__()
        self.lhs = _expr(lhs, "ForDoc's lhs")
        self.rhs = _expr(rhs, "ForDoc's rhs")
        self.body = _stmts(body, "ForDoc's body")


class ScopeDoc(StmtDoc):
    """``with rhs as lhs: body`` (``with rhs: body`` without lhs)."""

    def __init__(self, lhs, rhs, body):
        super().__init__()
        self.lhs = _opt_expr(lhs, "ScopeDoc's lhs")
        self.rhs = _expr(rhs, "ScopeDoc's rhs")
        self.body = _stmts(body, "ScopeDoc's body")


class ExprStmtDoc(StmtDoc):
    """An expression as a statement."""

    def __init__(self, expr):
        super().__init__()
        self.expr = _expr(expr, "ExprStmtDoc's expr")


class AssertDoc(StmtDoc):
    """``assert test, msg``."""

    def __init__(self, test, msg=None):
        super().__init__()
        self.test = _expr(test, "AssertDoc's test")
        self.msg = _opt_expr(msg, "AssertDoc's msg")


class ReturnDoc(StmtDoc):
    """``return value``."""

    def __init__(self, value):
        super().__init__()
        self.value = _expr(value, "ReturnDoc's value")


class FunctionDoc(StmtDoc):
    """A function definition; ``args`` are AssignDocs (``x: int = 1``); the comment prints as
    its docstring."""

    def __init__(self, name, args, decorators, return_type, body):
        super().__init__()
        if not isinstance(name, IdDoc):
            raise TypeError(f"FunctionDoc's name is an IdDoc, got {name!r}")
        self.name = name
        self.args = tuple(args)
        for a in self.args:
            if not isinstance(a, AssignDoc):
                raise TypeError(f"FunctionDoc's args are AssignDocs, got {a!r}")
        self.decorators = _exprs(decorators, "a decorator")
        self.return_type = _opt_expr(return_type, "FunctionDoc's return type")
        self.body = _stmts(body, "FunctionDoc's body")


class ClassDoc(StmtDoc):
    """A class definition; the comment prints as its docstring."""

    def __init__(self, name, decorators, body):
        super().__init__()
        if not isinstance(name, IdDoc):
            raise TypeError(f"ClassDoc's name is an IdDoc, got {name!r}")
        self.name = name
        self.decorators = _exprs(decorators, "a decorator")
        self.body = _stmts(body, "ClassDoc's body")


class CommentDoc(StmtDoc):
    """A comment on lines of its own."""

    def __init__(self, comment=None):
        super().__init__()
        self.comment = comment


class DocStringDoc(StmtDoc):
    """A docstring."""

    def __init__(self, comment=None):
        super().__init__()
        self.comment = comment


__all__ = ["Doc", "ExprDoc", "StmtDoc", "LiteralDoc", "IdDoc", "AttrAccessDoc", "IndexDoc",
           "CallDoc", "OperationKind", "OperationDoc", "LambdaDoc", "TupleDoc", "ListDoc",
           "DictDoc", "SliceDoc", "StmtBlockDoc", "AssignDoc", "IfDoc", "WhileDoc", "ForDoc",
           "ScopeDoc", "ExprStmtDoc", "AssertDoc", "ReturnDoc", "FunctionDoc", "ClassDoc",
           "CommentDoc", "DocStringDoc"]
