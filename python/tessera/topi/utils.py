"""Helpers of the operator library: constant shapes, axes and broadcasting."""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..tir import expr_ops


def get_const_int(expr):
    """The Python int of an integer constant expression (or an int)."""
    if isinstance(expr, bool):
        return int(expr)
    if isinstance(expr, int):
        return expr
    if isinstance(expr, _core.IntImm):
        return expr.value
    if hasattr(expr, "item") and not isinstance(expr, _core.Object):
        return int(expr)
    raise TesseraValueError(f"expected a constant integer, got {expr}")


def equal_const_int(expr, value):
    """Whether ``expr`` is the constant integer ``value``."""
    return const_or_none(simplify(expr)) == value


def get_const_tuple(in_tuple):
    """A shape as a tuple of ints; symbolic entries stay expressions (as in TVM)."""
    out = []
    for e in in_tuple:
        if isinstance(e, (int, _core.IntImm)) and not isinstance(e, bool):
            out.append(get_const_int(e))
        else:
            out.append(e)
    return tuple(out)


def const_or_none(expr):
    """The int of a constant expression, None for a symbolic one."""
    if isinstance(expr, int) and not isinstance(expr, bool):
        return expr
    if isinstance(expr, _core.IntImm):
        return expr.value
    return None


def const_shape(tensor, what):
    """The shape of ``tensor`` as ints; an error names ``what`` when a dimension is symbolic."""
    shape = []
    for s in tensor.shape:
        v = const_or_none(s)
        if v is None:
            raise TesseraValueError(
                f"{what} needs a tensor of constant shape, got {tensor.name} "
                f"of shape {tuple(tensor.shape)}"
            )
        shape.append(v)
    return tuple(shape)


def normalize_axis(axis, ndim, what):
    """``axis`` (negative counts from the end) as an index in ``[0, ndim)``."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        try:
            axis = get_const_int(axis)
        except TesseraValueError:
            raise TesseraTypeError(f"{what}: axis must be an int, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise TesseraValueError(
            f"{what}: axis {axis} is out of range for a tensor of "
            f"{ndim} dimension{'' if ndim == 1 else 's'}"
        )
    return axis + ndim if axis < 0 else axis


def normalize_axes(axis, ndim, what):
    """A sorted list of distinct axes from None (all), an int or a sequence of ints."""
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (list, tuple)) or (
        isinstance(axis, _core.Object) and hasattr(axis, "__len__")
    ):
        axes = [normalize_axis(a, ndim, what) for a in axis]
    else:
        axes = [normalize_axis(axis, ndim, what)]
    if len(set(axes)) != len(axes):
        raise TesseraValueError(f"{what}: repeated axis in {axis!r}")
    return sorted(axes)


def equal_dims(a, b):
    """Whether two dimensions are known to be equal."""
    ca, cb = const_or_none(a), const_or_none(b)
    if ca is not None and cb is not None:
        return ca == cb
    if isinstance(a, _core.PrimExpr) and isinstance(b, _core.PrimExpr):
        return _core.structural_equal(a, b, False)
    return False


def broadcast_shape(shapes, what):
    """The numpy broadcast of several shapes; a ValueError names the incompatible dimensions."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        dim = None
        for s in shapes:
            k = d - (ndim - len(s))
            if k < 0:
                continue
            e = s[k]
            if dim is None or const_or_none(dim) == 1:
                dim = e
            elif const_or_none(e) == 1 or equal_dims(dim, e):
                continue
            else:
                listed = " and ".join(str(tuple(get_const_tuple(x))) for x in shapes)
                raise TesseraValueError(
                    f"{what}: shapes {listed} "
                    f"cannot be broadcast together (dimension {d}: {dim} vs. {e})"
                )
        out.append(dim)
    return out


def broadcast_index(tensor, out_indices):
    """The element of ``tensor`` at the broadcast output position ``out_indices``."""
    ndim = len(tensor.shape)
    offset = len(out_indices) - ndim
    idx = []
    for k in range(ndim):
        if const_or_none(tensor.shape[k]) == 1:
            idx.append(0)
        else:
            idx.append(out_indices[offset + k])
    return tensor[tuple(idx)]


def ravel_index(indices, shape):
    """The row-major flat index of ``indices`` in ``shape``."""
    flat = None
    for i, s in zip(indices, shape):
        flat = i if flat is None else flat * s + i
    return expr_ops.const(0, "int32") if flat is None else flat


def unravel_index(flat, shape):
    """The indices of the row-major flat index ``flat`` in ``shape``."""
    out = []
    for s in reversed(list(shape)):
        out.append(flat % s if const_or_none(s) != 1 else expr_ops.const(0, "int32"))
        flat = flat // s
    return list(reversed(out))


def simplify(expr):
    """``expr`` with constants folded (an int stays an int)."""
    if isinstance(expr, _core.PrimExpr) and not isinstance(expr, _core.IntImm):
        return _core.simplify_expr(expr)
    return expr


def dim_add(*values):
    """The sum of dimensions, folded to an int when all are constant."""
    total = 0
    for v in values:
        total = total + v
    return simplify(total)


def dim_mul(*values):
    """The product of dimensions, folded when constant."""
    return simplify(prod(values))


def prod(values):
    """The product of ints (or expressions); constant dimensions fold to an int."""
    out = 1
    for v in values:
        c = const_or_none(v)
        if c is not None and isinstance(out, int):
            out *= c
        else:
            out = out * v
    return out


def is_tensor(x):
    """Whether ``x`` is a te Tensor."""
    return isinstance(x, _core.te.Tensor)
