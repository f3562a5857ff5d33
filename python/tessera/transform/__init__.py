"""Passes and their configuration: PassContext (opt level, disabled passes, registered config
keys, user lowering passes), Pass objects, passes written in Python (module_pass, and
tessera.tir.transform.prim_func_pass) and Sequential."""

import functools
import inspect

from .. import _core

_ADD_LOWER_PASS = "tir.add_lower_pass"
_PHASES = (0, 1, 2, 3)


class Pass:
    """A module-to-module pass: a registered one (``Pass("tir.Simplify")``) or one written in
    Python with :func:`module_pass` / ``tessera.tir.transform.prim_func_pass``. Calling it on an
    IRModule (or a PrimFunc, wrapped as "main") runs it under the current PassContext."""

    def __init__(self, name):
        if not _core.pass_exists(name):
            raise ValueError(f"unknown pass '{name}'")
        self._pass = _core.get_pass(name)

    @classmethod
    def _wrap(cls, handle):
        p = cls.__new__(cls)
        p._pass = handle
        return p

    @property
    def name(self):
        return self._pass.name

    @property
    def opt_level(self):
        return self._pass.opt_level

    def __call__(self, mod):
        if isinstance(mod, _core.PrimFunc):
            mod = _core.IRModule.from_func(mod, "main")
        if not isinstance(mod, _core.IRModule):
            raise TypeError(f"a pass applies to an IRModule or a PrimFunc, not {type(mod).__name__}")
        return self._pass(mod)

    def __repr__(self):
        return f"<tessera.transform.Pass {self.name} opt_level={self.opt_level}>"


def _context(handle):
    ctx = PassContext.__new__(PassContext)
    ctx._ctx = handle
    return ctx


def _python_pass(kind, method, pass_func, opt_level, name):
    """The decorator machinery of module_pass and prim_func_pass."""

    def create(fn):
        if inspect.isclass(fn):
            if not hasattr(fn, method):
                raise TypeError(f"a class decorated with {kind} needs a method '{method}'")
            pass_name = name or fn.__name__

            @functools.wraps(fn, updated=())
            def make(*args, **kwargs):
                inst = fn(*args, **kwargs)
                return create_from(getattr(inst, method), pass_name)

            return make
        if not callable(fn):
            raise TypeError(f"{kind} decorates a function or a class, not {type(fn).__name__}")
        return create_from(fn, name or getattr(fn, "__name__", kind))

    def create_from(fn, pass_name):
        if kind == "module_pass":
            call = lambda mod, ctx: fn(mod, _context(ctx))  # noqa: E731
        else:
            call = lambda func, mod, ctx: fn(func, mod, _context(ctx))  # noqa: E731
        handle = _core.create_python_pass(call, int(opt_level), str(pass_name), kind == "prim_func_pass")
        return Pass._wrap(handle)

    if pass_func is not None:
        return create(pass_func)
    return create


def module_pass(pass_func=None, opt_level=0, name=None):
    """A pass written in Python: ``pass_func(mod, ctx) -> IRModule``.

    >>> @ts.transform.module_pass(opt_level=0)
    ... def rename(mod, ctx):
    ...     return mod
    >>> new_mod = rename(mod)

    A decorated class with a ``transform_module(self, mod, ctx)`` method becomes a pass factory.
    """
    return _python_pass("module_pass", "transform_module", pass_func, opt_level, name)


def Sequential(passes=None, opt_level=0, name="sequential"):
    """The passes run in order as one pass (each still subject to the PassContext's rules)."""
    passes = list(passes or [])
    for p in passes:
        if not isinstance(p, Pass):
            raise TypeError(f"Sequential takes Pass objects, not {type(p).__name__}")
    return Pass._wrap(_core.sequential([p._pass for p in passes], int(opt_level), str(name)))


