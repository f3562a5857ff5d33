"""Exceptions raised by tessera.

Every user error carries the source location when one is known: ``str(err)`` renders
``file:line:col: error: message``, the source line and a caret under the offending text.
"""

import linecache
import os
import sys

from . import _core


class TesseraError(Exception):
    """Base class of tessera's errors."""

    def __init__(self, text, message=None, file=None, line=0, column=0):
        super().__init__(text)
        self.message = message if message is not None else text
        self.file = file
        self.line = line
        self.column = column


# TVM's name for the base class (``tvm.TVMError``, ``tvm.base.TVMError``, ``tvm.error.TVMError``).
TVMError = TesseraError


class DiagnosticError(TesseraError, RuntimeError):
    """A syntax or type error in a kernel, reported at its source location (a RuntimeError, as
    TVM's and Compass's parse errors are)."""


class DiagnosticValueError(DiagnosticError, ValueError):
    """An invalid value in a program (a construct a pass cannot lower, an argument out of its
    range), reported at its source location: a DiagnosticError, and a ValueError as TVM raises
    it for the same input."""


class DiagnosticAssertionError(TesseraError, AssertionError):
    """A kernel that a check of the whole function refuses (it returns a pointer to its own
    storage), reported at its source location: an AssertionError, as Compass's analysis of a
    parsed function raises it."""


class TesseraTypeError(TesseraError, TypeError):
    """A value of the wrong type was given to an API."""


class TesseraValueError(TesseraError, ValueError):
    """A value was out of range or otherwise invalid."""


class PySimArgumentError(TesseraValueError, AssertionError):
    """PySim was called with an argument it cannot take (an array that is not C-contiguous): a
    ValueError, and an AssertionError as Compass's PySim raises it."""


class PointerTypeError(TesseraTypeError, AssertionError):
    """``S.ptr`` of an element type that a DSL pointer cannot have (``"float64"``, an unknown
    name): a TypeError, and an AssertionError as Compass's S.ptr raises it."""


class ArgumentCountError(TesseraTypeError, AssertionError):
    """A DSL kernel (compiled or under PySim) called with the wrong number of arguments: a
    TypeError, and an AssertionError as Compass's executors raise it."""


class ExpressionUseError(TesseraTypeError, ValueError):
    """An expression used where Python needs a value (``x and y``, ``if x:``, ``tir.all()`` with
    nothing): a TypeError, and a ValueError as TVM raises it."""


class TesseraRuntimeError(TesseraError, RuntimeError):
    """A failure while running compiled code."""


class ArgumentTypeError(TesseraTypeError, TesseraRuntimeError):
    """A built function was called with an argument of the wrong kind or dtype (or with the
    wrong number of arguments). A TypeError, and a TesseraRuntimeError as it was before."""


class ArgumentValueError(TesseraValueError, TesseraRuntimeError):
    """A built function was called with an array of the wrong shape, ndim, strides, offset or
    device. A ValueError, and a TesseraRuntimeError as it was before."""


class BufferArgumentError(TesseraValueError, AssertionError):
    """A schedule primitive was given a buffer its block does not access (a name it does not
    read or write, an index out of range). A ValueError, and an AssertionError as TVM raises."""


class UnsupportedTargetError(TesseraValueError, AssertionError):
    """A known target that the DSL does not build for (the X1 NPUs): a ValueError, and an
    AssertionError as Compass raises it."""


class TesseraIndexError(TesseraError, IndexError):
    """A handle or index that the object does not hold (a schedule handle of another schedule)."""


class TesseraAttributeError(TesseraError, AttributeError):
    """An unknown name or configuration key."""


class BuildError(TesseraError):
    """The C or CUDA toolchain failed or is missing."""


class ScheduleError(TesseraError):
    """A schedule primitive's preconditions do not hold."""


class InternalError(TesseraError):
    """A bug in tessera: please report it with the program that triggered it."""


# TVM's operator errors (``tvm.error.OpNotImplemented``, ...): a front end raises them for an
# operator it cannot translate.
class OpError(TesseraError):
    """An operator cannot be translated."""


class OpNotImplemented(OpError, NotImplementedError):
    """An operator (or a form of it) is not implemented."""


class OpAttributeRequired(OpError, AttributeError):
    """An operator lacks an attribute it needs."""


class OpAttributeInvalid(OpError, AttributeError):
    """An operator's attribute has a value that is not accepted."""


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An operator's attribute has a value that is not implemented."""


class _NativeLibrary:
    """TVM's ``tvm.base._LIB``: the native library of this package (tessera's ``_core``
    extension); ``_name`` is its path."""

    def __init__(self, path):
        self._name = path

    def __repr__(self):
        return f"<native library {self._name}>"


_LIB = _NativeLibrary(_core.__file__)


_core._set_exception_classes(
    {
        "diagnostic": DiagnosticError,
        "diagnostic_value": DiagnosticValueError,
        "type": TesseraTypeError,
        "value": TesseraValueError,
        "runtime": TesseraRuntimeError,
        "attribute": TesseraAttributeError,
        "build": BuildError,
        "schedule": ScheduleError,
        "internal": InternalError,
    }
)


def did_you_mean(name, candidates, prefix=""):
    """``"; did you mean S.vadd?"`` when a candidate is close to ``name``, else ``""``."""
    import difflib

    names = [c for c in candidates if isinstance(c, str) and not c.startswith("_")]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
    if not close:
        return ""
    if len(close) == 1:
        return f"; did you mean {prefix}{close[0]}?"
    return "; did you mean " + ", ".join(prefix + c for c in close[:-1]) + f" or {prefix}{close[-1]}?"


def describe_missing_attribute(base, attr, alias=None):
    """The message for ``base.attr`` that does not exist, with close names suggested."""
    import types

    if isinstance(base, types.ModuleType):
        what = f"module '{base.__name__}'" + (f" ({alias})" if alias else "")
        prefix = f"{alias}." if alias else ""
    else:
        what = repr(base)
        prefix = ""
    return f"{what} has no attribute '{attr}'" + did_you_mean(attr, dir(base), prefix)


def executing_position(frame, lines):
    """(line, column, end line, end column) of the expression ``frame`` is executing (a call
    ``S.ptr(...)``, an attribute, a subscript): Python 3.11's column table, so that a line of
    several expressions points at the right one. Columns are characters; None when unknown."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None or frame.f_lasti < 0:
        return None
    try:
        pos = list(positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return None
    line, end_line, col, end_col = pos
    if None in (line, end_line, col, end_col) or line < 1 or end_line < line:
        return None

    def chars(lineno, byte_col):  # the table counts UTF-8 bytes
        if lineno > len(lines):
            return byte_col
        return len(lines[lineno - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    return line, chars(line, col), end_line, chars(end_line, end_col)


def caller_span():
    """The Span of the user's code that called into tessera (the first frame outside the
    package), with its source registered for error rendering; the empty Span when unknown."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame = frame.f_back
    if frame is None:
        return _core.Span()
    file = frame.f_code.co_filename
    lines = linecache.getlines(file)
    if not lines:
        return _core.Span()
    _core.register_source(file, "".join(lines))
    where = executing_position(frame, lines)
    if where is None:
        text = lines[frame.f_lineno - 1] if frame.f_lineno <= len(lines) else ""
        indent = len(text) - len(text.lstrip())
        return _core.Span(file, frame.f_lineno, indent, frame.f_lineno, max(len(text.rstrip()), indent + 1))
    line, column, end_line, end = where
    if end_line == line:
        end = max(end, column + 1)
    return _core.Span(file, line, column, end_line, end)
