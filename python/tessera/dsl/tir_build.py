"""BuildManager for TensorIR and te PrimFuncs (scheduled or not), as Compass's BuildManager builds
them for its DSL targets.

tessera runs DSL targets on the host CPU, so a TensorIR kernel goes through tessera's host build
(``tessera.build(..., target="c")``) after ``dsl.SerializeTecBinding`` (loops bound to
``threadIdx.x`` by ``schedule.bind_tec`` run TEC after TEC). The result is a :class:`TirExecutor`
called as a DSL :class:`~tessera.dsl.Executor` is: one numpy array per buffer parameter (used in
place), one number per scalar parameter, in the order of the PrimFunc's parameters.

A TensorIR-style ``@S.prim_func`` (S.match_buffer, S.block) built directly by BuildManager takes
another road (:func:`as_dsl_module`): its blocks are lowered to loops and it is built by the DSL
pipeline and code generator, as Compass builds it; scheduled (``Schedule(kernel).mod``), it is a
TensorIR module and goes through the host build above.

>>> A = te.placeholder((32,), "uint8", name="A"); B = ...; C = te.compute(...)
>>> ex = BuildManager().build(te.create_prim_func([A, B, C]), name="fadd")
>>> ex(a, b, c)
"""

import numpy as np

from .. import _core
from ..error import ArgumentCountError, TesseraTypeError, TesseraValueError
from ..transform import Pass

_STAGE = "dsl.SerializeTecBinding"


def is_tensor_ir(inp):
    return isinstance(inp, (_core.PrimFunc, _core.IRModule))


def as_module(inp, name=None):
    """``inp`` (a PrimFunc or an IRModule of one PrimFunc) as an IRModule whose function is
    ``name`` (default: its global symbol, or "main"), and that name."""
    if isinstance(inp, _core.IRModule):
        funcs = [(gv, f) for gv, f in inp.functions if isinstance(f, _core.PrimFunc)]
        if len(funcs) != 1:
            raise TesseraValueError(f"BuildManager builds an IRModule of one PrimFunc; this one has "
                                    f"{len(funcs)}")
        gv, func = funcs[0]
        # The function's own symbol names the kernel, as Compass names it (Schedule(func).mod
        # holds it as "main").
        symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
        default = str(symbol.value) if symbol is not None else gv.name_hint
    else:
        func = inp
        symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
        default = str(symbol.value) if symbol is not None else "main"
    entry = name or default
    func = func.with_attr("global_symbol", _core.StringImm(entry))
    return _core.IRModule([(_core.GlobalVar(entry), func)]), entry, func


def prepare(inp, name=None):
    mod, entry, func = as_module(inp, name)
    return Pass(_STAGE)(mod), entry, func


def as_dsl_module(func, name=None):
    """A TensorIR-style ``@S.prim_func``'s PrimFunc (``func``, from
    :func:`tessera.dsl.schedule.parse_tensor_ir`) in the form the DSL's own parser gives: its
    blocks lowered to loops and its buffers flattened by the TensorIR stages "normalize" and
    "flatten" (no automatic schedule), each matched buffer then read through its pointer
    parameter. BuildManager builds it through the DSL pipeline and code generator, as Compass
    builds such a kernel. Returns (IRModule, entry name, the matched shapes as
    :class:`~tessera.dsl.Executor`'s ``buffer_shapes``)."""
    entry, _func, flat = _flattened(func, name)
    body = flat.body
    for param, buf in reversed(list(flat.buffer_map)):
        body = _core.LetStmt(buf.data, param, _core.DeclBuffer(buf, body))
    dsl = _core.PrimFunc(list(flat.params), body)
    return _entry_module(dsl, entry), entry, _matched_shapes(func)


def _flattened(inp, name):
    """(entry name, the prepared PrimFunc, its form after the TensorIR stages through
    "flatten", no automatic schedule)."""
    from ..driver import lower

    mod, entry, func = prepare(inp, name)
    lowered = lower(mod, target="c", stage="flatten")
    (_gv, flat), = [(gv, f) for gv, f in lowered.functions if isinstance(f, _core.PrimFunc)]
    return entry, func, flat


