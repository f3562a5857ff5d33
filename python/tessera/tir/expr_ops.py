"""Python operators on PrimExpr and indexing of Buffers, as TensorIR defines them.

Importing this module installs ``+ - * / // % ** < <= > >= == != & | ^ << >> ~ -`` on
:class:`PrimExpr`, ``A[i, j]`` / ``A[i, 0:16]`` on :class:`Buffer` and ``x.astype(dtype)``, so that
ordinary Python helpers and closures can compute with expressions::

    def tile(i, j):
        return i * 16 + j          # an Add of a Mul when i, j are PrimExprs

A Python number takes the other operand's dtype; ``/`` builds ``Div`` (C truncation on
integers), ``//`` ``FloorDiv`` and ``%`` ``FloorMod``. Constants fold as TVM's operators fold them
(``const(7) // 2`` is ``3``, ``x * 1`` is ``x``; see arith/const_fold.h); the node constructors
(``tir.Add(a, b)``) never fold. ``==`` builds an ``EQ`` node; used as a
Python bool it tells whether both sides are the same object (so ``x in list`` still works).
"""

import functools
import math

from .. import _core
from ..error import ArgumentTypeError, ExpressionUseError, TesseraTypeError, TesseraValueError

PrimExpr = _core.PrimExpr

_FLOAT_PREFIXES = ("float", "bfloat")


def is_float(dtype):
    """Whether a dtype string names a floating-point type (scalar or vector)."""
    return dtype.startswith(_FLOAT_PREFIXES)


def is_int(dtype):
    """Whether a dtype string names a signed or unsigned integer type (scalar or vector)."""
    return dtype.startswith(("int", "uint"))


@functools.lru_cache(maxsize=1024)
def _lanes_cached(dtype):
    return _core.DataType(dtype).raw_lanes


@functools.lru_cache(maxsize=1024)
def _element_cached(dtype):
    return str(_core.DataType(dtype).with_lanes(1))


def lanes_of(dtype):
    """The lane count of a dtype string (1 for scalars; -k for a scalable vector of vscale * k
    lanes, the lanes argument of Ramp/Broadcast that builds one)."""
    # Parsed once per dtype name: expression building asks this for every operand.
    if isinstance(dtype, str):
        return _lanes_cached(dtype)
    return _core.DataType(dtype).raw_lanes


def element_of(dtype):
    """The scalar element type of a dtype string (``"float32x4"`` -> ``"float32"``)."""
    if isinstance(dtype, str):
        return _element_cached(dtype)
    return str(_core.DataType(dtype).with_lanes(1))


@functools.lru_cache(maxsize=1024)
def _const_type(dtype):
    """(element type, lanes, is float, (lo, hi) range of an integer type or None) of a
    constant of ``dtype``; the canonical name is parsed once per dtype name."""
    dtype = _core.canonical_dtype(dtype)
    lanes = lanes_of(dtype)
    elem = element_of(dtype) if lanes != 1 else dtype
    if is_float(elem):
        return elem, lanes, True, None
    bits = _core.DataType(elem).bits
    if bits <= 64 and elem != "bool" and not elem.startswith("handle"):
        lo, hi = (0, 2**bits - 1) if elem.startswith("uint") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        return elem, lanes, False, (lo, hi)
    return elem, lanes, False, None


def const(value, dtype=None, span=None):
    """A constant of ``dtype``; the dtype defaults to bool, int32 or float32 after the value
    (int64 for an integer beyond int32, float64 for a float beyond float32's range, as TVM).

    >>> const(1.5).dtype
    'float32'
    """
    if dtype is None:
        dtype = _default_const_dtype(value)
    if isinstance(dtype, str):
        elem, lanes, floating, bounds = _const_type(dtype)
    else:
        elem, lanes, floating, bounds = _const_type.__wrapped__(dtype)
    if floating:
        c = _core.FloatImm(elem, float(value), span)
    else:
        if isinstance(value, float) and not float(value).is_integer():
            raise TesseraTypeError(f"cannot use the float {value!r} as a constant of type {elem}")
        v = int(value)
        if bounds is not None:
            lo, hi = bounds
            if not lo <= v <= hi or not -(2**63) <= v < 2**64:
                raise TesseraValueError(f"the integer {v} does not fit in {elem} (from {lo} to {hi})")
            if v >= 2**63:  # uint64 above int64's range: kept as its 64-bit pattern
                v -= 2**64
        c = _core.IntImm(elem, v, span)
    return _core.Broadcast(c, lanes, span) if lanes != 1 else c


