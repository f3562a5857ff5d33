"""``akg.tvm``: the names of AKG's TVM fork (a TVM of the 0.6/0.7 era) on tessera.

AKG's operators and its test harness were written against that TVM: ``tvm.placeholder``,
``tvm.compute``, ``tvm.reduce_axis``, ``tvm.sum``, ``tvm.const``, ``tvm.var``, ``tvm.indexdiv``,
``tvm.expr.IntImm``, ``tvm.tensor.Tensor``, ``tvm.nd.array``, ``tvm.context``. Apache TVM later
moved these into ``tvm.te`` / ``tvm.tir``; here the old names resolve to tessera's te and tir
(the same objects, so an AKG tensor is a tessera tensor).

What belongs to the fork's C++ library or to hardware (the Ascend/CCE intrinsics, the fork's
``_api_internal`` functions, ``tvm.hybrid``, the TVM<=0.8 te schedules) is present as a name so
that AKG's modules import, and fails when used, saying so (:class:`NotProvided`).
"""

import contextlib
import sys
import types

from ... import runtime as _runtime
from ... import te as _te
from ... import tir as _tir
from ...error import TesseraValueError
from ...tir import ir_builder as _ir_builder
from .._unsupported import Missing

_FORK = "AKG's TVM fork"


def _absent_class(module, name):
    """A class of the fork that tessera's IR has no counterpart of: ``isinstance`` with it is
    False (tessera never makes such a node); instantiating it fails."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"{module}.{name}: {_FORK}'s {name} node has no tessera counterpart")

    return type(name, (), {"__init__": __init__, "__module__": module})


class NotProvided(types.ModuleType):
    """A module of the fork that tessera does not provide: its names exist (so that modules
    naming them at import time load) and using one raises NotImplementedError naming it."""

    def __init__(self, name, why):
        super().__init__(name, why)
        self.__why = why
        self.__path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self.__name__}.{attr}", self.__why)


class _ForkModule(types.ModuleType):
    """A module of the fork's surface: its own names, then :class:`Missing` for any other name
    (a name of the fork that tessera lacks fails when used, not when named)."""

    def __init__(self, name, doc, names):
        super().__init__(name, doc)
        self.__dict__.update(names)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self.__name__}.{attr}", f"this name of {_FORK}")


# ----------------------------------------------------------------------------------------------
# Expressions and tensors


def _expr_names(module):
    names = {}
    for n in ("Var", "SizeVar", "IntImm", "FloatImm", "StringImm", "Add", "Sub", "Mul", "Div", "Mod",
              "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or",
              "Not", "Select", "Call", "Cast", "Let", "Ramp", "Broadcast", "Shuffle"):
        names[n] = getattr(_tir, n)
    names["Expr"] = names["PrimExpr"] = names["ExprOp"] = _tir.PrimExpr
    names["ConstExpr"] = (_tir.IntImm, _tir.FloatImm, _tir.StringImm)
    names["Reduce"] = _te.Reduce
    # The fork's unsigned immediate: TVM later folded it into IntImm (tessera's IntImm of uint*).
    for n in ("UIntImm", "Load", "TensorIntrinCall"):
        names[n] = _absent_class(module, n)
    return names


def _tensor_names(module):
    names = {n: getattr(_te, n) for n in ("Tensor", "TensorSlice", "Operation", "ComputeOp",
                                           "PlaceholderOp", "ScanOp", "ExternOp")}
    for n in ("HybridOp", "TensorComputeOp"):
        names[n] = _absent_class(module, n)
    return names


# ----------------------------------------------------------------------------------------------
# Schedules: the fork's te schedule is TVM<=0.8's; tessera schedules TensorIR instead. A schedule
# made by create_schedule keeps its output operations so that build/lower can make the PrimFunc
# (create_prim_func); its stage primitives are not provided.


class Schedule:
    """``tvm.create_schedule(ops)``: the outputs to build. ``s[op]`` stage primitives (split,
    reorder, compute_inline, ...) of TVM<=0.8's te schedule are not provided: tessera schedules
    the TensorIR function (``tessera.tir.Schedule``)."""

    def __init__(self, ops):
        self.outputs = list(ops)

    def __getitem__(self, op):
        raise NotImplementedError(
            f"{_FORK}'s te schedule stages (s[op].split, compute_inline, ...) are not provided by "
            "tessera: it schedules the TensorIR function built from the computation "
            "(tessera.tir.Schedule); build the schedule unchanged to have it scheduled automatically")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self[attr]


def create_schedule(ops):
    """The schedule of the operations ``ops`` (one or a list; tensors or their ``.op``)."""
    if not isinstance(ops, (list, tuple)):
        ops = [ops]
    return Schedule(ops)


def _tensors_of(ops, what):
    out = []
    for op in ops:
        if isinstance(op, _te.Tensor):
            out.append(op)
        elif isinstance(op, _te.Operation):
            out.extend(op.output(i) for i in range(op.num_outputs))
        else:
            raise TypeError(f"{what}: expected te tensors or operations, got {op!r}")
    return out


def prim_func(sch, args, name="default_function"):
    """The PrimFunc that computes ``sch``'s outputs with ``args`` (tensors and scalar vars) as
    its parameters, in order, named ``name``."""
    if isinstance(sch, Schedule):
        wanted = _tensors_of(sch.outputs, "build")
        missing = [t for t in wanted if not any(t.same_as(a) for a in args if isinstance(a, _te.Tensor))]
        if missing:
            raise TesseraValueError(
                f"build: the schedule's output {missing[0].name} is not among the arguments")
    elif sch is not None and not isinstance(sch, (_tir.PrimFunc,)):
        raise TypeError(f"build/lower: expected a schedule of create_schedule or a PrimFunc, got {sch!r}")
    if isinstance(sch, _tir.PrimFunc):
        return sch
    func = _te.create_prim_func(list(args))
    return func.with_attr("global_symbol", name)


def build(sch, args=None, target="llvm", target_host=None, name="default_function", binds=None, **kwargs):
    """``tvm.build(s, [A, B, C], "llvm")``: compile the computation for the host CPU (tessera's
    ``c``/``llvm`` target) and load it; the module is called with ``tvm.nd`` arrays."""
    from ... import driver

    if binds:
        raise NotImplementedError("build(binds=...): explicit buffer binds are not provided by tessera")
    func = prim_func(sch, args or [], name)
    return driver.build(func, target=_host_target(target), name=name)


def lower(sch, args=None, name="default_function", binds=None, simple_mode=False, **kwargs):
    """The lowered TensorIR function (as an IRModule) of the computation."""
    from ... import ir

    if binds:
        raise NotImplementedError("lower(binds=...): explicit buffer binds are not provided by tessera")
    return ir.IRModule({name: prim_func(sch, args or [], name)})


def _host_target(target):
    text = str(target).strip() if target is not None else "llvm"
    kind = text.split()[0] if text else "llvm"
    if kind in ("llvm", "c"):
        return "llvm"
    if kind == "cuda":
        return text
    raise NotImplementedError(f"target '{text}': tessera builds for llvm/c (the host CPU) and cuda; "
                              f"{kind} (an AKG hardware target) is not available")


# ----------------------------------------------------------------------------------------------
# Containers: the fork hands out node arrays (a tensor's shape, an op's axes) as
# ``tvm.container.Array``; tessera hands out Python lists of the nodes.


class _ArrayMeta(type):
    def __instancecheck__(cls, obj):
        from ... import _core

        return (isinstance(obj, (list, tuple)) and len(obj) > 0
                and all(isinstance(x, (_core.Object, _te.Tensor)) for x in obj))


class Array(list, metaclass=_ArrayMeta):
    """``tvm.container.Array``: a list or tuple of IR nodes (``A.shape`` is one; a list of Python
    ints is not, as in the fork, where Python numbers are not nodes)."""


# ----------------------------------------------------------------------------------------------
# Runtime


def context(dev_type, dev_id=0):
    """``tvm.context("llvm", 0)``: the device of a target name (TVM's older name of ``device``)."""
    return _runtime.device(str(dev_type).split()[0], dev_id)


def _nd_module(module):
    from ... import nd

    names = {n: getattr(nd, n) for n in ("array", "empty", "NDArray") if hasattr(nd, n)}
    names.update(cpu=_runtime.cpu, context=context, gpu=_runtime.cuda, cuda=_runtime.cuda)
    return _ForkModule(module, "tvm.nd of AKG's TVM fork", names)


# ----------------------------------------------------------------------------------------------
# Passes, FFI, hybrid


def _simplify(expr, *args, **kwargs):
    """``tvm.ir_pass.Simplify(expr)``: the arithmetic simplification of an expression."""
    from ...topi.utils import simplify

    return simplify(expr)


def _equal(a, b, *args):
    from ... import ir

    if isinstance(a, _tir.PrimExpr) or isinstance(b, _tir.PrimExpr):
        return bool(ir.structural_equal(_tir_convert(a), _tir_convert(b)))
    return a == b


def _tir_convert(x):
    return _tir.const(x) if isinstance(x, (int, float)) else x


def _init_api(namespace, target_module_name=None):
    """The fork fills a module with C++ functions of its library at import; tessera has not that
    library: the module's missing names then fail saying so when used."""
    name = target_module_name or namespace
    module = sys.modules.get(name)
    if module is None or "__getattr__" in module.__dict__:
        return

    def __getattr__(attr):  # noqa: N807 - a module's PEP 562 attribute hook
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(f"module '{name}' has no attribute '{attr}': {name} takes its functions "
                             f"from {_FORK}'s C++ library ({namespace}), which tessera does not provide")

    module.__getattr__ = __getattr__


class NodeBase:
    """The fork's base class of C++ node handles (tessera's nodes are its own classes)."""


def register_node(type_key=None):
    """``@register_node("ir.X")``: the fork registered a Python class for a C++ node type; with no
    such node in tessera the class stays a plain class."""
    if isinstance(type_key, type):
        return type_key
    return lambda cls: cls


def _hybrid_script(func=None, **kwargs):
    """``@tvm.hybrid.script``: the decorated function is kept; calling it fails (tessera does not
    parse TVM's hybrid script)."""

    def wrap(f):
        def hybrid_call(*args, **kw):
            raise NotImplementedError(f"{f.__name__}: TVM's hybrid script (tvm.hybrid.script) is not provided "
                                      "by tessera; write the computation with te (tvm.compute)")

        hybrid_call.__name__ = hybrid_call.__qualname__ = f.__name__
        hybrid_call.__wrapped__ = f
        return hybrid_call

    return wrap(func) if callable(func) else wrap


def _to_node(value):
    """A value as the fork's FFI hands it to a registered Python function inside a container:
    numbers and strings become IR constants, lists lists of them, dicts dicts of them."""
    if isinstance(value, bool):
        return _tir.const(value, "bool")
    if isinstance(value, int):
        return _tir.const(value, "int32" if -2**31 <= value < 2**31 else "int64")
    if isinstance(value, float):
        return _tir.const(value, "float32")
    if isinstance(value, str):
        return _tir.StringImm(value)
    if isinstance(value, (list, tuple)):
        return [_to_node(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_node(v) for k, v in value.items()}
    return value


def register_func(func_name, f=None, override=False):
    """``@tvm.register_func("name")``: register a Python function as a global function. As in the
    fork, the name then holds the packed function: a call goes through its argument conversion,
    so the lists and dicts it is given arrive with IR constants inside (``attrs["flag"].value``),
    while arguments that are numbers or strings arrive as they are."""
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__

    def register(fn):
        def packed(*args):
            return fn(*[_to_node(a) if isinstance(a, (list, tuple, dict)) else a for a in args])

        packed.__name__ = packed.__qualname__ = getattr(fn, "__name__", "packed")
        packed.__doc__, packed.__wrapped__ = fn.__doc__, fn
        _runtime.register_func(func_name, packed, override=override)
        return packed

    return register if f is None else register(f)


class IRBuilder(_ir_builder.IRBuilder):
    """The fork's ir_builder: TVM's, plus ``for_range_n``, ``load`` and ``store``."""

    def _ptr(self, buf):
        return buf if isinstance(buf, _ir_builder.BufferVar) else self.buffer_ptr(buf)

    def load(self, buf, index):
        """``ib.load(buf, idx)``: the element of the Buffer ``buf`` at ``idx`` (a list of
        indices, or one index, flat over a buffer of several dimensions)."""
        return self._ptr(buf)[index]

    def store(self, buf, index, value):
        """``ib.store(buf, idx, value)``: emit the store of ``value`` into ``buf`` at ``idx``."""
        self._ptr(buf)[index] = value

    def for_range_n(self, shape, name="i"):
        """``with ib.for_range_n(shape, "i") as idx:``: one loop per dimension of ``shape``,
        nested; ``idx`` is the list of their variables (empty for an empty shape)."""

        @contextlib.contextmanager
        def loops():
            with contextlib.ExitStack() as stack:
                yield [stack.enter_context(self.for_range(0, extent, name=f"{name}_{k}"))
                       for k, extent in enumerate(shape)]

        return loops()


def _ir_builder_module(module):
    names = {n: getattr(_ir_builder, n) for n in dir(_ir_builder) if not n.startswith("_")}
    names.update(IRBuilder=IRBuilder, create=IRBuilder)
    return _ForkModule(module, "tvm.ir_builder of AKG's TVM fork (TVM's, plus IRBuilder.for_range_n)", names)


class _BuildConfig:
    """``tvm.build_config(...)``: a context manager holding the options (tessera's build takes no
    such options; they are kept for reading)."""

    current = None

    def __init__(self, **kwargs):
        self.options = dict(kwargs)
        self._saved = None

    def __enter__(self):
        self._saved, _BuildConfig.current = _BuildConfig.current, self
        return self

    def __exit__(self, *exc):
        _BuildConfig.current = self._saved
        return False

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        try:
            return self.options[attr]
        except KeyError:
            raise AttributeError(f"build_config has no option '{attr}'") from None


def build_config(**kwargs):
    return _BuildConfig(**kwargs)


# ----------------------------------------------------------------------------------------------
# The module tree

# Top-level functions of the fork: its te and tir names, as tessera spells them.
_TE_NAMES = ("placeholder", "compute", "reduce_axis", "sum", "max", "min", "comm_reducer", "var", "size_var",
             "thread_axis", "extern", "scan", "tag_scope")
_TIR_NAMES = ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "power", "floor", "ceil", "round", "trunc",
              "abs", "fmod", "popcount", "if_then_else", "call_extern", "call_intrin", "call_pure_extern",
              "all", "any", "min_value", "max_value", "indexdiv", "indexmod", "floordiv", "floormod", "truncdiv",
              "truncmod", "div", "erf", "log2", "log10", "log1p", "exp2", "exp10", "cos", "sin", "tan", "atan",
              "isnan", "isinf", "isfinite", "nearbyint", "likely", "decl_buffer", "call_packed", "reinterpret",
              "fabs")


def _top_names():
    names = {}
    for n in _TE_NAMES:
        if hasattr(_te, n):
            names[n] = getattr(_te, n)
    for n in _TIR_NAMES:
        try:
            names[n] = getattr(_tir, n)
        except AttributeError:
            pass
    names.update(
        const=_tir.const, convert=_runtime.convert, select=_tir.Select, create_schedule=create_schedule,
        build=build, lower=lower, build_config=build_config, context=context, cpu=_runtime.cpu,
        gpu=_runtime.cuda, cuda=_runtime.cuda, register_func=register_func,
        get_global_func=_runtime.get_global_func, TVMError=_error_class(), Schedule=Schedule)
    return names


def _error_class():
    from ...error import TesseraError

    return TesseraError


def make_modules(prefix):
    """The fork's modules under ``prefix`` (``akg.tvm`` or ``tvm``): name -> module object. The
    same objects serve both prefixes (``akg.tvm.expr is tvm.expr``) once made."""
    top_names = _top_names()
    top = _ForkModule(prefix, __doc__, top_names)
    top.__path__ = []
    mods = {prefix: top}

    def sub(name, doc, names):
        full = f"{prefix}.{name}"
        mods[full] = m = _ForkModule(full, doc, names)
        m.__path__ = []
        setattr(top, name, m)
        return m

    sub("expr", "tvm.expr of AKG's TVM fork: expression node classes", _expr_names(f"{prefix}.expr"))
    sub("tensor", "tvm.tensor of AKG's TVM fork", _tensor_names(f"{prefix}.tensor"))
    sub("api", "tvm.api of AKG's TVM fork (the top-level functions)", dict(top_names))
    sub("intrin", "tvm.intrin of AKG's TVM fork", {n: v for n, v in top_names.items() if n in _TIR_NAMES})
    sub("schedule", "tvm.schedule of AKG's TVM fork", {"Schedule": Schedule, "create_schedule": create_schedule})
    sub("build_module", "tvm.build_module of AKG's TVM fork", {"build": build, "lower": lower,
                                                               "build_config": build_config})
    sub("stmt", "tvm.stmt of AKG's TVM fork", {n: getattr(_tir, n) for n in (
        "Stmt", "LetStmt", "AttrStmt", "AssertStmt", "For", "IfThenElse", "Evaluate", "SeqStmt", "Allocate",
        "BufferStore")})
    mods[f"{prefix}.nd"] = top.nd = _nd_module(f"{prefix}.nd")
    sub("ir_pass", "tvm.ir_pass of AKG's TVM fork", {"Simplify": _simplify, "CanonicalSimplify": _simplify,
                                                     "Equal": _equal})
    sub("container", "tvm.container of AKG's TVM fork", {"Array": Array, "Map": dict})
    sub("hybrid", "tvm.hybrid of AKG's TVM fork", {"script": _hybrid_script})
    ffi = sub("_ffi", "tvm._ffi of AKG's TVM fork", {})
    mods[f"{prefix}._ffi.function"] = ffi.function = _ForkModule(
        f"{prefix}._ffi.function", "tvm._ffi.function", {"_init_api": _init_api,
                                                         "register_func": register_func,
                                                         "get_global_func": _runtime.get_global_func})
    mods[f"{prefix}._ffi.node"] = ffi.node = _ForkModule(
        f"{prefix}._ffi.node", "tvm._ffi.node", {"NodeBase": NodeBase, "register_node": register_node})
    mods[f"{prefix}.ir_builder"] = top.ir_builder = _ir_builder_module(f"{prefix}.ir_builder")
    for name, why in (("_api_internal", f"{_FORK}'s C++ API functions"),
                      ("make", f"{_FORK}'s node constructors (tvm.make)"),
                      ("autotvm", "AutoTVM (TVM's tuner of the fork)"),
                      ("relay", "Relay (TVM's graph IR)"),
                      ("contrib", f"{_FORK}'s contrib modules"),
                      ("codegen", f"{_FORK}'s code generators"),
                      ("target", f"{_FORK}'s target objects"),
                      ("module", f"{_FORK}'s runtime modules"),
                      ("datatype", f"{_FORK}'s custom data types")):
        full = f"{prefix}.{name}"
        mods[full] = m = NotProvided(full, why)
        setattr(top, name, m)
    return mods


def not_provided(fullname):
    """A module of the fork below the ones :func:`make_modules` makes (``tvm.autotvm.env``)."""
    return NotProvided(fullname, f"{fullname} of {_FORK}")
