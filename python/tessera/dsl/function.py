"""The objects behind ``@S.prim_func`` and ``@S.macro``."""

import functools
import inspect

from ..error import DiagnosticError
from ..script.parser.core import Source, function_env


class PrimFuncObject:
    """A DSL function. It is parsed on first use (lower, build, or a call from another kernel)."""

    def __init__(self, func, is_entry=False, is_inline=None):
        functools.update_wrapper(self, func)
        self.func = func
        self.name = func.__name__
        self.is_entry = is_entry
        self.is_inline = is_inline
        self._parsed = None
        self._source = None

    @property
    def source(self):
        if self._source is None:
            self._source = Source(self.func)
        return self._source

    def parse(self):
        """The function's IR (a tessera PrimFunc) and the PrimFuncObjects it calls, cached."""
        if self._parsed is None:
            from .build_manager import report_diagnostic
            from .parser import DSLParser

            try:
                self._parsed = DSLParser(self).parse()
            except DiagnosticError as err:
                # As Compass does, the report also goes to stderr (it stays in the exception).
                report_diagnostic(err)
                raise
        return self._parsed

    def signature(self):
        """[(name, annotation, default)], return annotation; annotations evaluated in the
        function's environment when written as strings."""
        sig = inspect.signature(self.func)
        env = function_env(self.func)
        params = []
        for p in sig.parameters.values():
            ann = p.annotation
            if isinstance(ann, str):
                ann = eval(ann, env)
            params.append((p.name, None if ann is inspect.Parameter.empty else ann,
                           p.default if p.default is not inspect.Parameter.empty else inspect.Parameter.empty))
        ret = sig.return_annotation
        if isinstance(ret, str):
            ret = eval(ret, env)
        return params, (None if ret is inspect.Signature.empty else ret)

    def __call__(self, *args, **kwargs):
        """Run the kernel under PySim on numpy arrays and scalars (see tessera.dsl.pysim). A
        kernel written in TensorIR style (S.match_buffer, S.block) runs its build instead (its
        blocks lowered to loops, then the DSL pipeline; see tessera.dsl.tir_build)."""
        from . import pysim, schedule

        if schedule.uses_tensor_ir(self):
            from .build_manager import BuildManager

            return BuildManager().build(self)(*args, **kwargs)

        return pysim.run(self, args, kwargs)

    def __repr__(self):
        return f"<S.prim_func {self.name}>"


class MacroObject:
    """A DSL macro: its body is parsed into the caller at each use."""

    def __init__(self, func, hygienic=True):
        functools.update_wrapper(self, func)
        self.func = func
        self.name = func.__name__
        self.hygienic = hygienic
        # Static capture: free names keep the values they have now.
        self.env = dict(function_env(func)) if hygienic else None
        self.source = Source(func)

    def __call__(self, *args, **kwargs):
        raise DiagnosticError(f"macro {self.name}() can only be used inside a @S.prim_func")

    def __repr__(self):
        return f"<S.macro {self.name}>"
