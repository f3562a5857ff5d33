"""``flatten``: ``[batch, ...]`` to ``[batch, product of the rest]``."""

from ...error import TesseraValueError
from ...te import compute
from .. import tag
from ..utils import prod, unravel_index


def flatten(data):
    """``data`` of shape ``[batch, d1, d2, ...]`` as ``[batch, d1 * d2 * ...]``."""
    if len(data.shape) < 1:
        raise TesseraValueError("topi.nn.flatten needs at least one dimension")
    rest = list(data.shape[1:])

    def fcompute(b, j):
        return data[(b, *unravel_index(j, rest))]

    return compute((data.shape[0], prod(rest)), fcompute, name="compute", tag=tag.INJECTIVE)
