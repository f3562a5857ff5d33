"""``@T.prim_func`` and ``@T.macro``: parse decorated Python functions into TIR."""

import copy
import functools
import sys
import inspect
import linecache

from ... import _core
from ...error import DiagnosticError, TesseraError, TesseraValueError
from ..parser.core import Source, function_env
from .ops import DType
from .expr_parser import Callee
from .parser import ModuleNamespace, TIRParser

WELL_FORMED_HINT = (
    "This may be a bug in the script or in how the IR was built; if the program is intended, "
    "consider setting check_well_formed=False")


def check_well_formed(func):
    """Raise DiagnosticError at the first well-formedness violation of a PrimFunc."""
    errors = _core.verify_well_formed(func)
    if not errors:
        return
    message, span = errors[0]
    text = f"{message}. {WELL_FORMED_HINT}"
    if span is not None and span.line > 0:
        raise DiagnosticError(_core.render_diagnostic(span, text), text, span.file, span.line, span.column)
    raise DiagnosticError(text, text)


class DeferredPrimFunc:
    """A ``@T.prim_func`` written in a class body: parsed by ``@I.ir_module`` with ``cls``."""

    def __init__(self, func, private, check):
        functools.update_wrapper(self, func)
        self.func = func
        self.private = private
        self.check = check

    def return_dtype(self):
        """The dtype of the return annotation ("void" without one)."""
        ret = inspect.signature(self.func).return_annotation
        if ret is inspect.Signature.empty:
            return "void"
        if isinstance(ret, str):
            ret = eval(ret, function_env(self.func))
        return ret.name if isinstance(ret, DType) else "void"

    def parse(self, name, callees):
        """The PrimFunc, with ``cls.f`` resolving to calls of the module's functions."""
        env = function_env(self.func)
        env["cls"] = ModuleNamespace(callees)
        # As TVM: the class's own name names the module too (`mod.subroutine(...)`).
        env[self.func.__qualname__.split(".")[-2]] = env["cls"]
        return parse(self.func, name, env, self.private, self.check)

    def __getattr__(self, name):
        # Used as a PrimFunc outside a module (`Before.with_attr(...)`): parsed alone, so that
        # the error that kept it from parsing at once is raised here.
        if name.startswith("__") or name in ("func", "private", "check"):
            raise AttributeError(name)
        return getattr(parse(self.func, None, function_env(self.func), self.private, self.check), name)

    def __repr__(self):
        return f"<T.prim_func {self.func.__name__} (in a module)>"


def _in_class_body(func):
    parts = func.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def _class_is_module(class_frame):
    """Whether the class whose body runs in ``class_frame`` is decorated as a module
    (``@I.ir_module``, ``@tvm.script.ir_module``, ...); None where its source is unknown.

    As TVM: only a module's functions are parsed with the module (where ``cls.f`` names its
    other functions); a ``@T.prim_func`` in any other class body (a test class) is parsed at
    once.
    """
    code = class_frame.f_code
    lines = linecache.getlines(code.co_filename)
    if not lines or code.co_firstlineno > len(lines):
        return None
    # A decorated class's body starts at its first decorator.
    for line in lines[code.co_firstlineno - 1:]:
        text = line.strip()
        if text.startswith("class ") or text.startswith("class\t"):
            return False
        if text.startswith("@") and ("ir_module" in text or "rewriter" in text):
            return True
    return None


def parse(func, name=None, env=None, private=False, check=True):
    """Parse a Python function written in the T dialect into a PrimFunc."""
    from ...ir.diagnostics import reporting

    with reporting():  # a custom renderer (ir.diagnostics.override_renderer) sees the error
        source = Source(func)
        parser = TIRParser(source, env if env is not None else function_env(func), name or func.__name__)
        prim = parser.parse_function(private=private)
        if check:
            check_well_formed(prim)
    prim.__name__ = func.__name__  # as TVM: the decorated function's name, private or not
    return prim


