"""The T dialect of TVMScript: ``from tessera.script import tir as T``.

Functions decorated with ``@T.prim_func`` are parsed into tessera PrimFuncs; the names of this
module (types, ``T.Buffer``, ``T.block``, ``T.axis``, ``T.grid``, intrinsics, ...) are the
vocabulary of those functions. See ``spec/tensorir.md`` for the language.
"""

from ... import _core
from ...error import TesseraTypeError
from ... import ir as _ir  # noqa: F401 - installs script(...)/show() on IR objects
from ...tir import expr_ops as _expr_ops
from . import _state
from .entry import check_well_formed, macro, prim_func
from .frames import (Assert, Buffer, LetStmt, alloc_buffer, allocate, allocate_const, attr, axis, block, block_attr,
                     decl_buffer, env_thread, evaluate, func_attr, grid, init, launch_thread,
                     match_buffer, parallel, reads, realize, serial, thread_binding, unroll, vectorized,
                     where, writes)
from .ops import (MATH, TYPES, Add, And, Broadcast, Cast, Div, FloorDiv, FloorMod, Let, Max, Min,
                  Mod, Mul, Not, Or, Ramp, Range, Select, Shuffle, Sub, address_of, bitwise_and,
                  bitwise_not, bitwise_or, bitwise_xor, call_extern, call_intrin,
                  call_pure_extern, cast, ceildiv, const_pred, dtype_of, floordiv, floormod, handle,
                  if_then_else, infinity, iter_var, let, llvm_lookup_intrinsic_id, max, max_value, meta_var, min,
                  min_value, reinterpret, ret, shift_left, shift_right, truncdiv, truncmod)

globals().update(TYPES)
globals().update(MATH)
buffer_var = handle
Ptr = handle
PrimExpr = _core.PrimExpr

# TVM's builtins (T.tvm_access_ptr, T.call_packed, T.ptx_mma, ...) and the dtype= forms.
from .intrin_ops import INTRINSICS as _INTRINSICS  # noqa: E402
from .intrin_ops import dtype_forwarding as _dtype_forwarding  # noqa: E402
from . import ir_extras as _ir_extras  # noqa: E402

globals().update(_INTRINSICS)
globals().update(_dtype_forwarding(globals()))
globals().update(_ir_extras.names(globals()))
from .ctrl_frames import NAMES as _CTRL_NAMES  # noqa: E402

globals().update(_CTRL_NAMES)


def _vload(self, indices, dtype=None, predicate=None):
    """``A.vload([i, j], predicate=mask)``: a (masked) load; a Ramp index loads a vector. A
    single index may be given bare (``A.vload(0)``), as TVM takes it."""
    if not isinstance(indices, (list, tuple)):
        indices = [indices]
    indices = [_expr_ops.convert(i) if not isinstance(i, int) else _expr_ops.const(i) for i in indices]
    pred = None if predicate is None else _expr_ops.convert(predicate)
    if dtype is not None:
        # As TVM's Buffer.vload: `dtype` is the loaded value's type; a fixed-width vector type
        # of a scalar last index loads the lanes from there on.
        from ...ir.dtype import DataType

        want, elem = DataType(dtype), DataType(self.dtype)
        if (want.element_of != elem.element_of
                or want.get_lanes_or_vscale_factor() % elem.get_lanes_or_vscale_factor() != 0):
            raise TesseraTypeError(f"{self.name}.vload: cannot load {want} from a buffer of {elem}")
        factor = want.get_lanes_or_vscale_factor() // elem.get_lanes_or_vscale_factor()
        if indices and want.is_fixed_length_vector and factor > 1 and indices[-1].dtype.is_scalar:
            base = indices[-1]
            indices[-1] = _core.Ramp(base, _expr_ops.const(1, base.dtype), factor)
        load = _core.BufferLoad(self, indices, pred)
        if load.dtype != want:
            raise TesseraTypeError(f"{self.name}.vload: the indices load {load.dtype}, not {want}")
        return load
    return _core.BufferLoad(self, indices, pred)


def _vstore(self, indices, value, predicate=None):
    """``A.vstore([i], value, predicate=mask)``: a (masked) store. Inside a prim_func it is
    emitted; outside (``ir_builder`` code, te.extern generators) it returns the BufferStore, as
    TVM's ``Buffer.vstore``. A single index may be given bare; a vector value stored at a scalar
    last index stores its lanes from there on (``B.vstore(i, A.vload(i, "float32x2"))``)."""
    if not isinstance(indices, (list, tuple)):
        indices = [indices]
    indices = [_expr_ops.convert(i) if not isinstance(i, int) else _expr_ops.const(i) for i in indices]
    pred = None if predicate is None else _expr_ops.convert(predicate)
    value = _expr_ops.convert(value, self.dtype)
    from ...ir.dtype import DataType

    have, elem = DataType(value.dtype), DataType(self.dtype)
    if (indices and have.is_fixed_length_vector and indices[-1].dtype.is_scalar
            and have.element_of == elem.element_of and have.lanes % elem.lanes == 0
            and have.lanes // elem.lanes > 1):
        base = indices[-1]
        indices[-1] = _core.Ramp(base, _expr_ops.const(1, base.dtype), have.lanes // elem.lanes)
    parser = _state.current()
    if parser is None:
        return _core.BufferStore(self, value, indices, pred)
    parser.builder.emit(_core.BufferStore(self, value, indices, pred, parser.current_span()))
    return None


_core.Buffer.vload = _vload
_core.Buffer.vstore = _vstore


def __getattr__(name):
    """Vector types on demand (``T.float32x4``) and any registered ``tir.*`` intrinsic."""
    try:
        canonical = _core.canonical_dtype(name)
    except Exception:
        canonical = None
    if canonical is not None and name[0].isalpha() and any(c.isdigit() for c in name):
        return dtype_of(name)
    if _core.Op.exists("tir." + name):
        op_name = "tir." + name

        def intrinsic(*args):
            return ops_call(op_name, args)

        intrinsic.__name__ = name
        intrinsic.__doc__ = f"``T.{name}``: the ``{op_name}`` intrinsic."
        intrinsic._tessera_builtin = True
        return intrinsic
    from ...error import did_you_mean

    raise AttributeError(f"module 'tessera.script.tir' has no attribute '{name}'"
                         + did_you_mean(name, list(globals()), "T."))


def ops_call(op_name, args):
    """A Call of a registered op, the dtype following the first argument."""
    from .ops import call_op

    return call_op(op_name, args)
