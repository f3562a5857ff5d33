"""Pass configuration: PassContext (opt level, disabled passes, registered config keys)."""

from .. import _core


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
        return self._ctx.config

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
        return dict(_core.PassContext.list_configs())


def list_passes():
    """Names of all registered passes."""
    return sorted(_core.list_passes())


def apply_pass(name, mod):
    """Run the registered pass ``name`` on ``mod`` under the current PassContext."""
    return _core.apply_pass(name, mod)
