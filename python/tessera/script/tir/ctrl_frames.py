"""TVM's explicit control-flow frames and remaining statement builtins of the T dialect:
``with T.If(c):`` / ``with T.Then():`` / ``with T.Else():``, ``with T.While(c):``,
``T.buffer_store``, ``T.func_name``, ``T.target``, ``T.continue_loop`` and
``T.break_loop``."""

from ... import _core
from ...error import TesseraTypeError, TesseraValueError
from ...tir.expr_ops import convert
from . import _state
from .frames import Frame, to_attr
from .ops import builtin


class IfFrame(Frame):
    """``with T.If(cond):`` holding a ``with T.Then():`` and an optional ``with T.Else():``."""

    def __init__(self, condition):
        self.condition = condition

    def enter(self, parser, node, name):
        parser.builder.begin_if(convert(self.condition, "bool"), parser.span(node))

    def exit(self, parser):
        parser.builder.end_if()


class _BranchFrame(Frame):
    def __init__(self, which):
        self.which = which

    def enter(self, parser, node, name):
        getattr(parser.builder, f"begin_{self.which}")()

    def exit(self, parser):
        getattr(parser.builder, f"end_{self.which}")()


class WhileFrame(Frame):
    """``with T.While(cond):``."""

    def __init__(self, condition):
        self.condition = condition

    def enter(self, parser, node, name):
        parser.builder.begin_while(convert(self.condition, "bool"), parser.span(node))

    def exit(self, parser):
        parser.builder.end_while()


@builtin
def If(condition):  # noqa: N802 - TVM's name
    """``with T.If(cond):``: an IfThenElse whose branches are ``T.Then()`` / ``T.Else()``."""
    return IfFrame(condition)


@builtin
def Then():  # noqa: N802
    """``with T.Then():`` inside ``T.If``: the branch taken when the condition holds."""
    return _BranchFrame("then")


@builtin
def Else():  # noqa: N802
    """``with T.Else():`` inside ``T.If``, after ``T.Then()``."""
    return _BranchFrame("else")


@builtin
def While(condition):  # noqa: N802
    """``with T.While(cond):``: the body runs while ``cond`` holds."""
    return WhileFrame(condition)


@builtin
def buffer_store(buffer, value, indices, predicate=None):
    """``T.buffer_store(A, value, [i, j])``: ``A[i, j] = value``."""
    parser = _state.require("T.buffer_store")
    if not isinstance(buffer, _core.Buffer):
        raise TesseraTypeError(f"T.buffer_store stores into a buffer, got {buffer!r}")
    indices = [convert(i, "int32") if isinstance(i, int) else convert(i) for i in indices]
    value = convert(value, buffer.dtype)
    pred = None if predicate is None else convert(predicate)
    parser.builder.emit(_core.BufferStore(buffer, value, indices, pred, parser.current_span()))


@builtin
def func_name(name):
    """``T.func_name("main")``: the function's global symbol."""
    parser = _state.require("T.func_name")
    if not isinstance(name, str):
        raise TesseraTypeError(f"T.func_name takes a string, got {name!r}")
    parser.builder.set_function_attr("global_symbol", _core.StringImm(name))


@builtin
def target(target_config, host=None):
    """``T.target("cuda -arch=sm_80")`` / ``T.target({"kind": "cuda", ...})``: a target as an
    attribute value (the dict of its settings, as ``Target.export()`` gives)."""
    from ...target import Target

    return to_attr(Target(_python_value(target_config), host=_python_value(host)).export())


def _python_value(value):
    """An attribute value as Python (a T.target(...) inside T.target's dict is a Map)."""
    if isinstance(value, _core.Map):
        return {k: _python_value(v) for k, v in value.items()}
    if isinstance(value, _core.Array):
        return [_python_value(v) for v in value.items]
    if isinstance(value, _core.StringImm):
        return value.value
    if isinstance(value, _core.IntImm):
        return bool(value.value) if value.dtype == "bool" else value.value
    if isinstance(value, _core.FloatImm):
        return value.value
    if isinstance(value, dict):
        return {k: _python_value(v) for k, v in value.items()}
    return value


def _jump(op_name, what):
    """The call a loop jump is: a statement written alone (``T.break_loop()``) evaluates it,
    as does ``T.evaluate(T.break_loop())``."""
    parser = _state.require(what)
    return _core.Call("int32", _core.Op.get(op_name), [], parser.current_span())


@builtin
def continue_loop():
    """``T.continue_loop()``: ``continue``."""
    return _jump("tir.continue", "T.continue_loop")


@builtin
def break_loop():
    """``T.break_loop()``: ``break``."""
    return _jump("tir.break", "T.break_loop")


NAMES = {"If": If, "Then": Then, "Else": Else, "While": While, "buffer_store": buffer_store,
         "func_name": func_name, "target": target, "continue_loop": continue_loop,
         "break_loop": break_loop}
