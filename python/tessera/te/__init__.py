"""Tensor expressions: describe tensors by formulas and turn them into TensorIR functions.

>>> from tessera import te
>>> X = te.placeholder((64, 32), "float32", name="X")
>>> r = te.reduce_axis((0, 32), name="r")
>>> row_sum = te.compute((64,), lambda i: te.sum(X[i, r], axis=r), name="row_sum")
>>> func = te.create_prim_func([X, row_sum])

The graph and the lowering live in C++ (``include/tessera/te``); this package holds handles.
"""

from .. import _core
from ..error import TesseraTypeError
from .reduction import CommReducer, comm_reducer, max, min, reduce_axis, sum  # noqa: A004
from .ops import *  # noqa: F401,F403 - te.exp, te.floordiv, ... (tessera.tir.ops)
from . import ops
from .ops import TagScope, add, logaddexp, multiply, subtract, tag_scope, thread_axis
from .extern import ExternOp, ScanOp, extern, extern_primfunc, scan
from .tensor import (ComputeOp, Operation, PlaceholderOp, Reduce, Tensor, TensorSlice, compute,
                     const, placeholder, size_var, var)


def create_prim_func(ops, index_dtype_override=None):
    """The PrimFunc computing the listed tensors (see spec/tensorir.md §4).

    Listed tensors become buffer parameters in order (listed ``te.var``s scalar parameters);
    other computed tensors become ``T.alloc_buffer``s; each compute becomes one block named
    after it. The function is named ``"main"``; rename it with
    ``func.with_attr("global_symbol", "name")``.

    >>> func = te.create_prim_func([X, row_sum])   # X and row_sum become its two buffers
    >>> text = func.script()                         # its TVMScript
    """
    if isinstance(ops, (Tensor, _core.Var)):
        ops = [ops]
    args = []
    for op in list(ops):
        if not isinstance(op, (Tensor, _core.Var)):
            raise TesseraTypeError(
                "te.create_prim_func expects a list of te tensors (and te.var scalar parameters), "
                f"got {op!r}")
        args.append(op)
    dtype = None if index_dtype_override is None else _core.canonical_dtype(str(index_dtype_override))
    return _core.te.create_prim_func(args, dtype)


__all__ = ["Tensor", "Operation", "PlaceholderOp", "ComputeOp", "Reduce", "CommReducer",
           "placeholder", "compute", "reduce_axis", "sum", "max", "min", "comm_reducer", "var",
           "size_var", "const", "create_prim_func", "TensorSlice", "thread_axis", "tag_scope",
           "TagScope", "add", "subtract", "multiply", "logaddexp", "extern", "extern_primfunc", "scan",
           "ExternOp", "ScanOp"] + [
    n for n in ops.__all__ if n not in ("sum", "max", "min")]


def __getattr__(name):
    # te.AXIS_SEPARATOR (TVM's alias of IndexMap.AXIS_SEPARATOR), resolved late: tessera.tir
    # imports tessera.te's neighbours.
    if name == "AXIS_SEPARATOR":
        from ..tir.schedule.schedule import AXIS_SEPARATOR

        return AXIS_SEPARATOR
    raise AttributeError(f"module 'tessera.te' has no attribute {name!r}")
