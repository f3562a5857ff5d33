"""``tir.IndexMap.from_func`` and ``T.index_map``: an index map from a Python function.

>>> m = tir.IndexMap.from_func(lambda i, j: (j, i // 4, i % 4))
>>> m.map_indices([tir.const(5), tir.const(2)])   # [2, 1, 1]
"""

import inspect

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from . import expr_ops


def from_func(mapping, ndim=None, inverse_index_map=None, *, index_dtype="int64"):
    """The IndexMap taking ``(i0, i1, ...)`` to ``mapping(i0, i1, ...)``; the variables are named
    after the function's parameters (``*args`` takes ``ndim`` of them) and typed
    ``index_dtype``. ``inverse_index_map`` is accepted for TVM's signature; tessera computes
    inverses itself where it needs them."""
    if not callable(mapping):
        raise TesseraTypeError(f"IndexMap.from_func: mapping must be a function, got {mapping!r}")
    params = list(inspect.signature(mapping).parameters.values())
    names = []
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            if ndim is None:
                raise TesseraValueError("IndexMap.from_func: a function taking *args needs ndim")
            names += [f"i{k}" for k in range(ndim - len(names))]
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            names.append(p.name)
    if ndim is not None and len(names) != ndim:
        raise TesseraValueError(f"IndexMap.from_func: the function takes {len(names)} indices, "
                                f"ndim is {ndim}")
    dtype = _core.canonical_dtype(str(index_dtype))
    variables = [_core.Var(n, dtype) for n in names]
    result = mapping(*variables)
    if not isinstance(result, (list, tuple)):
        result = [result]
    final = []
    for e in result:
        if isinstance(e, int) and not isinstance(e, bool):
            e = expr_ops.const(e, dtype)
        final.append(expr_ops.convert(e))
    return _core.IndexMap(variables, final)


_core.IndexMap.from_func = staticmethod(from_func)


def _inverse(self, shape):
    """The inverse of this map over the input domain ``[0, shape)``: a map from the final
    indices back to the initial ones. Raises TesseraValueError unless the map is a bijective
    pattern of fuses and splits over that domain.

    >>> IndexMap.from_func(lambda r: (r // 8, r % 8)).inverse([32])   # lambda r0, r1: (r0 * 8 + r1,)
    """
    return self._inverse([expr_ops.convert(e) for e in shape])


_core.IndexMap.inverse = _inverse


# The C++ constructor by minimum and extent (nodes only), kept before the wrapper replaces it.
if not hasattr(_core.Range, "_from_min_extent_nodes"):
    _core.Range._from_min_extent_nodes = _core.Range.from_min_extent


def _range_from_min_extent(min_value, extent, span=None):
    """``Range.from_min_extent(min, extent)`` (TVM's constructor by minimum and extent)."""
    lo = expr_ops.convert(min_value)
    return _core.Range._from_min_extent_nodes(lo, expr_ops.convert(extent, lo.dtype), span)


_core.Range.from_min_extent = staticmethod(_range_from_min_extent)