def prim_func(func=None, *, private=False, check_well_formed=True):
    """Decorator: parse a function into a tessera PrimFunc.

    >>> @T.prim_func
    ... def add_one(src: T.Buffer((16,), "float32"), dst: T.Buffer((16,), "float32")):
    ...     for n in range(16):
    ...         dst[n] = src[n] + T.float32(1)

    ``private=True`` leaves out the ``global_symbol`` attribute; ``check_well_formed=False``
    skips the well-formedness check. Inside an ``@I.ir_module`` class the function is parsed
    with the module, where ``cls.f(...)`` calls its other functions.
    """

    # Annotations are evaluated where the function is defined, so names that only they use
    # (`T.Buffer((1,), dtype)` in a generator) are the defining scope's locals, not closure cells.
    defining_frame = sys._getframe(1)
    defining_scope = defining_frame.f_locals

    def wrap(f):
        if _in_class_body(f):
            if _class_is_module(defining_frame) is not False:
                return DeferredPrimFunc(f, private, check_well_formed)
            # As TVM: a function of a class that is not a module is parsed at once. One that
            # does not parse yet (it may be meant for `I.ir_module(cls)`, where `cls.f` names
            # its siblings) waits for that, and says why it failed if used alone.
            try:
                return parse(f, env=_definition_env(f, defining_scope), private=private,
                             check=check_well_formed)
            except TesseraError:
                return DeferredPrimFunc(f, private, check_well_formed)
        return parse(f, env=_definition_env(f, defining_scope), private=private,
                     check=check_well_formed)

    return wrap if func is None else wrap(func)


def _definition_env(func, defining_scope):
    """Globals, then the defining scope's locals, then the closure (as Python resolves them)."""
    env = dict(func.__globals__)
    if defining_scope is not func.__globals__:
        env.update(defining_scope)
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:  # a cell not yet filled
            pass
    return env


class MacroObject:
    """A ``@T.macro``: its body is parsed into the calling function at each use."""

    def __init__(self, func, hygienic):
        functools.update_wrapper(self, func)
        self.func = func
        self.name = func.__name__
        self.hygienic = hygienic
        self.source = Source(func)
        self.bound_self = None  # the instance of a macro used as a method (obj.macro(...))

    def __get__(self, obj, objtype=None):
        """A macro defined in a class is a method: ``obj.load(x)`` passes ``obj`` as ``self``."""
        if obj is None:
            return self
        bound = copy.copy(self)
        bound.bound_self = (obj,)
        return bound

    def env_now(self):
        """The macro's globals and closure as they are at the time of use (so a macro may use
        another one defined after it)."""
        return function_env(self.func)

    def __call__(self, *args, **kwargs):
        raise TesseraValueError(f"macro {self.name}() can only be used inside a @T.prim_func")

    def __repr__(self):
        return f"<T.macro {self.name}>"


def macro(func=None, *, hygienic=True):
    """Decorator: a macro whose body is inlined at each use inside a prim_func.

    A hygienic macro (the default) resolves free names where it is defined; with
    ``hygienic=False`` its body also sees the variables of the function it is used in.
    Blocks of repeated expansions get ``_1``, ``_2``, ... name suffixes.

    >>> @T.macro
    ... def scale(B, i, factor):
    ...     B[i] = B[i] * factor
    """

    if func is not None and not callable(func):
        # `@T.macro(True)`: the only option is a keyword (hygienic=...).
        raise TesseraValueError(f"T.macro takes hygienic= as a keyword argument, got {func!r}")

    def wrap(f):
        return MacroObject(f, hygienic)

    return wrap if func is None else wrap(func)


def module_functions(cls, check_well_formed=True):
    """The prim_funcs of an ``@I.ir_module`` class, parsed with their calls resolved;
    ``check_well_formed=False`` skips the well-formedness check of every function."""
    deferred = [(name, value) for name, value in cls.__dict__.items() if isinstance(value, DeferredPrimFunc)]
    callees = {name: Callee(name, d.return_dtype()) for name, d in deferred}
    for name, value in cls.__dict__.items():  # functions already parsed (a plain class's)
        if isinstance(value, _core.PrimFunc):
            callees[name] = Callee(name, str(value.ret_type))
    funcs = []
    for name, d in deferred:
        if not check_well_formed:
            d.check = False
        funcs.append((_core.GlobalVar(name), d.parse(name, callees)))
    for name, value in cls.__dict__.items():
        if isinstance(value, _core.PrimFunc):
            funcs.append((_core.GlobalVar(name), value))
    return funcs