_FLOAT32_MAX = 3.4028234663852886e38


def _default_const_dtype(value):
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        return str(value.dtype)  # a numpy scalar keeps its type
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int32" if -(2**31) <= value < 2**31 else "int64"
    if isinstance(value, float) and math.isfinite(value) and abs(value) > _FLOAT32_MAX:
        return "float64"
    return "float32"


def convert(value, dtype=None, span=None):
    """``value`` as a PrimExpr: expressions pass through, numbers become constants (of ``dtype``
    when given), iteration variables their variable, buffer slices vector loads."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, _core.IterVar):
        return value.var
    to_expr = getattr(value, "as_expr", None)
    if to_expr is not None:
        return to_expr()
    if isinstance(value, (bool, int, float)):
        if dtype is not None and isinstance(value, float) and is_int(dtype):
            dtype = None  # 2.5 next to an integer stays a float; the types then match below
        if dtype is not None and isinstance(value, bool) != (element_of(dtype) == "bool"):
            dtype = None if isinstance(value, bool) else dtype
        return const(value, dtype, span)
    if hasattr(value, "dtype") and hasattr(value, "item"):  # numpy scalar
        return convert(value.item(), dtype if dtype is not None else str(value.dtype), span)
    raise TesseraTypeError(f"expected a number or an expression, got {value!r}")


def _bits(dtype):
    return _core.DataType(dtype).bits


_NUMBER_TYPES = (int, float)


def match_types(a, b, span=None):
    """Two operands as PrimExprs of one dtype: numbers take the other side's type, a scalar is
    broadcast to the other side's lanes, an integer meets a float as that float, and a narrower
    integer is widened."""
    # The common case first (an expression and a Python number): as the general path below
    # takes it, without its attribute probes.
    if type(b) in _NUMBER_TYPES and isinstance(a, PrimExpr):
        b = convert(b, _number_dtype(b, a.dtype), span)
    elif type(a) in _NUMBER_TYPES and isinstance(b, PrimExpr):
        a = convert(a, _number_dtype(a, b.dtype), span)
    else:
        a, b = _match_operands(a, b, span)
    if a.dtype == b.dtype:
        return a, b
    return _match_dtypes(a, b, span)


def _number_dtype(value, other_dtype):
    """The dtype a Python number takes against an operand of ``other_dtype``: that operand's
    element type, except that an integer other than 0 or 1 meeting a bool is an int32 (and the
    bool is then widened, as TVM's ``cond < 10``)."""
    element = element_of(other_dtype)
    if element == "bool" and type(value) is int and value not in (0, 1):
        return "int32"
    return element


def _match_operands(a, b, span):
    ea, eb = isinstance(a, PrimExpr) or isinstance(a, _core.IterVar), isinstance(b, PrimExpr) or isinstance(b, _core.IterVar)
    if hasattr(a, "as_expr"):
        a, ea = a.as_expr(), True
    if hasattr(b, "as_expr"):
        b, eb = b.as_expr(), True
    if ea and not eb:
        a = convert(a)
        b = convert(b, element_of(a.dtype), span)
    elif eb and not ea:
        b = convert(b)
        a = convert(a, element_of(b.dtype), span)
    else:
        a, b = convert(a, None, span), convert(b, None, span)
    return a, b


def _widen(dtype, value, span):
    """``value`` converted to ``dtype`` for an operator's operands: a scalar constant becomes a
    constant of ``dtype`` (as TVM's ``cast`` folds it), anything else a Cast."""
    if isinstance(value, _core.IntImm) and lanes_of(dtype) == 1:
        if is_float(dtype):
            return _core.FloatImm(dtype, float(value.value), span)
        return _core.IntImm(dtype, value.value, span)
    if isinstance(value, _core.FloatImm) and is_float(dtype) and lanes_of(dtype) == 1:
        return _core.FloatImm(dtype, value.value, span)
    if isinstance(value, _core.Broadcast) and lanes_of(dtype) == lanes_of(value.dtype):
        # As TVM's cast: a broadcast converts its scalar (T.Broadcast(0, 4) meeting float32x4
        # is T.Broadcast(T.float32(0), 4)).
        return _core.Broadcast(_widen(element_of(dtype), value.value, span), value.lanes, span)
    return _core.Cast(dtype, value, span)


def _match_dtypes(a, b, span):
    la, lb = lanes_of(a.dtype), lanes_of(b.dtype)
    if la != lb and (la == 1 or lb == 1):
        if la == 1:
            a = _core.Broadcast(a, lb, span)
        else:
            b = _core.Broadcast(b, la, span)
        if a.dtype == b.dtype:
            return a, b
    ta, tb = element_of(a.dtype), element_of(b.dtype)
    if is_float(ta) != is_float(tb):
        if is_float(ta):
            b = _widen(a.dtype, b, span)
        else:
            a = _widen(b.dtype, a, span)
        return a, b
    # As TVM's BinaryOpMatchTypes: a bool meets an integer as that integer; integers of one
    # signedness widen to the wider; signed meets unsigned as the wider, or as the unsigned
    # type at equal width.
    if ta == "bool" and is_int(tb):
        return _widen(b.dtype, a, span), b
    if is_int(ta) and tb == "bool":
        return a, _widen(a.dtype, b, span)
    if is_int(ta) and is_int(tb):
        if _bits(ta) < _bits(tb) or (_bits(ta) == _bits(tb) and tb.startswith("uint")):
            a = _widen(b.dtype, a, span)
        else:
            b = _widen(a.dtype, b, span)
        return a, b
    if is_float(ta) and is_float(tb) and ta.startswith("float") and tb.startswith("float"):
        if _bits(ta) < _bits(tb):
            a = _widen(b.dtype, a, span)
        else:
            b = _widen(a.dtype, b, span)
        return a, b
    raise TesseraTypeError(f'operand type mismatch: "{a.dtype}" vs. "{b.dtype}"')


def _call(dtype, name, args, span=None):
    return _core.Call(dtype, _core.Op.get(name), list(args), span)


def _logical(a, b, node, span):
    a, b = match_types(a, b, span)
    if element_of(a.dtype) != "bool":
        return None
    return node(a, b, span)


def add(a, b, span=None):
    """``a + b``."""
    return _core.Add.fold(*match_types(a, b, span), span)


def sub(a, b, span=None):
    """``a - b``."""
    return _core.Sub.fold(*match_types(a, b, span), span)


def mul(a, b, span=None):
    """``a * b``."""
    return _core.Mul.fold(*match_types(a, b, span), span)


def div(a, b, span=None):
    """``a / b``: true division on floats, C truncating division (``Div``) on integers."""
    return _core.Div.fold(*match_types(a, b, span), span)


def floordiv(a, b, span=None):
    """``a // b``: ``FloorDiv`` on integers, ``floor(a / b)`` on floats."""
    a, b = match_types(a, b, span)
    if is_float(a.dtype):
        return _call(a.dtype, "tir.floor", [_core.Div(a, b, span)], span)
    return _core.FloorDiv.fold(a, b, span)


def floormod(a, b, span=None):
    """``a % b``: ``FloorMod`` (the result has the divisor's sign)."""
    a, b = match_types(a, b, span)
    if is_float(a.dtype):
        return _core.Sub(a, _core.Mul(floordiv(a, b, span), b, span), span)
    return _core.FloorMod.fold(a, b, span)


def truncdiv(a, b, span=None):
    """C division rounding toward zero (``Div``)."""
    return _core.Div.fold(*match_types(a, b, span), span)


def truncmod(a, b, span=None):
    """C remainder with the dividend's sign (``Mod``)."""
    return _core.Mod.fold(*match_types(a, b, span), span)


def ceildiv(a, b, span=None):
    """``(a + b - 1) // b``, the number of ``b``-sized tiles covering ``a``."""
    a, b = match_types(a, b, span)
    one = const(1, a.dtype, span)
    # Folded as TVM's operators fold (T.ceildiv(14, 4) is 4).
    return _core.FloorDiv.fold(_core.Sub.fold(_core.Add.fold(a, b, span), one, span), b, span)


def minimum(a, b, span=None):
    """``Min(a, b)``."""
    return _core.Min.fold(*match_types(a, b, span), span)


def maximum(a, b, span=None):
    """``Max(a, b)``."""
    return _core.Max.fold(*match_types(a, b, span), span)


def power(a, b, span=None):
    """``a ** b`` as the ``tir.pow`` intrinsic."""
    a, b = match_types(a, b, span)
    return _call(a.dtype, "tir.pow", [a, b], span)


_COMPARE = {"<": _core.LT, "<=": _core.LE, ">": _core.GT, ">=": _core.GE, "==": _core.EQ, "!=": _core.NE}


def compare(op, a, b, span=None, fold=True):
    """A comparison; ``op`` is one of ``< <= > >= == !=``. Two constants fold into a bool, as
    TVM's expression operators fold them; ``fold=False`` always builds the node (TVMScript's
    comparisons, as TVM's parser builds them)."""
    node = _COMPARE[op]
    return (node.fold if fold else node)(*match_types(a, b, span), span)


def logical_and(a, b, span=None, fold=True):
    """``a and b`` on bool expressions; a constant operand folds away as in TVM's
    ``tir.all`` (``fold=False``: the node, as TVMScript's ``and``)."""
    return (_core.And.fold if fold else _core.And)(*_bools(a, b, span), span)


def logical_or(a, b, span=None, fold=True):
    """``a or b`` on bool expressions; a constant operand folds away (see :func:`logical_and`)."""
    return (_core.Or.fold if fold else _core.Or)(*_bools(a, b, span), span)


def logical_not(a, span=None, fold=True):
    """``not a`` on a bool expression (a constant folds unless ``fold=False``)."""
    a = convert(a, "bool", span)
    if element_of(a.dtype) != "bool":
        raise TesseraTypeError(f"'not' needs a bool, got {a.dtype}")
    return (_core.Not.fold if fold else _core.Not)(a, span)


def _bools(a, b, span):
    a, b = match_types(a, b, span)
    if element_of(a.dtype) != "bool":
        raise TesseraTypeError(f"'and'/'or' need bools, got {a.dtype}")
    return a, b


def _bitwise(name, logical):
    def op(a, b, span=None):
        a, b = match_types(a, b, span)
        if element_of(a.dtype) == "bool" and logical is not None:
            return logical(a, b, span)
        if not is_int(a.dtype):
            raise TesseraTypeError(f"bitwise operators need integers, got {a.dtype}")
        folded = _core.fold_intrinsic(name, a, b, span)  # two int32/int64 constants, as TVM
        return folded if folded is not None else _call(a.dtype, name, [a, b], span)

    return op


bitwise_and = _bitwise("tir.bitwise_and", _core.And)
bitwise_or = _bitwise("tir.bitwise_or", _core.Or)
bitwise_xor = _bitwise("tir.bitwise_xor", _core.NE)
shift_left = _bitwise("tir.shift_left", None)
shift_right = _bitwise("tir.shift_right", None)
bitwise_and.__doc__ = "``a & b``: bitwise on integers, logical on bools."
bitwise_or.__doc__ = "``a | b``: bitwise on integers, logical on bools."
bitwise_xor.__doc__ = "``a ^ b``: bitwise on integers, inequality on bools."
shift_left.__doc__ = "``a << b`` on integers."
shift_right.__doc__ = "``a >> b`` on integers."


def bitwise_not(a, span=None):
    """``~a``: bitwise complement of an integer, negation of a bool."""
    a = convert(a)
    if element_of(a.dtype) == "bool":
        return _core.Not(a, span)
    if not is_int(a.dtype):
        # A TypeError, and the RuntimeError that TVM raises.
        raise ArgumentTypeError(f"~ (bitwise not) needs an integer or a bool, got {a.dtype}")
    return _call(a.dtype, "tir.bitwise_not", [a], span)


def negate(a, span=None):
    """``-a``: a constant negated, otherwise ``a * -1`` as TVM builds it (``0 - a`` for unsigned
    types, where -1 does not exist)."""
    a = convert(a)
    if isinstance(a, (_core.IntImm, _core.FloatImm)) and not element_of(a.dtype).startswith(("uint", "bool")):
        return const(-a.value, a.dtype, span)
    if element_of(a.dtype).startswith(("uint", "bool")):
        return _core.Sub(const(0, a.dtype, span), a, span)
    return _core.Mul(a, const(-1, a.dtype, span), span)


def cast(value, dtype, span=None):
    """``value`` converted to ``dtype`` (a Cast node unless it already has that type)."""
    dtype = _core.canonical_dtype(str(dtype))
    if not isinstance(value, PrimExpr) and not hasattr(value, "as_expr") and not isinstance(value, _core.IterVar):
        converted = convert(value, dtype, span)
        if converted.dtype == dtype:
            return converted
        # convert keeps a float beside an integer type (2.5 + i) and a bool beside a number;
        # a cast converts them (folded below: cast(1.0, "int8") is int8 1, as tir.const)
        value = converted
    value = convert(value)
    if isinstance(value, _core.StringImm):
        raise TesseraTypeError(f"a string cannot be converted to {dtype}")
    if value.dtype == dtype:
        return value
    if lanes_of(dtype) > 1 and lanes_of(value.dtype) == 1:
        # As TVM's cast: a scalar converted to a vector type is the broadcast of its conversion.
        return _core.Broadcast(cast(value, element_of(dtype), span), lanes_of(dtype), span)
    if isinstance(value, _core.Broadcast) and lanes_of(dtype) != 1 and lanes_of(dtype) == lanes_of(value.dtype):
        # As TVM's cast: a broadcast to the same lanes converts its scalar (which may fold).
        return _core.Broadcast(cast(value.value, element_of(dtype), span), value.lanes, span)
    # As TVM's tir.cast: a scalar constant folds into a constant of the new type.
    if (isinstance(value, (_core.IntImm, _core.FloatImm)) and "x" not in dtype
            and (dtype == "bool" or dtype.startswith(("int", "uint", "float", "bfloat")))):
        v = value.value
        if dtype == "bool":
            return const(bool(v), dtype, span)
        if not dtype.startswith(("float", "bfloat")):
            v = int(v)
        try:
            return const(v, dtype, span)
        except (TesseraTypeError, TesseraValueError):
            pass  # out of range or not a plain number type: keep the Cast node
    return _core.Cast(dtype, value, span)


# ---- buffer indexing ----


def _index(value, span=None):
    if isinstance(value, (bool, int)) or (hasattr(value, "dtype") and hasattr(value, "item")):
        return const(int(value), "int32", span)
    return convert(value)


def _const_value(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, _core.IntImm) and x.dtype != "bool":
        return x.value
    return None


def extent_between(start, stop, span=None):
    """``stop - start``, folded when constant or when ``stop`` is written ``start + n``; an
    extent of ``T.vscale()`` is simplified, as TVM simplifies every loop extent
    (``T.serial(4 * T.vscale())`` runs ``T.vscale() * 4`` times)."""
    extent = _extent_between(start, stop, span)
    if isinstance(extent, PrimExpr) and _core.contains_vscale(extent):
        return _core.Analyzer().simplify(extent)
    return extent


def _extent_between(start, stop, span=None):
    lo, hi = _const_value(start), _const_value(stop)
    if lo is not None and hi is not None:
        if isinstance(stop, _core.IntImm):
            return const(hi - lo, stop.dtype, span)
        if isinstance(start, _core.IntImm):
            return const(hi - lo, start.dtype, span)
        return hi - lo
    if lo == 0:
        return stop
    if isinstance(stop, _core.Add) and isinstance(start, PrimExpr) and _core.structural_equal(stop.a, start):
        return stop.b
    if isinstance(start, PrimExpr) and isinstance(stop, PrimExpr) and _core.structural_equal(start, stop):
        return const(0, start.dtype, span)
    return sub(stop, start, span)


class BufferSlice:
    """``A[i, a:b]``: a buffer access with slices. It becomes a region (``T.reads``,
    ``T.match_buffer``) or a vector load with Ramp indices when used as a value."""

    def __init__(self, buffer, indices, span=None):
        self.buffer = buffer
        self.indices = indices  # PrimExpr or slice per dimension
        self.span = span

    def region(self):
        """The accessed region as a BufferRegion."""
        ranges = []
        for d, index in enumerate(self.indices):
            if isinstance(index, slice):
                if index.step is not None and index.step != 1:
                    raise TesseraTypeError("a region cannot have a step")
                start = 0 if index.start is None else index.start
                stop = self.buffer.shape[d] if index.stop is None else index.stop
                if isinstance(start, int) and isinstance(stop, PrimExpr):
                    start = const(start, stop.dtype, self.span)
                start = _index(start, self.span)
                extent = extent_between(start, stop, self.span)
                extent = convert(extent, start.dtype, self.span)
                if not isinstance(extent, _core.IntImm):
                    # As TVM's Buffer.__getitem__: `A[i - 2 : i + 3]` has the extent 5.
                    extent = _core.simplify_expr(extent)
                ranges.append(_core.Range.from_min_extent(start, extent, self.span))
            else:
                index = _index(index, self.span)
                ranges.append(_core.Range.from_min_extent(index, const(1, index.dtype, self.span), self.span))
        return _core.BufferRegion(self.buffer, ranges, self.span)

    def indices_as_exprs(self):
        """The indices with slices as unit- or constant-stride Ramps."""
        out = []
        for d, index in enumerate(self.indices):
            if not isinstance(index, slice):
                out.append(_index(index, self.span))
                continue
            start = 0 if index.start is None else index.start
            stop = self.buffer.shape[d] if index.stop is None else index.stop
            step = 1 if index.step is None else index.step
            extent = extent_between(start, stop, self.span)
            if isinstance(extent, _core.IntImm):
                extent = extent.value
            unit_step = step == 1 if isinstance(step, int) else (
                isinstance(step, _core.IntImm) and step.value == 1)
            if (unit_step and isinstance(extent, PrimExpr)
                    and _core.scalable_lanes_factor(extent) is not None):
                # `A[0 : T.vscale() * 4]`: a scalable vector of unit stride, as TVM.
                base = _index(start, self.span)
                out.append(_core.Ramp(base, const(1, base.dtype, self.span), extent, self.span))
                continue
            if isinstance(extent, PrimExpr) and not isinstance(extent, _core.IntImm):
                # `A[i * m : (i + 1) * m]`: a length constant after simplification, as in TVM.
                simplified = _core.Analyzer().simplify(extent)
                if isinstance(simplified, _core.IntImm):
                    extent = simplified.value
            if not isinstance(extent, int):
                raise TesseraTypeError(f"a vector access needs a constant length, got {extent}")
            step_value = step.value if isinstance(step, _core.IntImm) else step
            if not isinstance(step_value, int) or step_value <= 0:
                raise TesseraTypeError("a vector access needs a constant positive step")
            lanes = (extent + step_value - 1) // step_value
            base = _index(start, self.span)
            if lanes == 1:  # as TVM: a one-element slice is its start
                out.append(base)
                continue
            out.append(_core.Ramp(base, const(step_value, base.dtype, self.span), lanes, self.span))
        return out

    def as_expr(self):
        """The vector load this slice denotes."""
        return _core.BufferLoad(self.buffer, self.indices_as_exprs(), None, self.span)

    def _structural_node(self):
        """Structural comparisons see the region (TVM's ``A[0:16]`` is a BufferRegion)."""
        return self.region()

    def __repr__(self):
        return f"BufferSlice({self.buffer.name}, {self.indices})"


class _SlicedRegion(_core.BufferRegion, BufferSlice):
    """``A[a:b, i]`` written in Python (not in TVMScript): a BufferRegion, as TVM's
    ``Buffer.__getitem__`` gives for slices without a step, that still reads as the vector load
    of a BufferSlice where a value is expected."""

    def __new__(cls, buffer, indices, span=None):
        region = BufferSlice(buffer, indices, span).region()
        self = _core.BufferRegion.__new__(cls, buffer, region.region, span)
        self.indices = indices
        return self

    def __init__(self, buffer, indices, span=None):
        pass

    def _structural_node(self):
        return self

    __repr__ = BufferSlice.__repr__


def _python_buffer_access(buffer, key):
    """``buffer[key]`` from Python code: slices without a step give a :class:`_SlicedRegion`."""
    access = buffer_access(buffer, key)
    if isinstance(access, BufferSlice) and all(
            not isinstance(k, slice) or k.step is None for k in access.indices):
        return _SlicedRegion(access.buffer, access.indices, access.span)
    return access


def buffer_access(buffer, key, span=None):
    """``buffer[key]``: a BufferLoad, or a BufferSlice when an index is a slice."""
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) != len(buffer.shape):
        raise TesseraTypeError(
            f"buffer {buffer.name} has {len(buffer.shape)} dimensions but is indexed with {len(key)}")
    if any(isinstance(k, slice) for k in key):
        return BufferSlice(buffer, list(key), span)
    return _core.BufferLoad(buffer, [_index(k, span) for k in key], None, span)


