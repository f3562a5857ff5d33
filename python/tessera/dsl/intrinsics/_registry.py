"""The registry of DSL intrinsics: ``@intrinsic`` registers a family's functions as ``S.<name>``.
Below the families, which import it, and the package, which imports the families."""

REGISTRY = {}


class Intrinsic:
    """A DSL builtin such as ``S.vload``."""

    def __init__(self, name, impl):
        self.name = name
        self.impl = impl
        self.__doc__ = impl.__doc__

    def __call__(self, *args, **kwargs):
        return call_outside_kernel(f"S.{self.name}", self, args, kwargs)

    def __repr__(self):
        return f"<S.{self.name}>"


def intrinsic(fn=None, *, name=None):
    """Register ``fn`` as ``S.<name>`` (default: the function's name)."""

    def register(f):
        REGISTRY[name or f.__name__.rstrip("_")] = Intrinsic(name or f.__name__.rstrip("_"), f)
        return f

    return register(fn) if fn is not None else register


def call_outside_kernel(label, callee, args, kwargs):
    """A call of an intrinsic or a type constructor from Python code: allowed only while a
    kernel runs a compile-time helper, which then works on symbolic kernel values."""
    from .. import symbolic  # the DSL's compile-time helpers, above the intrinsics

    if symbolic.active() is None:
        raise TypeError(f"{label}(...) can only be used inside a @S.prim_func")
    return symbolic.call(callee, args, kwargs)