def _matched_shapes(func):
    """The matched buffers' shapes as :class:`~tessera.dsl.Executor`'s ``buffer_shapes``, for it
    to refuse arrays too small for them: (parameter index, dims), a dim a constant or
    ("param", index) of a scalar parameter; a buffer with another expression is not checked."""
    index = {p.name: i for i, p in enumerate(func.params)}
    shapes = []
    for param, buf in (func.buffer_map or []):
        dims = []
        for d in buf.shape:
            if hasattr(d, "value"):
                dims.append(int(d.value))
            elif isinstance(d, _core.Var) and d.name in index:
                dims.append(("param", index[d.name]))
            else:
                dims = None
                break
        if dims is not None and param.name in index:
            shapes.append((index[param.name], dims))
    return shapes


def _entry_module(dsl, entry):
    """An IRModule of the one entry function ``dsl``, named ``entry``."""
    dsl = dsl.with_attr("tessera.is_entry", _core.IntImm("int32", 1))
    dsl = dsl.with_attr("global_symbol", _core.StringImm(entry))
    return _core.IRModule([(_core.GlobalVar(entry), dsl)])


# The loop kinds the DSL's pipeline builds: serial, and vectorized (a vector per iteration of
# the loop around; a tail of fewer lanes becomes masked loads and stores).
_PLAIN_LOOPS = ("ForKind.SERIAL", "0", "serial", "ForKind.VECTORIZED", "vectorized")


def _plain(func):
    """Whether the flattened ``func`` is a kernel the DSL's code generator writes as Compass
    does (serial and vectorized loops over global buffers of constant shape, scalars as
    parameters): no loop bound to a TEC or parallel, no cache of another scope, no shape
    variable that is no parameter (those stay with the host build)."""
    from ..tir.stmt_functor import post_order_visit

    plain = [True]

    def visit(node):
        kind = getattr(node, "kind", None)
        if isinstance(node, _core.For) and str(kind) not in _PLAIN_LOOPS:
            plain[0] = False
        elif isinstance(node, (_core.Allocate, _core.AttrStmt)):
            plain[0] = False

    post_order_visit(func.body, visit)
    params = {p.name for p in func.params}
    for _param, buf in (func.buffer_map or []):
        for d in buf.shape:
            if not hasattr(d, "value") and not (isinstance(d, _core.Var) and d.name in params):
                return False
    return plain[0]


def as_plain_dsl_module(inp, name=None):
    """A te or TensorIR PrimFunc in the form of an ``@S.prim_func``, for the DSL pipeline and
    code generator, as Compass builds such a function: each buffer parameter becomes the
    global pointer of its buffer (named as the buffer, ``restrict`` where the function is
    ``tir.noalias``), blocks lowered to loops by the TensorIR stages. None when the function
    is not plain (see :func:`_plain`); BuildManager then builds it for the host as before.
    Returns (IRModule, entry name, matched shapes) or None."""
    entry, func, flat = _flattened(inp, name)
    if not _plain(flat):
        return None
    by_param = {p.name: buf for p, buf in (flat.buffer_map or [])}
    params = [by_param[p.name].data if p.name in by_param else p for p in flat.params]
    body = flat.body
    for buf in reversed([by_param[p.name] for p in flat.params if p.name in by_param]):
        body = _core.DeclBuffer(buf, body)
    # Marked for the DSL pipeline's passes of scheduled functions (tir.LoopPartition).
    dsl = _core.PrimFunc(params, body).with_attr("dsl.from_tensor_ir", _core.IntImm("int32", 1))
    attrs = func.attrs or {}
    if attrs.get("tir.noalias") is not None and bool(getattr(attrs["tir.noalias"], "value", 0)):
        dsl = dsl.with_attr("tir.noalias", _core.IntImm("bool", 1))
    return _entry_module(dsl, entry), entry, _matched_shapes(func)


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