def to_region(value, span=None):
    """A BufferRegion from ``A[...]`` (point or slices), a BufferRegion, or a whole Buffer."""
    if isinstance(value, _core.BufferRegion):
        return value
    if isinstance(value, BufferSlice):
        return value.region()
    if isinstance(value, _core.BufferLoad):
        ranges = []
        for index in value.indices:
            if isinstance(index, _core.Ramp) and isinstance(index.stride, _core.IntImm) and index.stride.value == 1:
                ranges.append(_core.Range.from_min_extent(index.base, const(int(index.lanes), index.base.dtype), span))
            else:
                ranges.append(_core.Range.from_min_extent(index, const(1, index.dtype), span))
        return _core.BufferRegion(value.buffer, ranges, span)
    if isinstance(value, _core.Buffer):
        return _core.BufferRegion.full_region(value, span)
    raise TesseraTypeError(f"expected a buffer region such as A[i, 0:16], got {value!r}")


# ---- installation ----


def _binary(fn, reflected=False):
    def method(self, other):
        if not isinstance(other, (PrimExpr, bool, int, float, _core.IterVar, BufferSlice)) and not (
                hasattr(other, "dtype") and hasattr(other, "item")):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return method


def _compare_method(op):
    def method(self, other):
        if other is None and op in ("==", "!="):
            # As TVM: an expression is never compared with None (write `x is None`).
            raise TesseraValueError(f"cannot compare the expression {self} {op} None; "
                                    "use 'is None' / 'is not None' to test for a missing value")
        if not isinstance(other, (PrimExpr, bool, int, float, _core.IterVar, BufferSlice)):
            return NotImplemented
        return compare(op, self, other)

    return method


