"""Analyses of a schedule's blocks used by automatic tensorization (TVM's
``tir.schedule.analysis``): which loops of a block a tensor intrinsic covers, and whether a
block is an output block. ``suggest_index_map`` and ``get_auto_tensorize_mapping_info`` are
not implemented (they raise NotImplementedError).

>>> info = get_tensorize_loop_mapping(sch, sch.get_block("C"), TensorIntrin.get(name).desc)
>>> {sch.get(sref): desc_loop for sref, desc_loop in info.loop_map.items()}
"""

from ... import _core
from ...error import TesseraError, TesseraTypeError


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


class _NotProvided(TesseraError, NotImplementedError):
    """An analysis of TVM's that tessera does not implement yet."""


def suggest_index_map(buffer, indices, loops, predicate):
    """Not implemented in tessera: raises NotImplementedError (TVM's layout suggestion from
    the iterator structure of a buffer's access indices)."""
    raise _NotProvided("suggest_index_map is not implemented in tessera (TVM's layout suggestion "
                       "for a buffer access); write the index map for transform_layout by hand")


def get_auto_tensorize_mapping_info(sch, block, desc_func):
    """Not implemented in tessera: raises NotImplementedError (TVM's index maps that reshape a
    block's iterators to a tensor intrinsic's for auto-tensorization)."""
    raise _NotProvided("get_auto_tensorize_mapping_info is not implemented in tessera (TVM's "
                       "auto-tensorization mapping); use get_tensorize_loop_mapping or "
                       "tile_with_tensor_intrin")


__all__ = ["TensorizeInfo", "get_auto_tensorize_mapping_info", "get_tensorize_loop_mapping", "is_output_block",
           "suggest_index_map"]
