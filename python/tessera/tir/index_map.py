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


def _shape_exprs(self, shape, what):
    """``shape`` as expressions: numbers in the type of the map's indices."""
    if isinstance(shape, (int, _core.PrimExpr)):
        shape = [shape]
    dtypes = [str(v.dtype) for v in self.initial_indices]
    out = []
    for k, extent in enumerate(shape):
        if isinstance(extent, int) and not isinstance(extent, bool):
            extent = expr_ops.const(extent, dtypes[k] if k < len(dtypes) else "int32")
        elif not isinstance(extent, _core.PrimExpr):
            raise TesseraTypeError(f"IndexMap.{what}: a shape holds integers or expressions, got {extent!r}")
        out.append(extent)
    return out


def _map_indices(self, indices):
    """The final indices at ``indices`` (numbers or expressions, one per initial index),
    simplified; constants given in a wider type than the map's come back in that type.

    >>> IndexMap.from_func(lambda i: (i // 4, i % 4)).map_indices([42])   # [10, 2]
    """
    if len(indices) != len(self.initial_indices):
        raise TesseraValueError(f"IndexMap.map_indices: the map takes {len(self.initial_indices)} "
                                f"indices, got {len(indices)}")
    given = []
    for var, index in zip(self.initial_indices, indices):
        if isinstance(index, int) and not isinstance(index, bool):
            index = expr_ops.const(index, str(var.dtype))
        given.append(expr_ops.convert(index))
    result = self._map_indices(given)
    wide = [str(i.dtype) for i in given if str(i.dtype) == "int64"]
    if wide:
        result = [expr_ops.const(int(r.value), "int64") if isinstance(r, _core.IntImm) and str(r.dtype) == "int32"
                  else r for r in result]
    return result


def _map_shape(self, shape):
    """The shape the map produces from the input shape ``shape``: the extent of each final
    index (over a symbolic size n, a split's outer extent is ``(n - n % -c) // c``).

    >>> IndexMap.from_func(lambda i: (i // 4, i % 4)).map_shape([14])   # [4, 4]
    """
    return self._map_shape(_shape_exprs(self, shape, "map_shape"))


def _non_surjective_inverse(self, shape):
    """``(inverse, padding_predicate)`` over the input shape ``shape``: the inverse map of a map
    that produces a padded shape (``map_shape``), and the condition, over the inverse's
    inputs, that holds on the padding (the positions no input maps to). An input used as
    ``i + c`` is padded by ``c`` on the left.

    >>> inv, pad = IndexMap.from_func(lambda i: (i // 4, i % 4)).non_surjective_inverse([14])
    >>> pad   # i0 == 3 and i1 >= 2
    """
    inverse, predicate = self._non_surjective_inverse(_shape_exprs(self, shape, "non_surjective_inverse"))
    return inverse, predicate


def _map_tensor(self, tensor):
    """A new tensor of the shape ``map_shape`` gives, holding each element of ``tensor`` at the
    position the map sends its index to (padding left zero): TVM's ``IndexMap.map_tensor``.

    >>> IndexMap.from_func(lambda i, j: (j, i)).map_tensor(nd.array(x)).numpy()   # x.T
    """
    import numpy as np

    from .. import nd

    array = tensor.numpy() if hasattr(tensor, "numpy") else np.asarray(tensor)
    offsets, out_shape = self._map_offsets(list(array.shape))
    out = np.zeros(int(np.prod(out_shape)), dtype=array.dtype)
    out[np.asarray(offsets, dtype=np.int64)] = array.reshape(-1)
    return nd.array(out.reshape(out_shape))


if not hasattr(_core.IndexMap, "_map_indices"):
    _core.IndexMap._map_indices = _core.IndexMap.map_indices
_core.IndexMap.map_indices = _map_indices
_core.IndexMap.map_shape = _map_shape
_core.IndexMap.non_surjective_inverse = _non_surjective_inverse
_core.IndexMap.map_tensor = _map_tensor


# The C++ constructor by minimum and extent (nodes only), kept before the wrapper replaces it.
if not hasattr(_core.Range, "_from_min_extent_nodes"):
    _core.Range._from_min_extent_nodes = _core.Range.from_min_extent


def _range_from_min_extent(min_value, extent, span=None):
    """``Range.from_min_extent(min, extent)`` (TVM's constructor by minimum and extent)."""
    lo = expr_ops.convert(min_value)
    return _core.Range._from_min_extent_nodes(lo, expr_ops.convert(extent, lo.dtype), span)


_core.Range.from_min_extent = staticmethod(_range_from_min_extent)
