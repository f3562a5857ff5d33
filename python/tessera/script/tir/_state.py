"""The parser being run, so that T.* calls made while parsing reach its IR builder."""

from ...error import TesseraValueError

_active = []


def current():
    """The innermost active TIR parser, or None outside parsing."""
    return _active[-1] if _active else None


def require(what):
    """The active parser; outside parsing, an error saying where ``what`` may be used."""
    parser = current()
    if parser is None:
        raise TesseraValueError(f"{what} can only be used inside a @T.prim_func")
    return parser


def take_name(default):
    """The name of the assignment target being bound (``A`` in ``A = T.alloc_buffer(...)``)."""
    parser = current()
    if parser is None:
        return default
    return parser.take_name(default)


def take_names(count, default):
    """``count`` target names for a tuple assignment (``vi, vj = T.axis.remap(...)``)."""
    parser = current()
    if parser is None:
        return [f"{default}{k}" for k in range(count)]
    return [parser.take_name(f"{default}{k}") for k in range(count)]


def declared(value):
    """Marks ``value`` as a fresh declaration: assigning it binds a name, not a LetStmt."""
    parser = current()
    if parser is not None:
        parser.mark_declared(value)
    return value


class active:
    """``with active(parser):`` makes ``parser`` the target of T.* statement calls."""

    def __init__(self, parser):
        self.parser = parser

    def __enter__(self):
        _active.append(self.parser)
        return self.parser

    def __exit__(self, *exc):
        _active.pop()
        return False
