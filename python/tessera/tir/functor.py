"""Visitors and mutators of TIR written in Python (TVM's ``tvm.tir.functor``).

A subclass of :class:`PyStmtExprVisitor` or :class:`PyStmtExprMutator`, decorated with
:func:`visitor` or :func:`mutator`, overrides ``visit_<node>_`` methods; the walk itself is
tessera's C++ visitor, which calls the Python method for the node kinds the class overrides and
its own default for the others. ``super().visit_add_(op)`` runs the default for ``op``: its
children are visited through the same dispatch.

>>> @ts.tir.functor.mutator
... class AddToSub(ts.tir.PyStmtExprMutator):
...     def visit_add_(self, op):
...         return ts.tir.Sub(self.visit_expr(op.a), self.visit_expr(op.b))
>>> AddToSub().visit_expr(x + y)  # x - y
"""

import weakref

from .. import _core
from ..error import TesseraTypeError

# TVM's method name (visit_<name>_) -> tessera's node kind.
_EXPR_METHODS = {
    "var": "Var", "size_var": "SizeVar", "buffer_load": "BufferLoad", "producer_load": None,
    "let": "Let", "call": "Call", "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div",
    "mod": "Mod", "floor_div": "FloorDiv", "floor_mod": "FloorMod", "min": "Min", "max": "Max",
    "eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE", "and": "And",
    "or": "Or", "reduce": None, "cast": "Cast", "not": "Not", "select": "Select", "ramp": "Ramp",
    "broadcast": "Broadcast", "shuffle": "Shuffle", "int_imm": "IntImm",
    "float_imm": "FloatImm", "string_imm": "StringImm",
}
_STMT_METHODS = {
    "attr_stmt": "AttrStmt", "if_then_else": "IfThenElse", "let_stmt": "LetStmt", "for": "For",
    "while": "While", "allocate": "Allocate", "allocate_const": "AllocateConst",
    "decl_buffer": "DeclBuffer", "buffer_store": "BufferStore", "buffer_realize": "BufferRealize",
    "assert_stmt": "AssertStmt", "seq_stmt": "SeqStmt", "evaluate": "Evaluate", "block": "Block",
    "block_realize": "BlockRealize",
}
# Node kinds without a tessera node (TVM's ProducerLoad, Reduce) have methods that are never
# called.
_KIND_TO_METHOD = {kind: f"visit_{name}_" for name, kind in {**_EXPR_METHODS, **_STMT_METHODS}.items()
                   if kind is not None}


class _Functor:
    _impl_class = None
    _base = None

    def __init__(self):
        self._impl = self._impl_class()
        base = self._base
        overridden = [kind for kind, method in _KIND_TO_METHOD.items()
                      if getattr(type(self), method) is not getattr(base, method)]
        self._impl.set_cases(overridden)

    def _functor_impl(self):
        impl = self.__dict__.get("_impl")
        if impl is None:
            raise TesseraTypeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                                   "before visiting")
        return impl

    def _dispatch(self, kind, node):
        return getattr(self, _KIND_TO_METHOD[kind])(node)

    def _visit_expr(self, expr):
        if not isinstance(expr, _core.PrimExpr):
            raise TesseraTypeError(f"visit_expr takes an expression, got {expr!r}")
        return self._functor_impl().visit_expr(expr, self._dispatch)

    def _visit_stmt(self, stmt):
        if not isinstance(stmt, _core.Stmt):
            raise TesseraTypeError(f"visit_stmt takes a statement, got {stmt!r}")
        return self._functor_impl().visit_stmt(stmt, self._dispatch)


def _default(name):
    def method(self, op):
        return self._functor_impl().default(op)

    method.__name__ = f"visit_{name}_"
    method.__doc__ = "The default case: visit the node's children."
    return method


class PyStmtExprVisitor(_Functor):
    """A visitor of statements and expressions; override ``visit_<node>_(self, op)``."""

    _impl_class = _core.PyStmtExprVisitorImpl

    def visit_expr(self, expr):
        """Visit ``expr`` (dispatching on its kind)."""
        self._visit_expr(expr)

    def visit_stmt(self, stmt):
        """Visit ``stmt`` (dispatching on its kind)."""
        self._visit_stmt(stmt)


class PyStmtExprMutator(_Functor):
    """A mutator of statements and expressions; override ``visit_<node>_(self, op)`` to return
    the node's replacement."""

    _impl_class = _core.PyStmtExprMutatorImpl

    def visit_expr(self, expr):
        """The mutated ``expr``."""
        return self._visit_expr(expr)

    def visit_stmt(self, stmt):
        """The mutated ``stmt``."""
        return self._visit_stmt(stmt)


for _name in list(_EXPR_METHODS) + list(_STMT_METHODS):
    setattr(PyStmtExprVisitor, f"visit_{_name}_", _default(_name))
    setattr(PyStmtExprMutator, f"visit_{_name}_", _default(_name))
PyStmtExprVisitor._base = PyStmtExprVisitor
PyStmtExprMutator._base = PyStmtExprMutator


def _decorate(cls, base, what):
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise TesseraTypeError(f"tir.functor.{what} decorates a subclass of {base.__name__}, "
                               f"got {cls!r}")
    init = cls.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if "_impl" not in self.__dict__:  # an __init__ that did not call super().__init__()
            _Functor.__init__(self)
        self._outer = weakref.ref(self)

    __init__.__doc__ = init.__doc__
    cls.__init__ = __init__
    return cls


def visitor(cls):
    """Class decorator of a :class:`PyStmtExprVisitor` subclass (TVM's ``@tir.functor.visitor``)."""
    return _decorate(cls, PyStmtExprVisitor, "visitor")


def mutator(cls):
    """Class decorator of a :class:`PyStmtExprMutator` subclass (TVM's ``@tir.functor.mutator``)."""
    return _decorate(cls, PyStmtExprMutator, "mutator")


__all__ = ["PyStmtExprMutator", "PyStmtExprVisitor", "mutator", "visitor"]
