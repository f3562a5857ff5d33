"""TIR expression classes under TVM's module name (``tir.expr.Var``, ``tir.expr.IntImm``); the
same classes as ``tessera.tir.Var`` etc."""

from .. import _core

PrimExpr = _core.PrimExpr
IntImm, FloatImm, StringImm = _core.IntImm, _core.FloatImm, _core.StringImm
Var, SizeVar, Cast = _core.Var, _core.SizeVar, _core.Cast
Add, Sub, Mul, Div, Mod = _core.Add, _core.Sub, _core.Mul, _core.Div, _core.Mod
FloorDiv, FloorMod, Min, Max = _core.FloorDiv, _core.FloorMod, _core.Min, _core.Max
EQ, NE, LT, LE, GT, GE = _core.EQ, _core.NE, _core.LT, _core.LE, _core.GT, _core.GE
And, Or, Not, Select = _core.And, _core.Or, _core.Not, _core.Select
Ramp, Broadcast, Shuffle, Let, Call, BufferLoad = (
    _core.Ramp, _core.Broadcast, _core.Shuffle, _core.Let, _core.Call, _core.BufferLoad)
IterVar, CommReducer = _core.IterVar, _core.CommReducer

__all__ = ["PrimExpr", "IntImm", "FloatImm", "StringImm", "Var", "SizeVar", "Cast", "Add", "Sub",
           "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE", "LT", "LE", "GT",
           "GE", "And", "Or", "Not", "Select", "Ramp", "Broadcast", "Shuffle", "Let", "Call",
           "BufferLoad", "IterVar", "CommReducer", "EqualOp", "NotEqualOp"]


class EqualOp:
    """TVM's deferred ``a == b`` (there, ``==`` on expressions gives one, to compare by
    reference in ``if`` tests). tessera's ``==`` builds the ``EQ`` node at once, so no value
    is an ``EqualOp`` unless made by hand; ``asobject()`` gives the node."""

    _node = _core.EQ

    def __init__(self, a, b, span=None):
        self.a, self.b = a, b

    def asobject(self):
        return self._node(self.a, self.b)


class NotEqualOp(EqualOp):
    """TVM's deferred ``a != b``; see ``EqualOp``."""

    _node = _core.NE


def __getattr__(name):
    # The rest of tessera.tir, as the compat mapping of this TVM module name always gave.
    from .. import tir

    return getattr(tir, name)
