"""BuildManager: lowers DSL kernels through the "dsl" stage pipeline and builds executors."""

import contextlib
import os
import sys

from .. import _core
from ..error import DiagnosticError, TesseraError, TesseraValueError, UnsupportedTargetError
from ..transform import PassContext
from . import schedule, tir_build
from .compass_info import _target_name
from .executor import Executor
from .function import PrimFuncObject
from . import types as T
from .types import DType, PtrType

_INCLUDE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "include")


def cache_dir():
    """Where compiled kernels are cached: $TESSERA_CACHE_DIR or ~/.cache/tessera."""
    root = os.environ.get("TESSERA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tessera")
    return os.path.join(root, "dsl")


def _check_entry_signature(pf):
    """The entry point's parameters come from the host: vectors of native width only (a
    sub-function may take virtual-width ones, passed as their native parts)."""
    params, _ret = pf.signature()
    fdef = pf.source.func_def
    for (name, ann, _default), arg in zip(params, fdef.args.args):
        if isinstance(ann, DType) and not T.is_native(ann.name):
            message = (f'parameter \'{name}\' of the entry point has the virtual vector type '
                       f'"{ann.name}": it works on vectors of the native width only')
            span = pf.source.span(arg)
            raise DiagnosticError(_core.render_diagnostic(span, message), message, span.file,
                                  span.line, span.column)


def report_diagnostic(err):
    """Print a kernel error's report to stderr, once per exception, as Compass prints every
    error report before raising it (the report stays in the exception too)."""
    if not getattr(err, "reported", False):
        print(str(err), file=sys.stderr, flush=True)
        try:
            err.reported = True
        except AttributeError:  # an exception object that takes no attributes
            pass


@contextlib.contextmanager
def _reporting_diagnostics():
    """Errors found while lowering or building a kernel (the passes' DiagnosticErrors, such as
    an intrinsic the target lacks) reach stderr the way the parser's do."""
    try:
        yield
    except DiagnosticError as err:
        report_diagnostic(err)
        raise


def collect_module(entry, name=None):
    """The IRModule of ``entry`` and every function it reaches; recursion is an error."""
    funcs, order, state = {}, [], {}

    def visit(pf, call_site):
        if state.get(pf) == "active":
            raise DiagnosticError(
                f"recursive call of {pf.name}(): recursion is not supported" if call_site is None else
                call_site.error(call_site.node, f"recursive call of {pf.name}(): recursion is not supported").args[0])
        if pf in state:
            return
        state[pf] = "active"
        func, callees = pf.parse()
        for callee in callees:
            visit(callee, None)
        state[pf] = "done"
        funcs[pf] = func
        order.append(pf)

    visit(entry, None)
    _check_entry_signature(entry)
    names = {}
    for pf in order:
        if pf.name in names and names[pf.name] is not pf:
            raise DiagnosticError(f"two different functions are named '{pf.name}'")
        names[pf.name] = pf
    entry_name = name or entry.name
    items = []
    for pf in [entry] + [p for p in order if p is not entry]:
        f = funcs[pf]
        if pf is entry:
            f = f.with_attr("tessera.is_entry", _core.IntImm("int32", 1))
            f = f.with_attr("global_symbol", _core.StringImm(entry_name))
            # S.ptr("void") parameters are int8 pointers in the IR; the entry point takes
            # arrays of any dtype for them.
            void = [name for name, ann, _ in pf.signature()[0]
                    if isinstance(ann, PtrType) and ann.element == "void"]
            if void:
                f = f.with_attr("dsl.void_pointers", _core.StringImm(",".join(void)))
        else:
            # A sub-function's C name is prefixed by the kernel's, as Compass names it: a
            # helper named like a C library function (log2, abs, ...) cannot clash with it.
            f = f.with_attr("global_symbol", _core.StringImm(f"{entry_name}_{pf.name}"))
        items.append((_core.GlobalVar(entry_name if pf is entry else pf.name), f))
    return _core.IRModule(items), entry_name


