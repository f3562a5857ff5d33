"""The execution model: S.tec_range and S.vectorized (loops the parser's ``for`` handles), and
the checks of the table's TEC intrinsics (table.py): S.get_local_id, S.get_local_size,
S.barrier.

The kernel body runs on every TEC of a core (4 TECs); ``for t in S.tec_range(...)`` is handled
by the parser's ``for`` statement.
"""

from ._registry import intrinsic


def _tec_value(p, node, name, op):
    """The tec form's values (S.get_local_id, S.get_local_size): an int32 call of ``op``."""
    return p.call_op(node, "int32", op, [])


def _barrier(p, node, name, op):
    """The tec form's statement (S.barrier): a call of ``op``."""
    p.emit_call(node, op)


@intrinsic
def tec_range(p, node, start, stop=None):
    """``for t in S.tec_range(stop)`` / ``S.tec_range(start, stop)``: a loop bound to the TEC
    index; each TEC runs the body once, if its index is in [start, stop)."""
    raise p.error(node, "S.tec_range can only be the iterable of a for loop")


@intrinsic
def vectorized(p, node, start, stop=None):
    """``for i in S.vectorized(stop)`` / ``S.vectorized(start, stop)``: a loop whose iterations
    are independent, marked vectorized (the C compiler vectorizes it where it can)."""
    raise p.error(node, "S.vectorized can only be the iterable of a for loop")
