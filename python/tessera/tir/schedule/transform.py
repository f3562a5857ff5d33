"""Schedule transformations built from primitives (TVM's ``tir.schedule.transform``).

>>> inner = tile_with_tensor_intrin(sch, sch.get_block("C"), "dot_16x4_vnni")
>>> sch.tensorize(inner, "dot_16x4_vnni")
"""

from ...error import TesseraValueError
from .analysis import _block_sref, get_tensorize_loop_mapping
from .tensor_intrin import TensorIntrin


def _pad_for_intrin(sch, block, paddings):
    """``pad_einsum`` the block by ``paddings``, then inline the blocks it was fed by and fed
    into back into the padding blocks ``pad_einsum`` made (as TVM: the padded producers and
    consumers take the original ones' place)."""
    before_producers = {sch.get_sref(b) for b in sch.get_producers(block)}
    before_consumers = {sch.get_sref(b) for b in sch.get_consumers(block)}
    sch.pad_einsum(block, paddings)
    inline = []
    for producer in sch.get_producers(block):
        if sch.get_sref(producer) in before_producers:
            continue  # not padded
        originals = sch.get_producers(producer)
        if not originals:
            continue  # pads a function input
        if len(originals) != 1 or sch.get_sref(originals[0]) not in before_producers:
            raise TesseraValueError("tile_with_tensor_intrin: unexpected producers after pad_einsum")
        inline.append(originals[0])
    for consumer in sch.get_consumers(block):
        if sch.get_sref(consumer) in before_consumers:
            continue
        if not sch.get_consumers(consumer):
            continue  # writes a function output
        inline.append(consumer)
    for b in inline:
        sch.compute_inline(b)


def tile_with_tensor_intrin(sch, block, intrin_name, allow_padding=False):
    """Split the loops of ``block`` that the tensor intrinsic ``intrin_name`` covers by the
    intrinsic's extents and move the inner parts innermost, in the description's loop order.
    Returns the outermost of those inner loops (the loop to tensorize), or None when the
    intrinsic does not fit the block. With ``allow_padding`` the block is first padded
    (``pad_einsum``) to multiples of the intrinsic's extents."""
    desc = TensorIntrin.get(intrin_name).desc
    _block_sref(sch, block)
    info = get_tensorize_loop_mapping(sch, block, desc, allow_padding)
    if info is None:
        return None
    if info.block_iter_paddings is not None:
        _pad_for_intrin(sch, block, info.block_iter_paddings)
    loop_of_sref = {sch.get_sref(loop): loop for loop in sch.get_loops(block)}
    inner_srefs = set()
    suffix = [None] * len(info.loop_map)
    for loop_sref, desc_loop in info.loop_map.items():
        inner_extent = int(desc_loop.extent)
        _, inner = sch.split(loop_of_sref[loop_sref], factors=[None, inner_extent])
        inner_srefs.add(sch.get_sref(inner))
        suffix[info.desc_loop_indexer[desc_loop]] = inner
    order, met = [], False
    for loop in sch.get_loops(block):
        if sch.get_sref(loop) in inner_srefs:
            met = True
        elif met:
            order.append(loop)
    sch.reorder(*order, *suffix)
    return suffix[0]


__all__ = ["tile_with_tensor_intrin"]