class BuildManager:
    """Builds vector DSL kernels for a target.

    >>> ex = BuildManager(target="X2_1204").build(kernel)
    >>> print(ex.c_code); ex(a, out)
    """

    def __init__(self, target="X2_1204", output_dir=None, cc_options="", disabled_pass=None,
                 check_bounds=None):
        """``check_bounds=True`` (or the environment variable ``TESSERA_CHECK_BOUNDS=1`` when
        not given) builds executors that run each call with every array argument copied
        between inaccessible guard pages: an access outside an array raises an error naming
        the kernel, the argument and the offset instead of corrupting memory."""
        name = _target_name(target)
        try:
            self.target = _core.get_dsl_target(name)
        except TesseraValueError as err:
            if name.startswith("X1") and any(t.name == name for t in _core.dsl_targets()):
                raise UnsupportedTargetError(str(err)) from None
            raise
        if check_bounds is None:
            check_bounds = os.environ.get("TESSERA_CHECK_BOUNDS", "") not in ("", "0")
        self.check_bounds = bool(check_bounds)
        self.output_dir = output_dir
        self.cc_options = cc_options
        self.disabled_pass = list(disabled_pass or [])

    @property
    def cps_info(self):
        """The :class:`~tessera.dsl.compass_info.CompassInfo` of the target (``.version``,
        ``.tec_count``, ...)."""
        from .compass_info import CompassInfo

        return CompassInfo(self.target)

    def _lowerer(self, inp, name):
        if not isinstance(inp, PrimFuncObject):
            raise TypeError(f"BuildManager expects an @S.prim_func, a TensorIR/te PrimFunc or an "
                            f"IRModule, got {type(inp).__name__}")
        mod, entry = collect_module(inp, name)
        ctx = self._context()
        with ctx:
            lw = _core.StageLowerer(mod, "dsl", self.target.name, entry, _INCLUDE_DIR, cache_dir())
        return lw, ctx, entry

    def _context(self):
        outer = PassContext.current()
        config = dict(outer.config)
        if self.cc_options:
            config["tessera.cc_options"] = self.cc_options
        return PassContext(opt_level=outer.opt_level, required_pass=outer.required_pass,
                           disabled_pass=outer.disabled_pass + self.disabled_pass, config=config)

    def parse(self, inp, name=None):
        """The IRModule of an @S.prim_func and the sub-functions it calls, as parsed: no pass
        has run (``lower`` runs them up to the "cleanup" stage; ``build`` compiles). The entry
        function is named ``name`` (default: the function's name)."""
        if not isinstance(inp, PrimFuncObject):
            raise TypeError(f"BuildManager.parse expects an @S.prim_func, got {type(inp).__name__}")
        mod, _entry = collect_module(inp, name)
        return mod

    # Compass's tests call it by its internal name.
    _parse = parse

    def lower(self, inp, name=None):
        """The IRModule after the target-independent passes (up to the "cleanup" stage).
        A TensorIR or te PrimFunc (or an IRModule of one) is lowered as its host build
        lowers it (see :mod:`tessera.dsl.tir_build`)."""
        with _reporting_diagnostics():
            return self._lower(inp, name)

    def _lower(self, inp, name):
        if isinstance(inp, PrimFuncObject) and schedule.uses_tensor_ir(inp):
            inp = schedule.parse_tensor_ir(inp)
        if tir_build.is_tensor_ir(inp):
            from ..driver import lower

            mod, _entry, _func = tir_build.prepare(inp, name)
            return lower(mod, target="c")
        lw, ctx, _ = self._lowerer(inp, name)
        with ctx:
            lw.run_to("cleanup")
        return lw.mod

    def generated_source(self, inp, name=None):
        """The C unit :meth:`build` compiles for a DSL kernel (the kernel source, as
        ``Executor.c_code`` shows it, then its packed entry point), generated without running
        the compiler."""
        lw, ctx, entry = self._lowerer(inp, name)
        with ctx:
            lw.run_to("legalize")
        return _core.codegen_dsl(lw.mod, entry)

    def build(self, inp, name=None):
        """Compile ``inp`` for the host CPU and return an :class:`Executor` (for a TensorIR or te
        PrimFunc, scheduled or not, a :class:`~tessera.dsl.tir_build.TirExecutor` called the
        same way)."""
        with _reporting_diagnostics():
            return self._build(inp, name)

    def _build(self, inp, name):
        if isinstance(inp, PrimFuncObject) and schedule.uses_tensor_ir(inp):
            # Blocks lowered to loops, then the DSL's own passes and C, as Compass builds it.
            with self._context():
                mod, entry, shapes = tir_build.as_dsl_module(schedule.parse_tensor_ir(inp), name)
            return self._build_dsl_module(mod, entry, inp, shapes)
        if tir_build.is_tensor_ir(inp):
            from ..driver import build

            # A plain te or TensorIR function gets the DSL's C, as Compass builds it; one with
            # TEC bindings, parallel or vector loops or caches is built for the host.
            with self._context():
                plain = tir_build.as_plain_dsl_module(inp, name)
            if plain is not None:
                mod, entry, shapes = plain
                try:
                    return self._build_dsl_module(mod, entry, None, shapes)
                except TesseraError:
                    pass  # what the DSL's C cannot express (a kernel named main ...): host build

            mod, entry, func = tir_build.prepare(inp, name)
            with self._context():
                rt_mod = build(mod, target="c")
            return tir_build.TirExecutor(rt_mod, func, entry)
        if not isinstance(inp, PrimFuncObject):
            raise TypeError(f"BuildManager expects an @S.prim_func, a TensorIR/te PrimFunc or an "
                            f"IRModule, got {type(inp).__name__}")
        mod, entry = collect_module(inp, name)
        return self._build_dsl_module(mod, entry, inp)

    def _build_dsl_module(self, mod, entry, inp, buffer_shapes=()):
        ctx = self._context()
        with ctx:
            lw = _core.StageLowerer(mod, "dsl", self.target.name, entry, _INCLUDE_DIR, cache_dir())
            lw.run_to("end")
        result = lw.result
        if self.output_dir:
            os.makedirs(self.output_dir, exist_ok=True)
            with open(os.path.join(self.output_dir, entry + ".cl"), "w") as f:
                f.write(result.source)
        void = [] if inp is None else [
            n for n, ann, _ in inp.signature()[0] if isinstance(ann, PtrType) and ann.element == "void"]
        return Executor(result, entry, check_bounds=self.check_bounds, void_params=void,
                        buffer_shapes=buffer_shapes)