def _bool(self):
    if isinstance(self, _core.IntImm):
        return self.value != 0
    if isinstance(self, (_core.EQ, _core.NE)):
        a, b = self.a, self.b
        # Two constants compare by value (TVM folds `IntImm(2) == 2` to True); else by identity.
        if isinstance(a, (_core.IntImm, _core.FloatImm)) and isinstance(b, (_core.IntImm, _core.FloatImm)):
            same = a.value == b.value
        else:
            same = a.same_as(b)
        return same if isinstance(self, _core.EQ) else not same
    raise ExpressionUseError(
        f"the expression {self} has no Python truth value: use it as a condition inside the "
        "script (if/T.Select/T.if_then_else) or combine conditions with 'and'/'or' there")


def _equal(self, other, span=None):
    """``x.equal(y)``: the expression ``x == y`` (TVM's ``PrimExpr.equal``); constants fold, and
    so do two ``T.vscale()`` calls (to True)."""
    return compare("==", self, other, span)


def _astype(self, dtype, span=None):
    """``x.astype("float32")``: ``x`` converted to ``dtype``."""
    return cast(self, dtype, span)


def _install():
    P = PrimExpr
    P.__add__, P.__radd__ = _binary(add), _binary(add, True)
    P.__sub__, P.__rsub__ = _binary(sub), _binary(sub, True)
    P.__mul__, P.__rmul__ = _binary(mul), _binary(mul, True)
    P.__truediv__, P.__rtruediv__ = _binary(div), _binary(div, True)
    P.__floordiv__, P.__rfloordiv__ = _binary(floordiv), _binary(floordiv, True)
    P.__mod__, P.__rmod__ = _binary(floormod), _binary(floormod, True)
    P.__pow__, P.__rpow__ = _binary(power), _binary(power, True)
    P.__and__, P.__rand__ = _binary(bitwise_and), _binary(bitwise_and, True)
    P.__or__, P.__ror__ = _binary(bitwise_or), _binary(bitwise_or, True)
    P.__xor__, P.__rxor__ = _binary(bitwise_xor), _binary(bitwise_xor, True)
    P.__lshift__, P.__rlshift__ = _binary(shift_left), _binary(shift_left, True)
    P.__rshift__, P.__rrshift__ = _binary(shift_right), _binary(shift_right, True)
    for op, name in (("<", "__lt__"), ("<=", "__le__"), (">", "__gt__"), (">=", "__ge__"),
                     ("==", "__eq__"), ("!=", "__ne__")):
        setattr(P, name, _compare_method(op))
    P.__hash__ = lambda self: id(self)
    # A constant hashes by value (as in TVM) and compares by value (_bool), so that IntImm
    # decisions and extents work as dict keys and in `in` tests.
    _core.IntImm.__hash__ = lambda self: hash(self.value)
    P.__neg__ = lambda self: negate(self)
    P.__pos__ = lambda self: self
    P.__invert__ = lambda self: bitwise_not(self)
    P.__bool__ = _bool
    P.astype = _astype
    P.equal = _equal
    _core.Buffer.__getitem__ = _python_buffer_access
    _core.IterVar.__hash__ = lambda self: id(self)
    # As TVM: a string constant equals its Python string (annotation values read back).
    _core.StringImm.__eq__ = _string_eq
    _core.StringImm.__ne__ = lambda self, other: not _string_eq(self, other)
    _core.StringImm.__hash__ = lambda self: hash(self.value)


def _string_eq(self, other):
    if isinstance(other, str):
        return self.value == other
    if isinstance(other, _core.StringImm):
        return self.value == other.value
    return False


_install()
