"""Schedules of TensorIR kernels for the DSL targets (``tvm.compass.dsl.schedule``).

An ``@S.prim_func`` written in TensorIR style (``S.match_buffer`` of its pointer parameters,
``with S.block(...)``, ``S.axis``, ``S.grid``, ``T.where`` ...) is read by tessera's TVMScript
parser, the ``S`` names standing for their ``T`` counterparts: ``S.ptr(dtype, scope)`` is a typed
handle, ``S.match_buffer(p, shape)`` takes the pointer's element type, ``S.tec_range(n)`` is
``T.thread_binding(n, "threadIdx.x")``. :class:`Schedule` is :class:`tessera.tir.Schedule` with
Compass's shorthands (``read_at``, ``write_at``, ``bind_tec``); ``BuildManager().build(sch.mod)``
builds the result (see :mod:`tessera.dsl.tir_build`).

>>> sch = schedule.Schedule(add)                 # add: a TensorIR-style @S.prim_func
>>> outer, _ = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[4, None])
>>> sch.bind_tec(outer)
>>> ex = BuildManager().build(sch.mod)
"""

import ast
import inspect
import textwrap
import types

from .. import _core
from ..error import DiagnosticError, TesseraValueError
from ..script import tir as T
from ..script.parser.core import function_env
from ..script.tir.entry import parse
from ..tir.schedule import Schedule as _TirSchedule
from . import script as _script
from .function import PrimFuncObject
from .types import canonical

# S.match_buffer alone is also DSL (a buffer view of a pointer); blocks make a kernel TensorIR.
_TENSOR_IR_NAMES = ("block", "axis")


def uses_tensor_ir(py_func):
    """Whether the @S.prim_func ``py_func`` is written in TensorIR style (it has
    ``with <S>.block(...)`` or uses ``<S>.axis``); cached on the object."""
    if isinstance(py_func, PrimFuncObject):
        cached = getattr(py_func, "_uses_tensor_ir", None)
        if cached is None:
            try:
                tree = py_func.source.as_ast()  # read and parsed once, kept for the DSL parser
            except (DiagnosticError, SyntaxError):
                tree = None
            cached = py_func._uses_tensor_ir = _uses_tensor_ir(py_func.func, tree)
        return cached
    return _uses_tensor_ir(py_func)


def _uses_tensor_ir(func, tree=None):
    if tree is None:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        except (OSError, TypeError, SyntaxError):
            return False
    env = function_env(func)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in _TENSOR_IR_NAMES
                and isinstance(node.value, ast.Name) and env.get(node.value.id) is _script):
            return True
    return False


def _match_buffer(param, shape=None, dtype=None, *args, **kwargs):
    if dtype is None:
        element = getattr(param, "pointer_element", None)
        if element is None:
            raise TesseraValueError("S.match_buffer needs a pointer parameter (S.ptr(dtype, scope)) "
                                    "or a dtype")
        dtype = str(element)
    return T.match_buffer(param, shape, dtype, *args, **kwargs)


def _ptr(dtype, scope="global"):
    return T.handle(canonical(dtype), "global" if scope.startswith("global") else scope)


def _tec_range(*args):
    return T.thread_binding(*args, thread="threadIdx.x")


class _TensorIRNamespace(types.SimpleNamespace):
    """``S`` inside a TensorIR-style kernel: the ``T`` names, and the DSL's where they differ."""

    _OVERRIDES = {"ptr": _ptr, "match_buffer": _match_buffer, "tec_range": _tec_range}
    _ALIASES = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
                "u32": "uint32", "fp16": "float16", "fp32": "float32", "bf16": "bfloat16"}

    def __getattr__(self, name):
        if name in self._OVERRIDES:
            return self._OVERRIDES[name]
        return getattr(T, self._ALIASES.get(name, name))


def parse_tensor_ir(py_func, name=None):
    """The PrimFunc of a TensorIR-style ``@S.prim_func``."""
    func = py_func.func if isinstance(py_func, PrimFuncObject) else py_func
    env = function_env(func)
    shim = _TensorIRNamespace()
    for key, value in list(env.items()):
        if value is _script:
            env[key] = shim
    return parse(func, name or func.__name__, env)


class Schedule(_TirSchedule):
    """:class:`tessera.tir.Schedule` of a TensorIR-style ``@S.prim_func`` (or of a PrimFunc /
    IRModule), with Compass's shorthands."""

    def __init__(self, mod, *args, **kwargs):
        if isinstance(mod, PrimFuncObject):
            prim = parse_tensor_ir(mod)
            mod = _core.IRModule([(_core.GlobalVar("main"), prim.with_attr("global_symbol", _core.StringImm("main")))])
        super().__init__(mod, *args, **kwargs)

    def read_at(self, loop, block, read_buffer_index, storage_scope):
        """``cache_read`` of the block's read buffer into ``storage_scope``, computed at ``loop``."""
        cached = self.cache_read(block, read_buffer_index, storage_scope)
        self.compute_at(cached, loop)
        return cached

    def write_at(self, loop, block, write_buffer_index, storage_scope):
        """``cache_write`` of the block's write buffer in ``storage_scope``, written back at
        ``loop``."""
        cached = self.cache_write(block, write_buffer_index, storage_scope)
        self.reverse_compute_at(cached, loop)
        return cached

    def bind_tec(self, loop):
        """Run the iterations of ``loop`` on the TECs (``threadIdx.x``)."""
        self.bind(loop, "threadIdx.x")


def _spread_over_tecs(func, target, block, n_inputs):
    """The schedule of an elementwise TensorIR block: its loops fused into one, whose iterations
    are dealt round the target's TECs (TEC t takes iterations t, t + tec_count, ...: the split
    keeps the block's bindings affine for any extent, a symbolic one included)."""
    from .compass_info import CompassInfo

    sch = Schedule(func)
    prim = next(f for _gv, f in sch.mod.functions)
    handles = [p for p in prim.params if p.dtype == "handle"]
    if len(handles) != n_inputs + 1:
        raise TesseraValueError(f"this schedule expects {n_inputs} input pointer(s) and one output "
                                f"pointer, got {len(handles)} pointer parameters")
    blk = sch.get_block(block)
    loops = sch.get_loops(blk)
    if not loops:
        raise TesseraValueError(f'the block "{block}" is in no loop')
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    _, tec = sch.split(fused, factors=[None, CompassInfo.get(target).tec_count])
    sch.bind_tec(tec)
    return sch


def elementwise_unary(func, target, block):
    """A schedule (:class:`Schedule`) of the elementwise ``block`` of a TensorIR-style kernel with
    one input and one output pointer, its iterations spread over the TECs of ``target``."""
    return _spread_over_tecs(func, target, block, 1)


def elementwise_binary(func, target, block):
    """As :func:`elementwise_unary`, for a kernel with two input pointers and one output."""
    return _spread_over_tecs(func, target, block, 2)


__all__ = ["Schedule", "parse_tensor_ir", "uses_tensor_ir", "elementwise_unary", "elementwise_binary"]
