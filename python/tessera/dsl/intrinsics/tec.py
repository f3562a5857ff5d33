"""The execution model: S.get_local_id, S.get_local_size, S.tec_range and S.barrier.

The kernel body runs on every TEC of a core (4 TECs); ``for t in S.tec_range(...)`` is handled
by the parser's ``for`` statement.
"""

from ._registry import intrinsic


@intrinsic
def get_local_id(p, node):
    """This TEC's index, 0 to 3."""
    return p.call_op(node, "int32", "dsl.get_local_id", [])


@intrinsic
def get_local_size(p, node):
    """The number of TECs of a core: 4."""
    return p.call_op(node, "int32", "dsl.get_local_size", [])


@intrinsic
def tec_range(p, node, start, stop=None):
    """``for t in S.tec_range(stop)`` / ``S.tec_range(start, stop)``: a loop bound to the TEC
    index; each TEC runs the body once, if its index is in [start, stop)."""
    raise p.error(node, "S.tec_range can only be the iterable of a for loop")


@intrinsic
def barrier(p, node):
    """Wait until every TEC of the core reaches the barrier; their earlier writes are then
    visible to each other."""
    p.emit_call(node, "dsl.barrier")


@intrinsic
def vectorized(p, node, start, stop=None):
    """``for i in S.vectorized(stop)`` / ``S.vectorized(start, stop)``: a loop whose iterations
    are independent, marked vectorized (the C compiler vectorizes it where it can)."""
    raise p.error(node, "S.vectorized can only be the iterable of a for loop")
