"""Exceptions raised by tessera.

Every user error carries the source location when one is known: ``str(err)`` renders
``file:line:col: error: message``, the source line and a caret under the offending text.
"""

from . import _core


class TesseraError(Exception):
    """Base class of tessera's errors."""

    def __init__(self, text, message=None, file=None, line=0, column=0):
        super().__init__(text)
        self.message = message if message is not None else text
        self.file = file
        self.line = line
        self.column = column


class DiagnosticError(TesseraError, RuntimeError):
    """A syntax or type error in a kernel, reported at its source location (a RuntimeError, as
    TVM's and Compass's parse errors are)."""


class TesseraTypeError(TesseraError, TypeError):
    """A value of the wrong type was given to an API."""


class TesseraValueError(TesseraError, ValueError):
    """A value was out of range or otherwise invalid."""


class TesseraRuntimeError(TesseraError, RuntimeError):
    """A failure while running compiled code."""


class TesseraAttributeError(TesseraError, AttributeError):
    """An unknown name or configuration key."""


class BuildError(TesseraError):
    """The C or CUDA toolchain failed or is missing."""


class ScheduleError(TesseraError):
    """A schedule primitive's preconditions do not hold."""


class InternalError(TesseraError):
    """A bug in tessera: please report it with the program that triggered it."""


_core._set_exception_classes(
    {
        "diagnostic": DiagnosticError,
        "type": TesseraTypeError,
        "value": TesseraValueError,
        "runtime": TesseraRuntimeError,
        "attribute": TesseraAttributeError,
        "build": BuildError,
        "schedule": ScheduleError,
        "internal": InternalError,
    }
)
