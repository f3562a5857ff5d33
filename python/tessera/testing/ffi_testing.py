"""The functions TVM's runtime tests call through ``tvm.testing`` and the global function
registry (``testing.echo``, ``testing.AcceptsBool``, ``testing.ErrorTest``, ...), with TVM's
results: values come back as the types the runtime converts them to (a bool stays a bool, a
number given where an expression is expected becomes an IntImm), and errors as the exception
classes of :mod:`tessera.error`.

They are registered as global functions when :mod:`tessera.testing` is imported
(``tessera.get_global_func("testing.AcceptsInt")``)."""

from .. import error as _error
from ..error import InternalError, TesseraValueError


def _prim_expr(value):
    from ..tir.expr_ops import convert

    return convert(value)


def echo(value):
    """The argument, unchanged."""
    return value


def accepts_bool(value):
    return bool(value)


def accepts_int(value):
    return int(value)


def accepts_object_ref_array(values):
    return list(values)[0]


def accepts_map_returns_value(mapping, key):
    return mapping[key]


def accepts_map_returns_map(mapping):
    return dict(mapping)


def accepts_prim_expr(value):
    return _prim_expr(value)


def accepts_array_of_prim_expr(values):
    from .. import _core

    return _core.Array([_prim_expr(v) for v in values])


def accepts_map_of_prim_expr(mapping):
    from .. import _core

    return _core.Map({k: _prim_expr(v) for k, v in dict(mapping).items()})


def test_raise_error(kind, message):
    """Raise the error class named ``kind`` (``"OpNotImplemented"``, ``"ValueError"``, ...) of
    :mod:`tessera.error` or of the builtins, with ``message``."""
    cls = getattr(_error, kind, None)
    if cls is None:
        import builtins

        cls = getattr(builtins, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise TesseraValueError(f"test_raise_error: '{kind}' is not an error class")
    raise cls(message)


def test_check_eq_callback(message):
    """A function ``f(x, y)`` that raises InternalError with ``message`` when ``x != y``."""

    def check_eq(x, y):
        if x != y:
            raise InternalError(f"check failed: {x} == {y}: {message}")

    return check_eq


def error_test(x, y):
    """ValueError when ``x != y``; InternalError when they are both 1."""
    if x != y:
        raise TesseraValueError(f"expected x == y, got {x} and {y}")
    if x == 1:
        raise InternalError("ErrorTest: x == y == 1 is the unreachable case")


def test_wrap_callback(callback):
    """A function of no arguments that calls ``callback()``; its errors propagate unchanged."""

    def wrapped():
        callback()

    return wrapped


GLOBALS = {
    "testing.echo": echo,
    "testing.AcceptsBool": accepts_bool,
    "testing.AcceptsInt": accepts_int,
    "testing.AcceptsObjectRefArray": accepts_object_ref_array,
    "testing.AcceptsMapReturnsValue": accepts_map_returns_value,
    "testing.AcceptsMapReturnsMap": accepts_map_returns_map,
    "testing.AcceptsPrimExpr": accepts_prim_expr,
    "testing.AcceptsArrayOfPrimExpr": accepts_array_of_prim_expr,
    "testing.AcceptsMapOfPrimExpr": accepts_map_of_prim_expr,
    "testing.test_raise_error": test_raise_error,
    "testing.test_check_eq_callback": test_check_eq_callback,
    "testing.ErrorTest": error_test,
    "testing.test_wrap_callback": test_wrap_callback,
}


def register():
    """Register :data:`GLOBALS` (once; a function registered under the same name by the user
    stays)."""
    from ..runtime.registry import get_global_func, register_func

    for name, fn in GLOBALS.items():
        if get_global_func(name, allow_missing=True) is None:
            register_func(name, fn)
