"""Analyses of a schedule's blocks used by automatic tensorization (TVM's
``tir.schedule.analysis``): which loops of a block a tensor intrinsic covers, and whether a
block is an output block, ``suggest_index_map`` (the buffer layout under which an access
walks the buffer in loop order) and ``get_auto_tensorize_mapping_info`` (how a block's iterators
fuse onto a tensor intrinsic's).

>>> info = get_tensorize_loop_mapping(sch, sch.get_block("C"), TensorIntrin.get(name).desc)
>>> {sch.get(sref): desc_loop for sref, desc_loop in info.loop_map.items()}
"""

from ... import _core
from ...error import TesseraTypeError


class TensorizeInfo:
    """Where a tensor intrinsic's description fits a block: ``loop_map`` (block loop sref ->
    the description's For), ``desc_loop_indexer`` (description For -> its position, outermost
    0) and ``block_iter_paddings`` (with padding allowed: per block iterator the multiple it is
    padded to, 1 for none; else None)."""

    def __init__(self, loop_map, desc_loops, block_iter_paddings):
        self.loop_map = dict(loop_map)
        self.desc_loop_indexer = {loop: i for i, loop in enumerate(desc_loops)}
        self.block_iter_paddings = None if block_iter_paddings is None else list(block_iter_paddings)

    def __repr__(self):
        return (f"TensorizeInfo({len(self.loop_map)} loops mapped, "
                f"paddings={self.block_iter_paddings})")


def _block_sref(sch, block):
    from .schedule import BlockRV, Schedule

    if not isinstance(sch, Schedule):
        raise TesseraTypeError(f"expected a Schedule, got {type(sch).__name__}")
    if isinstance(block, str):
        block = sch.get_block(block)
    if not isinstance(block, BlockRV):
        raise TesseraTypeError(f"expected a BlockRV, got {type(block).__name__}")
    return sch.get_sref(block)


def get_tensorize_loop_mapping(sch, block, desc_func, allow_padding=False):
    """The :class:`TensorizeInfo` mapping the loops above ``block`` onto the loops of the
    tensor intrinsic description ``desc_func`` (a PrimFunc), or None when they do not fit.

    The description's iterators are matched innermost first, each to the next block iterator of
    the same kind (spatial, reduction) and to the loop that iterator follows; each matched loop's
    extent must be a multiple of the description loop's, unless ``allow_padding`` (then
    ``block_iter_paddings`` says what to pad)."""
    if not isinstance(desc_func, _core.PrimFunc):
        raise TesseraTypeError(f"desc_func must be a PrimFunc, got {type(desc_func).__name__}")
    found = _core.get_tensorize_loop_mapping(sch.state._state, _block_sref(sch, block), desc_func,
                                             bool(allow_padding))
    return None if found is None else TensorizeInfo(*found)


def is_output_block(sch, block):
    """Whether ``block`` writes a buffer allocated outside its scope (a function parameter or a
    buffer of an enclosing block)."""
    return _core.is_output_block(sch.state._state, _block_sref(sch, block))


def suggest_index_map(buffer, indices, loops, predicate):
    """The IndexMap that lays ``buffer`` out so that the access ``buffer[indices]`` inside
    ``loops`` (outermost first) reads it in the order of the loops: the flattened access is
    split into pieces of the loop variables and the new dimensions are those pieces, ordered by
    loop (the outer piece of a loop first). None when the access is not an affine pattern of the
    loops. ``predicate`` is accepted for TVM's signature (tessera's analysis uses none).

    >>> suggest_index_map(decl_buffer((8,)), [j % 4 * 2 + i], [For i < 2, For j < 32], True)
    ... # lambda i0: (i0 % 2, i0 // 2)
    """
    from ..expr_ops import convert

    if not isinstance(buffer, _core.Buffer):
        raise TesseraTypeError(f"suggest_index_map: buffer must be a Buffer, got {type(buffer).__name__}")
    loops = list(loops)
    for loop in loops:
        if not isinstance(loop, _core.For):
            raise TesseraTypeError(f"suggest_index_map: loops must be For statements, got {type(loop).__name__}")
    return _core.suggest_index_map(buffer, [convert(i) for i in indices], loops, convert(predicate))


class AutoTensorizeMappingInfo:
    """How a block maps onto a tensor intrinsic's description (TVM's AutoTensorizeMappingInfo):
    ``mappings`` (a list of at most one IndexMap from the block's iterators to the
    description's, fusing the block iterators that index the same buffers as one description
    iterator; block iterators matching none come first), ``lhs_buffer_map`` (block buffer ->
    description buffer), ``rhs_buffer_indices`` (description buffer -> its indices),
    ``lhs_iters`` and ``rhs_iters`` (the block's and the description's iterators)."""

    def __init__(self, mappings, lhs_buffer_map, rhs_buffer_indices, lhs_iters, rhs_iters):
        self.mappings = list(mappings)
        self.lhs_buffer_map = dict(lhs_buffer_map)
        self.rhs_buffer_indices = dict(rhs_buffer_indices)
        self.lhs_iters = list(lhs_iters)
        self.rhs_iters = list(rhs_iters)

    def __repr__(self):
        return f"AutoTensorizeMappingInfo({[m.as_python() for m in self.mappings]})"


def get_auto_tensorize_mapping_info(sch, block, desc_func):
    """The AutoTensorizeMappingInfo of ``block`` for the description ``desc_func``: the block
    computes the description's expression up to buffer indices (same operations, constants and
    buffer dtypes), and each block iterator indexes the same buffers as one description
    iterator of its kind. None when the computations differ or the mapping is not unique.

    >>> info = get_auto_tensorize_mapping_info(sch, sch.get_block("conv2d_nhwc"), wmma_sync_desc)
    >>> info.mappings[0]   # lambda n, h, w, co, rh, rw, rc: (n*256 + h*16 + w, co, rh*192 + rw*64 + rc)
    """
    if not isinstance(desc_func, _core.PrimFunc):
        raise TesseraTypeError(f"get_auto_tensorize_mapping_info: desc_func must be a PrimFunc, got "
                               f"{type(desc_func).__name__}")
    found = _core.get_auto_tensorize_mapping_info(sch.state._state, _block_sref(sch, block), desc_func)
    return None if found is None else AutoTensorizeMappingInfo(*found)


__all__ = ["AutoTensorizeMappingInfo", "TensorizeInfo", "get_auto_tensorize_mapping_info", "get_tensorize_loop_mapping", "is_output_block",
           "suggest_index_map"]
