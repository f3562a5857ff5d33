"""Expression builtins of the T dialect: types, constants, casts, arithmetic and intrinsics.

They work on PrimExprs inside and outside ``@T.prim_func`` (``T.exp(x)`` builds a Call node
wherever ``x`` is an expression).
"""

import math

from ... import _core
from ...error import TesseraTypeError, TesseraValueError
from ...tir import expr_ops
from ...tir.expr_ops import convert
from . import _state


def builtin(fn):
    """Marks a function as a T.* builtin: the parser checks its arguments against its signature
    and reports a wrong call at the call's line."""
    fn._tessera_builtin = True
    return fn


# ---- types ----


class DType:
    """A TIR type: an annotation (``n: T.int32``) and a constructor.

    ``T.int32(5)`` is a constant, ``T.int32(x)`` a cast of ``x``, ``T.int32()`` declares a
    symbolic variable (``M = T.int32()``) and ``T.int32(is_size_var=True)`` a non-negative one.
    """

    _tessera_builtin = True

    def __init__(self, name):
        self.name = name

    def __call__(self, value=None, is_size_var=False, *, span=None):
        if value is None:
            name = _state.take_name("v")
            if is_size_var:
                return _state.declared(_core.SizeVar(name, self.name, span))
            return _state.declared(_core.Var(name, self.name, span))
        if isinstance(value, str):
            if not expr_ops.is_float(self.name):
                raise TesseraTypeError(f"T.{self.name}() of the string {value!r}")
            return expr_ops.const(float(value), self.name, span)
        return expr_ops.cast(value, self.name, span)

    def __repr__(self):
        return f"T.{self.name}"

    def __eq__(self, other):
        return isinstance(other, DType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class HandleType(DType):
    """``T.handle``: an opaque pointer parameter (``a: T.handle``); ``T.handle("float32",
    "shared")`` declares a pointer variable to typed memory in a scope."""

    def __init__(self):
        super().__init__("handle")

    def __call__(self, dtype=None, storage_scope="global", is_size_var=False, *, scope=None,
                 span=None):
        # TVM names the second argument ``storage_scope``; ``scope=`` is accepted as well.
        if scope is not None:
            storage_scope = scope
        name = _state.take_name("v")
        if dtype is None:
            return _state.declared(_core.Var(name, "handle", span))
        if isinstance(dtype, DType):
            dtype = dtype.name
        return _state.declared(_core.Var.pointer(name, _core.canonical_dtype(dtype), storage_scope,
                                                  span))

    def __getitem__(self, dtype):
        """``T.Ptr[T.float32]`` (TVM's spelling of a pointer annotation): ``T.handle("float32")``;
        ``T.Ptr[T.float32, "shared"]`` names the scope too."""
        if isinstance(dtype, tuple):
            return self(*dtype)
        return self(dtype)

    def __repr__(self):
        return "T.handle"


_SCALARS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "bfloat16", "float8_e3m4", "float8_e4m3",
            "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
            "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
TYPES = {name: DType(name) for name in _SCALARS}
TYPES["void"] = DType("void")
handle = HandleType()


def dtype_of(name):
    """The DType for a dtype name such as ``"float32x4"`` (created on first use)."""
    name = _core.canonical_dtype(name)
    if name not in TYPES:
        TYPES[name] = DType(name)
    return TYPES[name]


def dtype_name(value):
    """A dtype string from a DType or a string."""
    if isinstance(value, DType):
        return value.name
    if isinstance(value, str):
        return _core.canonical_dtype(value)
    raise TesseraTypeError(f"expected a dtype such as \"float32\" or T.float32, got {value!r}")


# ---- casts and selection ----


@builtin
def llvm_lookup_intrinsic_id(name):
    """``T.llvm_lookup_intrinsic_id("llvm.ctpop.i8")``: what identifies an LLVM intrinsic in
    ``T.call_llvm_intrin``/``T.call_llvm_pure_intrin``. tessera does not link LLVM and has no
    table of LLVM's numeric ids: an intrinsic is identified by its name, which this returns (the
    call prints with the name, as TVM prints it)."""
    if not isinstance(name, str):
        raise TesseraTypeError(f"llvm_lookup_intrinsic_id takes the intrinsic's name, got {name!r}")
    if not name.startswith("llvm."):
        raise TesseraValueError(f"unknown LLVM intrinsic {name!r}: LLVM intrinsic names start with 'llvm.'")
    return name


@builtin
def Cast(dtype, value, *, span=None):
    """``T.Cast("float32", x)``: a Cast node (kept even when the type already matches)."""
    return _core.Cast(dtype_name(dtype), convert(value), span)


@builtin
def cast(value, dtype, *, span=None):
    """``T.cast(x, "float32")``: ``x`` converted to ``dtype`` (no node when it already is)."""
    return expr_ops.cast(value, dtype_name(dtype), span)


@builtin
def reinterpret(dtype, value, *, span=None):
    """``T.reinterpret("int32", x)``: the bits of ``x`` read as ``dtype`` (``x`` itself when it
    already has that type, as TVM folds it)."""
    value = convert(value)
    if value.dtype == dtype_name(dtype):
        return value
    return _core.Call(dtype_name(dtype), _core.Op.get("tir.reinterpret"), [value], span)


@builtin
def Select(condition, true_value, false_value, *, span=None):
    """``T.Select(c, a, b)``: ``c ? a : b`` with both sides evaluated."""
    a, b = expr_ops.match_types(true_value, false_value, span)
    return _core.Select(convert(condition, "bool"), a, b, span)


@builtin
def if_then_else(condition, true_value, false_value, *, span=None):
    """``T.if_then_else(c, a, b)``: ``c ? a : b`` evaluating only the chosen side; a constant
    condition chooses at once, as TVM's ``tir.if_then_else`` does."""
    a, b = expr_ops.match_types(true_value, false_value, span)
    condition = convert(condition, "bool")
    if expr_ops.element_of(condition.dtype) != "bool":
        raise TesseraTypeError(f"if_then_else needs a bool condition, got {condition.dtype}")
    if isinstance(condition, _core.IntImm):
        return a if condition.value else b
    return _core.Call(a.dtype, _core.Op.get("tir.if_then_else"), [condition, a, b], span)


# ---- arithmetic ----


@builtin
def min(a, b, *, span=None):  # noqa: A001 - the T.min of TVMScript
    """``T.min(a, b)``."""
    return expr_ops.minimum(a, b, span)


@builtin
def max(a, b, *, span=None):  # noqa: A001
    """``T.max(a, b)``."""
    return expr_ops.maximum(a, b, span)


@builtin
def floordiv(a, b, *, span=None):
    """``T.floordiv(a, b)``: division rounding toward negative infinity."""
    return expr_ops.floordiv(a, b, span)


@builtin
def floormod(a, b, *, span=None):
    """``T.floormod(a, b)``: remainder with the divisor's sign."""
    return expr_ops.floormod(a, b, span)


@builtin
def truncdiv(a, b, *, span=None):
    """``T.truncdiv(a, b)``: C division rounding toward zero."""
    return expr_ops.truncdiv(a, b, span)


@builtin
def truncmod(a, b, *, span=None):
    """``T.truncmod(a, b)``: C remainder."""
    return expr_ops.truncmod(a, b, span)


@builtin
def ceildiv(a, b, *, span=None):
    """``T.ceildiv(a, b)``: ``(a + b - 1) // b``."""
    return expr_ops.ceildiv(a, b, span)


@builtin
def Div(a, b, *, span=None):
    """``T.Div(a, b)``: the Div node (truncating on integers; constants do not fold)."""
    return _core.Div(*expr_ops.match_types(a, b, span), span)


@builtin
def Mod(a, b, *, span=None):
    """``T.Mod(a, b)``: the Mod node (C remainder; constants do not fold)."""
    return _core.Mod(*expr_ops.match_types(a, b, span), span)


@builtin
def FloorDiv(a, b, *, span=None):
    """``T.FloorDiv(a, b)``."""
    return _core.FloorDiv(*expr_ops.match_types(a, b, span), span)


@builtin
def FloorMod(a, b, *, span=None):
    """``T.FloorMod(a, b)``."""
    return _core.FloorMod(*expr_ops.match_types(a, b, span), span)


@builtin
def Add(a, b, *, span=None):
    """``T.Add(a, b)``: the node (TVM's node constructor: constants do not fold)."""
    return _core.Add(*expr_ops.match_types(a, b, span), span)


@builtin
def Sub(a, b, *, span=None):
    """``T.Sub(a, b)``: the node (TVM's node constructor: constants do not fold)."""
    return _core.Sub(*expr_ops.match_types(a, b, span), span)


@builtin
def Mul(a, b, *, span=None):
    """``T.Mul(a, b)``: the node (TVM's node constructor: constants do not fold)."""
    return _core.Mul(*expr_ops.match_types(a, b, span), span)


@builtin
def Min(a, b, *, span=None):
    """``T.Min(a, b)``: the node (TVM's node constructor: constants do not fold)."""
    return _core.Min(*expr_ops.match_types(a, b, span), span)


@builtin
def Max(a, b, *, span=None):
    """``T.Max(a, b)``: the node (TVM's node constructor: constants do not fold)."""
    return _core.Max(*expr_ops.match_types(a, b, span), span)


@builtin
def Not(a, *, span=None):
    """``T.Not(a)``: logical negation."""
    return expr_ops.logical_not(a, span, fold=False)  # TVM's node constructor


@builtin
def And(a, b, *, span=None):
    """``T.And(a, b)``: logical and."""
    return expr_ops.logical_and(a, b, span, fold=False)  # TVM's node constructor


@builtin
def Or(a, b, *, span=None):
    """``T.Or(a, b)``: logical or."""
    return expr_ops.logical_or(a, b, span, fold=False)  # TVM's node constructor


@builtin
def bitwise_and(a, b, *, span=None):
    """``T.bitwise_and(a, b)``."""
    return expr_ops.bitwise_and(a, b, span)


@builtin
def bitwise_or(a, b, *, span=None):
    """``T.bitwise_or(a, b)``."""
    return expr_ops.bitwise_or(a, b, span)


@builtin
def bitwise_xor(a, b, *, span=None):
    """``T.bitwise_xor(a, b)``."""
    return expr_ops.bitwise_xor(a, b, span)


@builtin
def bitwise_not(a, *, span=None):
    """``T.bitwise_not(a)``."""
    return expr_ops.bitwise_not(a, span)


@builtin
def shift_left(a, b, *, span=None):
    """``T.shift_left(a, b)``: ``a << b``."""
    return expr_ops.shift_left(a, b, span)


@builtin
def shift_right(a, b, *, span=None):
    """``T.shift_right(a, b)``: ``a >> b``."""
    return expr_ops.shift_right(a, b, span)


# ---- intrinsics ----

_BOOL_RESULT = {"tir.isnan", "tir.isinf", "tir.isfinite", "tir.likely", "tir.assume"}
_HANDLE_RESULT = {"tir.address_of"}
# Ops whose result has the type of an operand other than the first: (mask, value, ...).
_TYPE_OF_ARG = {"tir.tvm_warp_shuffle": 1, "tir.tvm_warp_shuffle_down": 1}


def call_op(name, args, dtype=None, *, span=None):
    """A Call of the registered op ``name``; the dtype follows the first argument unless given."""
    if not _core.Op.exists(name):
        raise TesseraValueError(f"unknown intrinsic '{name}'")
    # String operands (a reducer's name, a memory scope) are StringImm.
    exprs = [_core.StringImm(a) if isinstance(a, str) else convert(a) for a in args]
    if dtype is None:
        if name in _BOOL_RESULT:
            dtype = "bool"
        elif name in _HANDLE_RESULT:
            dtype = "handle"
        elif name in _TYPE_OF_ARG and len(exprs) > _TYPE_OF_ARG[name]:
            dtype = exprs[_TYPE_OF_ARG[name]].dtype
        elif exprs:
            dtype = exprs[0].dtype
        else:
            dtype = "int32"
    return _core.Call(dtype, _core.Op.get(name), exprs, span)


_ROUNDING = {"floor": math.floor, "ceil": math.ceil, "round": round, "nearbyint": round,
             "trunc": math.trunc}


def _fold_unary(name, x):
    """As TVM's tir.floor/ceil/round/nearbyint/trunc/abs/likely: an integer operand of a
    rounding function is itself, and a scalar constant folds; None when nothing folds."""
    if name in _ROUNDING:
        if expr_ops.is_int(x.dtype) or expr_ops.element_of(x.dtype) == "bool":
            return x
        if isinstance(x, _core.FloatImm) and math.isfinite(x.value):
            return _core.FloatImm(x.dtype, float(_ROUNDING[name](x.value)))  # round: half to even
    elif name == "abs":
        if isinstance(x, _core.IntImm) and expr_ops.element_of(x.dtype) != "bool":
            return _core.IntImm(x.dtype, abs(x.value))
        if isinstance(x, _core.FloatImm):
            return _core.FloatImm(x.dtype, abs(x.value))
        if expr_ops.element_of(x.dtype).startswith("uint"):
            return x
    elif name == "likely" and isinstance(x, _core.IntImm):
        return x
    elif name in ("isnan", "isinf", "isfinite"):
        # An integer is never NaN or infinite; a constant is classified at once.
        lanes = expr_ops.lanes_of(x.dtype)
        value = None
        if expr_ops.is_int(x.dtype):
            value = name == "isfinite"
        elif isinstance(x, _core.FloatImm):
            value = {"isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite}[name](x.value)
        if value is not None:
            c = _core.IntImm("bool", int(value))
            return c if lanes == 1 else _core.Broadcast(c, lanes)
    return None


def _math(name, arity=1):
    op = "tir." + name

    if arity == 1 and name in ("likely", "assume"):
        def fn(cond=None, *, span=None):  # TVM's parameter name
            x = convert(cond)
            folded = _fold_unary(name, x)
            return folded if folded is not None else call_op(op, [x], span=span)
    elif arity == 1:
        def fn(x, *, span=None):
            x = convert(x)
            folded = _fold_unary(name, x)
            if folded is not None:
                return folded
            if name == "isnan" and expr_ops.is_float(x.dtype) and expr_ops._bits(x.dtype) == 16:
                # As TVM: a 16-bit float is tested as float32.
                x = expr_ops.cast(x, x.dtype.replace("bfloat16", "float32").replace("float16", "float32"), span)
            if name == "clz":  # as TVM: the count is an int32 whatever the operand's width
                lanes = _core.DataType(str(x.dtype)).lanes
                return call_op(op, [x], "int32" if lanes == 1 else f"int32x{lanes}", span=span)
            return call_op(op, [x], span=span)
    else:
        def fn(x, y, *, span=None):
            return call_op(op, list(expr_ops.match_types(x, y, span)), span=span)

    fn.__name__ = name
    fn.__doc__ = f"``T.{name}``: the ``{op}`` intrinsic."
    return builtin(fn)


_UNARY_MATH = ["exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
               "tanh", "sigmoid", "erf", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
               "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "round", "trunc", "fabs",
               "nearbyint", "abs", "isnan", "isinf", "isfinite", "popcount", "clz", "likely",
               "assume"]
_BINARY_MATH = ["pow", "atan2", "fmod", "hypot", "copysign", "nextafter", "ldexp"]
MATH = {name: _math(name) for name in _UNARY_MATH}
MATH.update({name: _math(name, 2) for name in _BINARY_MATH})


@builtin
def ret(value, *, span=None):
    """``T.ret(x)``: the value returned by the function (``return x`` in a script)."""
    return call_op("tir.ret", [value], span=span)


@builtin
def call_extern(dtype, func_name, *args, span=None):
    """``T.call_extern("float32", "expf", x)``: a call of an external C function."""
    return _core.Call(dtype_name(dtype), _core.Op.get("tir.call_extern"),
                      [_core.StringImm(func_name)] + [convert(a) for a in args], span)


@builtin
def call_pure_extern(dtype, func_name, *args, span=None):
    """``T.call_pure_extern("float32", "expf", x)``: a call of a side-effect-free C function."""
    return _core.Call(dtype_name(dtype), _core.Op.get("tir.call_pure_extern"),
                      [_core.StringImm(func_name)] + [convert(a) for a in args], span)


@builtin
def call_intrin(dtype, op_name, *args, span=None):
    """``T.call_intrin("int32x4", "my.op", a, b)``: a call of any registered op."""
    args = [_core.StringImm(a) if isinstance(a, str) else a for a in args]
    return call_op(op_name, args, dtype_name(dtype), span=span)


@builtin
def const_pred(mask, *, span=None):
    """``T.const_pred("15T1FT14F1T")`` or ``T.const_pred([True, False, ...])``: a constant bool
    vector of the mask's lanes (the DSL's constant mask, as the printer shows it). A string is
    read with the DSL's mask-string grammar (``tessera.dsl.masks``)."""
    if isinstance(mask, str):
        from ...dsl.masks import MaskStringError, parse_mask_string

        try:
            lanes = parse_mask_string(mask)
        except MaskStringError as err:
            raise TesseraValueError(str(err)) from None
    elif isinstance(mask, (list, tuple)) and all(
            isinstance(v, bool) or (isinstance(v, _core.IntImm) and v.dtype == "bool") for v in mask):
        lanes = [bool(v.value) if isinstance(v, _core.IntImm) else v for v in mask]
    else:
        raise TesseraTypeError(f"T.const_pred takes a mask string or a list of bools, got {mask!r}")
    if len(lanes) < 2:
        raise TesseraValueError(f"T.const_pred needs at least 2 lanes, got {len(lanes)}")
    return _core.Call(f"boolx{len(lanes)}", _core.Op.get("dsl.const_mask"),
                      [_core.IntImm("bool", int(v)) for v in lanes], span)


@builtin
def address_of(load, *, span=None):
    """``T.address_of(A[i])``: the address of a buffer element (of ``A[0, ..., 0]`` for a
    buffer ``A``, as TVM)."""
    if isinstance(load, _core.Buffer):
        load = _core.BufferLoad(load, [expr_ops.const(0, "int32", span) for _ in load.shape], None, span)
    load = convert(load)
    if not isinstance(load, _core.BufferLoad):
        raise TesseraTypeError("T.address_of takes a buffer element such as A[i]")
    return _core.Call("handle", _core.Op.get("tir.address_of"), [load], span)


# ---- vectors, lets, ranges ----


@builtin
def Ramp(base, stride, lanes, *, span=None):
    """``T.Ramp(base, stride, lanes)``: ``[base, base + stride, ...]``."""
    base = convert(base)
    return _core.Ramp(base, convert(stride, base.dtype), _vector_lanes(lanes), span)


@builtin
def Broadcast(value, lanes, *, span=None):
    """``T.Broadcast(v, lanes)``: ``v`` in every lane."""
    return _core.Broadcast(convert(value), _vector_lanes(lanes), span)


def _vector_lanes(lanes):
    """The lanes of T.Ramp/T.Broadcast: an int, or the expression T.vscale() * k of a scalable
    vector (passed on; the node constructor checks its form)."""
    if isinstance(lanes, _core.IntImm):
        return lanes.value
    if isinstance(lanes, _core.PrimExpr):
        return lanes
    return int(lanes)


@builtin
def Shuffle(vectors, indices, *, span=None):
    """``T.Shuffle([a, b], [0, 5])``: lanes picked from the concatenated vectors."""
    return _core.Shuffle([convert(v) for v in vectors], [convert(i) for i in indices], span)


@builtin
def let(var, value, body, *, span=None):
    """``T.let(v, value, body)``: the Let expression."""
    value = convert(value)
    return _core.Let(var, value, convert(body), span)


@builtin
def Let(var, value, body, *, span=None):
    """``T.Let(v, value, body)``: the Let expression."""
    return let(var, value, body, span)


@builtin
def Range(begin, end=None, *, span=None):
    """``T.Range(begin, end)``: the half-open range [begin, end)."""
    if end is None:
        begin, end = 0, begin
    if isinstance(begin, int) and isinstance(end, _core.PrimExpr):
        begin = expr_ops.const(begin, end.dtype)
    begin = convert(begin)
    extent = convert(expr_ops.extent_between(begin, end), begin.dtype)
    return _core.Range.from_min_extent(begin, extent, span)


@builtin
def iter_var(var, dom, iter_type, thread_tag="", *, span=None):
    """``T.iter_var(v, T.Range(0, 4), "DataPar", "")``: an IterVar object."""
    if isinstance(dom, (tuple, list)):
        dom = Range(*dom)
    kind = getattr(_core.IterVarType, iter_type) if isinstance(iter_type, str) else iter_type
    return _core.IterVar(dom, var, kind, thread_tag, span)


@builtin
def infinity(dtype, *, span=None):
    """``T.infinity("float32")``: +inf of a float type."""
    return expr_ops.const(math.inf, dtype_name(dtype), span)


@builtin
def max_value(dtype, *, span=None):
    """The largest value of ``dtype``."""
    name = dtype_name(dtype)
    t = _core.DataType(name)
    if expr_ops.is_float(name):
        return expr_ops.const({16: 65504.0, 32: 3.4028234663852886e38, 64: 1.7976931348623157e308}[t.bits], name, span)
    if name.startswith("uint"):
        return expr_ops.const((1 << t.bits) - 1, name, span)
    return expr_ops.const((1 << (t.bits - 1)) - 1, name, span)


@builtin
def min_value(dtype, *, span=None):
    """The smallest value of ``dtype``."""
    name = dtype_name(dtype)
    t = _core.DataType(name)
    if expr_ops.is_float(name):
        return expr_ops.const(-max_value(dtype).value, name, span)
    if name.startswith("uint"):
        return expr_ops.const(0, name, span)
    return expr_ops.const(-(1 << (t.bits - 1)), name, span)


class MetaVar:
    """A Python value kept as Python in a script (``x = T.meta_var(expr)`` binds no LetStmt)."""

    def __init__(self, value):
        self.value = value

    def __iter__(self):
        """``a, b = T.meta_var([3, 4])`` run as Python (the IRBuilder): one meta_var per element."""
        return (MetaVar(v) for v in self.value)

    def __repr__(self):
        return f"T.meta_var({self.value!r})"


@builtin
def meta_var(value):
    """``T.meta_var(v)``: bind a name to ``v`` itself (an expression is inlined at every use
    instead of being bound by a LetStmt)."""
    return MetaVar(value)