def PrintIR(header="", show_meta_data=False):  # noqa: N802 - TVM's name
    """A pass that prints the module (after ``header``) and returns it unchanged; put in a
    Sequential to see the IR between two passes.

    >>> ts.transform.Sequential([tt.Simplify(), ts.transform.PrintIR("after simplify")])(mod)
    """

    def print_ir(mod, ctx):
        if header:
            print(header)
        print(mod.script(show_meta=bool(show_meta_data)))
        return mod

    return module_pass(print_ir, opt_level=0, name="PrintIR")


def _lower_passes(value):
    """Validate the value of "tir.add_lower_pass": a list of (phase, Pass) pairs."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"config '{_ADD_LOWER_PASS}' takes a list of (phase, pass) pairs, not "
                        f"{type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        if not (isinstance(item, (list, tuple)) and len(item) == 2):
            raise TypeError(f"config '{_ADD_LOWER_PASS}': item {i} must be a (phase, pass) pair, "
                            f"not {item!r}")
        phase, p = item
        if isinstance(phase, bool) or not isinstance(phase, int):
            raise TypeError(f"config '{_ADD_LOWER_PASS}': item {i}: the phase must be an int, not "
                            f"{type(phase).__name__}")
        if phase not in _PHASES:
            raise ValueError(f"config '{_ADD_LOWER_PASS}': item {i}: phase {phase} is not one of "
                             "0 (start of normalize), 1 (end of flatten), 2 (end of loop), "
                             "3 (after cleanup's simplification)")
        if not isinstance(p, Pass):
            raise TypeError(f"config '{_ADD_LOWER_PASS}': item {i}: expected a Pass (e.g. from "
                            f"tessera.tir.transform.prim_func_pass), not {type(p).__name__}")
        out.append((phase, p._pass))
    return out


class PassContext:
    """Settings for the passes run inside a ``with`` block.

    >>> with PassContext(opt_level=3, disabled_pass=["tir.Simplify"]):
    ...     lib = BuildManager().build(kernel)

    ``config`` accepts registered keys only; an unknown key raises AttributeError listing them.
    """

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None, config=None):
        self._ctx = _core.PassContext()
        self._ctx.opt_level = int(opt_level)
        self._ctx.required_pass = list(required_pass or [])
        self._ctx.disabled_pass = list(disabled_pass or [])
        for key, value in (config or {}).items():
            if key == _ADD_LOWER_PASS:
                self._ctx.lower_passes = _lower_passes(value)
            else:
                self._ctx.set_config(key, value)

    @property
    def opt_level(self):
        return self._ctx.opt_level

    @property
    def disabled_pass(self):
        return list(self._ctx.disabled_pass)

    @property
    def required_pass(self):
        return list(self._ctx.required_pass)

    @property
    def config(self):
        config = self._ctx.config
        lower = self._ctx.lower_passes
        if lower:
            config[_ADD_LOWER_PASS] = [(phase, Pass._wrap(p)) for phase, p in lower]
        return config

    def __enter__(self):
        _core.PassContext.enter_with_scope(self._ctx)
        return self

    def __exit__(self, *exc):
        _core.PassContext.exit_with_scope()
        return False

    @staticmethod
    def current():
        """The innermost active context's settings (a default context when none is active)."""
        ctx = PassContext.__new__(PassContext)
        ctx._ctx = _core.PassContext.current()
        return ctx

    @staticmethod
    def list_configs():
        """Registered config keys and their types."""
        configs = dict(_core.PassContext.list_configs())
        configs[_ADD_LOWER_PASS] = "list of (phase, Pass)"
        return configs


def list_passes():
    """Names of all registered passes."""
    return sorted(_core.list_passes())


__all__ = ["PassContext", "Pass", "PrintIR", "module_pass", "Sequential", "list_passes", "apply_pass"]


def apply_pass(name, mod):
    """Run the registered pass ``name`` on ``mod`` under the current PassContext."""
    return _core.apply_pass(name, mod)