class TirExecutor:
    """A TensorIR kernel built for a DSL target: ``ex(*args)`` / ``ex.run(*args)``,
    ``ex.benchmark(*args)``, ``ex.c_code``."""

    def __init__(self, rt_mod, func, entry):
        self._rt_mod = rt_mod
        self._fn = rt_mod[entry]
        self.name = entry
        buffer_map = {p.name: b for p, b in (func.buffer_map or [])}
        self._params = []
        for p in func.params:
            buf = buffer_map.get(p.name)
            if buf is not None:
                shape = [int(s.value) if hasattr(s, "value") else None for s in buf.shape]
                self._params.append((p.name, "buffer", str(buf.dtype), shape))
            else:
                self._params.append((p.name, "scalar", str(p.dtype), None))

    @property
    def c_code(self):
        """The generated C source of the host build."""
        return self._rt_mod.get_source()

    @property
    def lib_path(self):
        return self._rt_mod.lib_path

    def _check(self, args):
        from ..runtime import ndarray as nd

        if len(args) != len(self._params):
            names = ", ".join(p[0] for p in self._params)
            raise ArgumentCountError(f"{self.name}() takes {len(self._params)} arguments ({names}) "
                                     f"but {len(args)} were given")
        values = []
        for (name, kind, dtype, shape), arg in zip(self._params, args):
            if kind == "buffer":
                if not isinstance(arg, np.ndarray):
                    raise TesseraTypeError(f"argument '{name}' of {self.name}() must be a numpy array, "
                                           f"got {type(arg).__name__}")
                if arg.dtype != _np_dtype(dtype):
                    raise TesseraTypeError(f"argument '{name}' of {self.name}() must have dtype {dtype}, "
                                           f"got {arg.dtype}")
                if not arg.flags.c_contiguous:
                    raise TesseraValueError(f"argument '{name}' of {self.name}() must be a C-contiguous array")
                if None not in shape and arg.size != int(np.prod(shape, dtype=np.int64)):
                    raise TesseraValueError(f"argument '{name}' of {self.name}() has {arg.size} elements, "
                                            f"the kernel's buffer has shape {tuple(shape)}")
                if None not in shape and arg.shape != tuple(shape):
                    arg = arg.reshape(shape)  # a view of the caller's array
                values.append((nd.array(arg), arg))
            else:
                if isinstance(arg, np.ndarray) and arg.size == 1:
                    arg = arg.reshape(()).item()
                elif isinstance(arg, np.generic):
                    arg = arg.item()
                if dtype.startswith(("int", "uint")) and (isinstance(arg, float) or not isinstance(arg, int)):
                    raise TesseraTypeError(f"argument '{name}' of {self.name}() must be an integer ({dtype}), "
                                           f"got {type(arg).__name__}")
                values.append((arg, None))
        return values

    def __call__(self, *args):
        values = self._check(args)
        self._fn(*[v for v, _ in values])
        # The host build works on tessera NDArrays (copies): write the results back in place.
        for value, array in values:
            if array is not None and array.flags.writeable:
                array[...] = value.numpy()

    run = __call__

    def benchmark(self, *args, repeat=2, number=3, min_repeat_ms=0, limit_zero_time_iterations=100,
                  cooldown_interval_ms=0, repeats_to_cooldown=1):
        """Seconds per call, as :meth:`tessera.dsl.Executor.benchmark` measures them."""
        from .executor import time_calls

        converted = [v for v, _ in self._check(args)]

        class _Call:
            def __call__(_self, *_):
                self._fn(*converted)

        return time_calls(_Call(), (), repeat, number, min_repeat_ms, limit_zero_time_iterations,
                          cooldown_interval_ms, repeats_to_cooldown)

    def __repr__(self):
        return f"<TirExecutor {self.name} at {self.lib_path}>"
