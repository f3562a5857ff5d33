"""Statement builtins of the T dialect: buffers, blocks, loops and scoped statements.

Each call acts on the IR builder of the script being parsed. Scoped statements are frames:
objects that the parser enters for the body of a ``with`` (``with T.block("B"):``) or, for
binders written as assignments (``p = T.allocate(...)``), binds over the rest of the body.
"""

from ... import _core
from ...error import TesseraTypeError, TesseraValueError
from ...tir import expr_ops
from ...tir.expr_ops import convert
from . import _state
from .ops import DType, builtin, dtype_name

# ---- values ----


def to_attr(value):
    """A Python value as an IR attribute value (IntImm, FloatImm, StringImm, Array, ...)."""
    if isinstance(value, _core.Object):
        return value
    if isinstance(value, bool):
        return _core.IntImm("bool", int(value))
    if isinstance(value, int):
        return _core.IntImm("int32" if -(2**31) <= value < 2**31 else "int64", value)
    if isinstance(value, float):
        return _core.FloatImm("float32", value)
    if isinstance(value, str):
        return _core.StringImm(value)
    if isinstance(value, (list, tuple)):
        return _core.Array([to_attr(v) for v in value])
    if isinstance(value, dict):
        return _core.Map(to_attrs(value))
    if isinstance(value, DType):
        return _core.StringImm(value.name)
    if hasattr(value, "as_expr"):
        return value.as_expr()
    from ...target import Target

    if isinstance(value, Target):  # as T.target(...): the dict of its settings
        return to_attr(value.export())
    raise TesseraTypeError(f"cannot use {value!r} as an attribute value")


def to_attrs(mapping):
    """A dict of attribute values, keys as strings."""
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise TesseraTypeError(f"expected a dict of attributes, got {mapping!r}")
    return {str(k): to_attr(v) for k, v in mapping.items()}


def _shape(shape):
    if isinstance(shape, (int, _core.PrimExpr)):
        shape = (shape,)
    if isinstance(shape, str):  # "(128, 128)": a string, not a shape (each letter would be a var)
        raise TesseraTypeError(f"a shape is a tuple or list of extents, got the string {shape!r}")
    # As in TVM, a string names a new int32 variable (`strides=("A_s0",)`).
    shape = [_core.Var(s, "int32") if isinstance(s, str) else s for s in shape]
    return [expr_ops.convert(s, "int32") if isinstance(s, int) else convert(s) for s in shape]


def _align(align):
    return 64 if align is None or align == -1 else int(align)


def _factor(offset_factor):
    return 1 if offset_factor is None or offset_factor == 0 else int(offset_factor)


def make_buffer(name, shape, dtype="float32", data=None, strides=None, elem_offset=None,
                scope="global", align=-1, offset_factor=0, span=None, axis_separators=None):
    """A Buffer with a fresh data pointer (or over ``data``); ``axis_separators`` as TVM's."""
    dtype = dtype_name(dtype)
    shape = _shape(shape)
    if data is None:
        # As TVM: an empty scope is the global one.
        data = _core.Var.pointer(name, dtype, scope or "global", span)
    elif not isinstance(data, _core.Var) or data.pointer_element is None:
        raise TesseraTypeError(f"data= of buffer {name} must be a pointer variable, got {data!r}")
    strides = [] if strides is None else _shape(strides)
    if elem_offset is not None:
        elem_offset = convert(elem_offset, "int32")
    return _core.Buffer(data, dtype, shape, strides, elem_offset, name, _align(align), _factor(offset_factor), span,
                        _axis_separators(axis_separators, len(shape), name))


def _axis_separators(seps, ndim, name):
    out = [int(s.value) if isinstance(s, _core.IntImm) else int(s) for s in (seps or [])]
    for s in out:
        # TVM allows a separator at 0 (a view of lower rank keeps its backing buffer's count).
        if s < 0 or (ndim and s > ndim):
            raise TesseraValueError(f"axis_separators of buffer {name} must lie in [0, {ndim}], got {out}")
    return out


class _BufferBuiltin:
    """``T.Buffer((M, N), "float32")``: a buffer parameter annotation, or a view of existing
    storage with ``data=ptr``; ``T.Buffer[(M, N), "float32"]`` is TVM's older spelling."""

    _tessera_builtin = True
    __name__ = __qualname__ = "Buffer"

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 align=-1, offset_factor=0, buffer_type="", axis_separators=None, name=None):
        name = name or _state.take_name("buffer")
        return _state.declared(make_buffer(name, shape, dtype, data, strides, elem_offset, scope, align,
                                           offset_factor, axis_separators=axis_separators))

    def __getitem__(self, key):
        return self(*(key if isinstance(key, tuple) else (key,)))

    def __repr__(self):
        return "T.Buffer"


Buffer = _BufferBuiltin()


@builtin
def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 align=-1, offset_factor=0, buffer_type="default", axis_separators=None):
    """``T.alloc_buffer((128, 128), "float32", scope="global")``: a buffer allocated by the
    enclosing block (the root block at function level)."""
    parser = _state.require("T.alloc_buffer")
    name = parser.take_name("buffer")
    if data is not None:
        raise TesseraValueError("T.alloc_buffer allocates its own storage: data= is not accepted")
    buf = make_buffer(name, shape, dtype, None, strides, elem_offset, scope, align, offset_factor,
                      axis_separators=axis_separators)
    parser.builder.alloc_buffer(buf)
    return _state.declared(buf)


@builtin
def _check_match_shape(region, shape):
    """As TVM's MatchBufferRegion: the region's trailing extents are the buffer's shape and its
    extra leading extents are 1 (checked where both sides fold to constants)."""
    extents = [r.extent for r in region.region]

    def const(e):
        e = _core.simplify_expr(e) if isinstance(e, _core.PrimExpr) else e
        return e.value if isinstance(e, _core.IntImm) else e if isinstance(e, int) else None

    def text(values):
        return "(" + ", ".join(str(v) for v in values) + ")"

    if len(extents) < len(shape):
        raise TesseraValueError(f"T.match_buffer: a region of {len(extents)} dimensions cannot be "
                                f"matched to the shape {text(shape)}")
    offset = len(extents) - len(shape)
    for e in extents[:offset]:
        if const(e) not in (None, 1):
            raise TesseraValueError(f"T.match_buffer: the region's extents {text(extents)} do not match "
                                    f"the shape {text(shape)} (the leading extra extents must be 1)")
    for e, d in zip(extents[offset:], shape):
        ce, cd = const(e), const(d)
        if ce is not None and cd is not None and ce != cd:
            raise TesseraValueError(f"T.match_buffer: the region's extents {text(extents)} do not match "
                                    f"the shape {text(shape)}")


def match_buffer(param, shape=None, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None):
    """``Img = T.match_buffer(img, (H, W), "uint8")`` binds a buffer to the handle parameter
    ``img``; inside a block, ``T.match_buffer(Img[y, 0:16], (16,))`` declares a view of a region."""
    parser = _state.require("T.match_buffer")
    name = parser.take_name("buffer")
    if elem_offset is None and offset_factor not in (None, 0):
        # As TVM: a buffer with an offset factor has a symbolic element offset, bound where the
        # buffer is matched (tensor intrinsics pass it to their calls: A.elem_offset).
        elem_offset = _core.Var(f"{name}_elem_offset", "int32")
    if isinstance(param, _core.Var):
        if not parser.is_param(param):
            raise TesseraValueError(
                f"T.match_buffer expects a handle parameter of the function or a buffer region, got the variable {param.name}")
        if param.dtype != "handle":
            raise TesseraValueError(f"T.match_buffer needs a handle parameter, but {param.name} is {param.dtype}")
        if parser.builder.depth != 1:
            raise TesseraValueError("T.match_buffer of a parameter must be at the top of the function")
        if shape is None:
            raise TesseraValueError("T.match_buffer of a parameter needs a shape")
        if parser.param_matched(param):
            raise TesseraValueError(f"parameter {param.name} is already matched to a buffer")
        buf = make_buffer(name, shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                          axis_separators=axis_separators)
        parser.builder.bind_param_buffer(param, buf)
        parser.set_param_matched(param)
        return _state.declared(buf)
    if isinstance(param, (expr_ops.BufferSlice, _core.BufferLoad, _core.BufferRegion, _core.Buffer)):
        region = expr_ops.to_region(param)
        if not parser.builder.in_block:
            raise TesseraValueError("T.match_buffer of a region must be written directly inside a T.block")
        if shape is None:
            # As TVM: the view takes the region's extents and the source buffer's dtype.
            shape = [r.extent for r in region.region]
            dtype = region.buffer.dtype
        else:
            _check_match_shape(region, _shape(shape))
        buf = make_buffer(name, shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                          axis_separators=axis_separators)
        parser.builder.add_match_buffer(_core.MatchBufferRegion(buf, region))
        return _state.declared(buf)
    raise TesseraValueError(f"T.match_buffer expects a handle parameter or a buffer region such as A[0:16], got {param!r}")


# ---- function and block statements ----


@builtin
def func_attr(attrs):
    """``T.func_attr({"global_symbol": "f", "tir.noalias": True})``: function attributes."""
    parser = _state.require("T.func_attr")
    attrs = to_attrs(attrs)
    if "global_symbol" in attrs and getattr(parser, "private", False):
        raise TesseraValueError("a private function (@T.prim_func(private=True)) has no global_symbol; "
                                "drop private=True to name it")
    for key, value in attrs.items():
        parser.builder.set_function_attr(key, value)


@builtin
def evaluate(value):
    """``T.evaluate(expr)``: evaluate an expression for its effect."""
    parser = _state.require("T.evaluate")
    parser.builder.emit(_core.Evaluate(convert(value), parser.current_span()))


def _regions(args):
    regions = []
    for a in args:
        if isinstance(a, (list, tuple)):
            regions.extend(_regions(a))
        else:
            regions.append(expr_ops.to_region(a))
    return regions


@builtin
def reads(*regions):
    """``T.reads(A[vi, 0:16], B[vi])``: the regions a block reads (``T.reads()`` for none)."""
    _state.require("T.reads").builder.set_block_reads(_regions(regions))


@builtin
def writes(*regions):
    """``T.writes(C[vi, vj])``: the regions a block writes (``T.writes()`` for none)."""
    _state.require("T.writes").builder.set_block_writes(_regions(regions))


@builtin
def where(predicate):
    """``T.where(i * 4 + j < 10)``: the block runs only where the predicate holds."""
    _state.require("T.where").builder.set_block_predicate(convert(predicate, "bool"))


@builtin
def block_attr(attrs):
    """``T.block_attr({"meta_schedule.auto_tensorize": "x"})``: block annotations."""
    _state.require("T.block_attr").builder.set_block_attrs(to_attrs(attrs))


def _builder_for(what):
    """The active imperative IRBuilder (``tessera.script.ir_builder``), for a frame that Python
    itself enters (a ``with`` run as Python, not parsed)."""
    builder = _state.current()
    if builder is None or not hasattr(builder, "enter_frame"):
        raise TesseraValueError(
            f"'with {what}' runs as Python only under an IRBuilder (with tessera.script.ir_builder."
            "IRBuilder() as ib: ...); otherwise write it inside a @T.prim_func")
    return builder


class Frame:
    """A scoped statement: ``enter`` before the ``with`` body, ``exit`` after it.

    The parser calls ``enter``/``exit`` for a ``with`` in a script; under an imperative
    IRBuilder, Python's own ``with`` does (``__enter__``/``__exit__``).
    """

    def __enter__(self):
        return _builder_for(type(self).__name__).enter_frame(self)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            _builder_for(type(self).__name__).exit_frame(self)
        return False

    def enter(self, parser, node, name):
        raise NotImplementedError

    def exit(self, parser):
        raise NotImplementedError

    def assign(self, parser, node, name):
        """Bind over the rest of the enclosing body (``p = T.allocate(...)``)."""
        raise TesseraValueError(f"{type(self).__name__} cannot be assigned; use it in a 'with'")


class BlockFrame(Frame):
    """``with T.block("name"):``."""

    def __init__(self, name, no_realize):
        self.name = name
        self.no_realize = no_realize

    def enter(self, parser, node, name):
        if name is not None:
            raise TesseraValueError(f"'with T.block(...) as {name}': a block binds no name with 'as' "
                                    "(its iterators come from T.axis)")
        parser.begin_block(self.name, self.no_realize, node)

    def exit(self, parser):
        parser.end_block()


@builtin
def block(name_hint="", no_realize=False, *, name=None):
    """``with T.block("C"):``: a block; its iterators come from ``T.axis``
    (``T.block(name="C")`` as TVM spells the keyword)."""
    return BlockFrame(name_hint if name is None else name, no_realize)


class InitFrame(Frame):
    """``with T.init():`` inside a block."""

    def enter(self, parser, node, name):
        parser.builder.begin_init(parser.span(node))

    def exit(self, parser):
        parser.builder.end_init()


@builtin
def init():
    """``with T.init():``: the block's reduction initialisation."""
    return InitFrame()


class _BinderFrame(Frame):
    """A binder over the with-body (``with``) or over the rest of the body (assignment)."""

    def make_binder(self, parser, node, name):
        """(value bound to the name, binder function)."""
        raise NotImplementedError

    def enter(self, parser, node, name):
        value, binders = self.make_binder(parser, node, name)
        parser.builder.begin_scope()
        for b in binders:
            parser.builder.emit_binder(b)
        return value

    def exit(self, parser):
        parser.builder.end_scope()

    def assign(self, parser, node, name):
        value, binders = self.make_binder(parser, node, name)
        for b in binders:
            parser.builder.emit_binder(b)
        return value


class LetFrame(_BinderFrame):
    """``with T.LetStmt(value) as x:``."""

    def __init__(self, value, type_annotation, var):
        self.value = value
        self.type_annotation = type_annotation
        self.var = var

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        value = convert(self.value)
        var = self.var
        if var is None:
            ann = self.type_annotation
            if isinstance(ann, _core.Var) and ann.pointer_element is not None:
                var = _core.Var.pointer(name or "v", ann.pointer_element, ann.scope, span)
            else:
                var = _core.Var(name or "v", value.dtype if ann is None else dtype_name(ann), span)
        return var, [lambda body: _core.LetStmt(var, value, body, span)]


@builtin
def LetStmt(value, type_annotation=None, *, var=None):
    """``with T.LetStmt(value) as x:``: bind ``x`` to ``value`` for the body."""
    return LetFrame(value, type_annotation, var)


class AllocateFrame(_BinderFrame):
    """``with T.allocate([n], "float32", "global") as p:`` or ``p = T.allocate(...)``."""

    def __init__(self, extents, dtype, scope, condition, annotations):
        self.extents = extents
        self.dtype = dtype_name(dtype)
        self.scope = scope
        self.condition = condition
        self.annotations = annotations

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        var = _core.Var.pointer(name or "", self.dtype, self.scope, span)  # unnamed: printed "v", as TVM
        extents = _shape(self.extents)
        condition = None if self.condition is None else convert(self.condition, "bool")
        attrs = to_attrs(self.annotations)
        dtype = self.dtype
        return var, [lambda body: _core.Allocate(var, dtype, extents, condition, body, attrs, span)]


@builtin
def allocate(extents, dtype, scope="global", condition=None, annotations=None):
    """``p = T.allocate([128], "float32", "shared")``: low-level storage behind pointer ``p``."""
    return AllocateFrame(extents, dtype, scope, condition, annotations)


class AllocateConstFrame(_BinderFrame):
    """``p = T.allocate_const([1, 2, 3, 4], "int32", [4])`` or ``with T.allocate_const(...) as p:``."""

    def __init__(self, data, dtype, extents, annotations):
        from ...tir._constructors import const_data_bytes

        self.dtype = dtype_name(dtype)
        self.extents = _shape(extents)
        self.data = const_data_bytes(data, self.dtype, self.extents)
        self.annotations = annotations

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        var = _core.Var.pointer(name or "v", self.dtype, "global", span)
        attrs = to_attrs(self.annotations)
        dtype, extents, data = self.dtype, self.extents, self.data
        return var, [lambda body: _core.AllocateConst(var, dtype, extents, data, body, attrs, span)]


@builtin
def allocate_const(data, dtype, extents, annotations=None):
    """``p = T.allocate_const([1.0, 2.0], "float32", [2])``: constant storage behind pointer
    ``p``, its data embedded in the generated code."""
    return AllocateConstFrame(data, dtype, extents, annotations)


class DeclBufferFrame(_BinderFrame):
    """``A = T.decl_buffer((16,), "float32", data=p)``; without ``data`` it also allocates."""

    def __init__(self, kwargs):
        self.kwargs = kwargs

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        kw = dict(self.kwargs)
        buf = make_buffer(name or "buffer", kw.pop("shape"), span=span, **kw)
        binders = []
        if self.kwargs.get("data") is None:
            data = buf.data
            extents = list(buf.shape) if buf.shape else [expr_ops.const(1, "int32")]
            binders.append(lambda body: _core.Allocate(data, buf.dtype, extents, None, body, {}, span))
        binders.append(lambda body: _core.DeclBuffer(buf, body, span))
        return buf, binders


@builtin
def decl_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                align=-1, offset_factor=0, buffer_type="default", axis_separators=None):
    """``A = T.decl_buffer((16,), "float32", data=p)``: declare a buffer over ``data`` (or over
    fresh storage) for the rest of the body; also usable as ``with T.decl_buffer(...) as A:``.
    The positional order is TVM's: shape, dtype, data, strides, elem_offset, scope."""
    return DeclBufferFrame(dict(shape=shape, dtype=dtype, scope=scope, data=data, strides=strides,
                                elem_offset=elem_offset, align=align, offset_factor=offset_factor,
                                axis_separators=axis_separators))


class AssertFrame(_BinderFrame):
    """``with T.Assert(cond, "message"):``."""

    def __init__(self, condition, message):
        self.condition = condition
        self.message = message

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        cond = convert(self.condition, "bool")
        msg = _core.StringImm(self.message) if isinstance(self.message, str) else convert(self.message)
        return None, [lambda body: _core.AssertStmt(cond, msg, body, span)]


@builtin
def Assert(condition, message):
    """``with T.Assert(n > 0, "n must be positive"):``: check at run time, then run the body."""
    return AssertFrame(condition, message)


class AttrFrame(_BinderFrame):
    """``with T.attr(node, "key", value):``."""

    def __init__(self, node, key, value):
        self.node = node
        self.key = key
        self.value = value

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        target = self.node
        if target is not None and not isinstance(target, _core.Object):
            target = to_attr(target)
        value = _core.StringImm(self.value) if isinstance(self.value, str) else convert(self.value)
        key = self.key
        # `bx = T.launch_thread("blockIdx.x", 4)` binds the thread's variable.
        bound = target.var if isinstance(target, _core.IterVar) else None
        return bound, [lambda body: _core.AttrStmt(target, key, value, body, span)]


@builtin
def attr(node, attr_key, value):
    """``with T.attr(node, "pragma_x", 1):``: an attribute on ``node`` for the body."""
    return AttrFrame(node, attr_key, value)


class RealizeFrame(_BinderFrame):
    """``with T.realize(A[0:128, 0:128], "scope"):``."""

    def __init__(self, region, scope, condition):
        self.region = region
        self.scope = scope
        self.condition = condition

    def assign(self, parser, node, name):
        # `T.realize(A[0:16], "")` written alone binds over the rest of the body: there must be one.
        if getattr(parser, "stmt_is_last", False):
            raise parser.error(node, "T.realize has no body: statements must follow it (or use "
                                     "'with T.realize(...):')")
        return super().assign(parser, node, name)

    def make_binder(self, parser, node, name):
        span = parser.span(node)
        region = self.region
        bounds = list(region.region)
        condition = convert(True if self.condition is None else self.condition, "bool")
        realize = [lambda body: _core.BufferRealize(region.buffer, bounds, condition, body, span)]
        if self.scope is None:
            return None, realize
        scope = _core.StringImm(self.scope)
        return None, [lambda body: _core.AttrStmt(region.buffer, "realize_scope", scope, body, span)] + realize


@builtin
def realize(buffer_slice, storage_scope=None, condition=True):
    """``with T.realize(A[0:128, 0:128], "global"):``: TVM's pre-TensorIR realization of a buffer
    region for the body (an AttrStmt "realize_scope" over a BufferRealize; without a scope, the
    BufferRealize alone, as TVM prints one). It parses, prints, compares and goes through the
    passes; tessera's lowering refuses it (allocate with T.alloc_buffer instead)."""
    if storage_scope is not None and not isinstance(storage_scope, str):
        raise TesseraTypeError(f"T.realize: the storage scope must be a string, got {storage_scope!r}")
    if isinstance(buffer_slice, _core.Buffer):
        raise TesseraTypeError(f"T.realize takes a region of a buffer such as {buffer_slice.name}[0:16], "
                               f"not the whole buffer {buffer_slice.name}")
    try:
        region = expr_ops.to_region(buffer_slice)
    except (TypeError, TesseraTypeError):
        raise TesseraTypeError(f"T.realize takes a buffer region such as A[0:16, 0:16], got {buffer_slice!r}") from None
    return RealizeFrame(region, storage_scope, condition)


@builtin
def env_thread(thread_tag, dtype="int32"):
    """``tx = T.env_thread("threadIdx.x")``: a thread index, launched with T.launch_thread."""
    name = _state.take_name(thread_tag.replace(".", "_"))
    var = _core.Var(name, dtype_name(dtype))
    return _state.declared(_core.IterVar(None, var, _core.IterVarType.ThreadIndex, thread_tag))


@builtin
def launch_thread(thread, extent):
    """``with T.launch_thread(tx, 128):``: run the body on ``extent`` threads of ``tx``."""
    if isinstance(thread, str):
        # A tag alone declares the thread with the extent's type (T.int64(1) gives an int64 thread).
        dtype = extent.dtype if isinstance(extent, _core.PrimExpr) else "int32"
        thread = env_thread(thread, dtype)
    if not isinstance(thread, _core.IterVar):
        raise TesseraTypeError(f"T.launch_thread takes a thread from T.env_thread, got {thread!r}")
    extent = convert(extent, thread.var.dtype)
    if thread.dom is None:
        # Launching gives the thread its domain [0, extent), as TVM records it on the IterVar.
        thread = _core.IterVar(_core.Range.from_min_extent(expr_ops.const(0, extent.dtype), extent),
                               thread.var, thread.iter_type, thread.thread_tag)
    key = "virtual_thread" if thread.thread_tag == "vthread" else "thread_extent"
    return AttrFrame(thread, key, extent)


# ---- block iterators ----


def _dom(dom, dtype):
    if isinstance(dom, _core.Range):
        return dom
    if isinstance(dom, (tuple, list)):
        if len(dom) != 2:
            raise TesseraValueError(f"an iterator domain is an extent or (begin, end), got {dom!r}")
        begin, end = dom
        begin = convert(begin, dtype)
        extent = convert(expr_ops.extent_between(begin, end), dtype)
        return _core.Range.from_min_extent(begin, extent)
    extent = convert(dom, dtype)
    return _core.Range.from_min_extent(expr_ops.const(0, extent.dtype), extent)


def _axis(kind, what):
    def define(dom, binding, dtype="int32"):
        parser = _state.require(what)
        value = convert(binding, dtype_name(dtype))
        name = parser.take_name("v")
        return parser.define_block_iter(name, _dom(dom, value.dtype), value, kind)

    define.__name__ = what.split(".")[-1]
    define.__doc__ = f"``v = {what}(dom, binding)``: a block iterator over ``dom`` bound to ``binding``."
    return builtin(define)


class _Axis:
    """``T.axis``: block iterator definitions."""

    spatial = staticmethod(_axis(_core.IterVarType.DataPar, "T.axis.spatial"))
    reduce = staticmethod(_axis(_core.IterVarType.CommReduce, "T.axis.reduce"))
    scan = staticmethod(_axis(_core.IterVarType.Ordered, "T.axis.scan"))
    opaque = staticmethod(_axis(_core.IterVarType.Opaque, "T.axis.opaque"))
    S = spatial
    R = reduce

    @staticmethod
    @builtin
    def remap(kinds, bindings, dtype="int32"):
        """``vy, vx, vr = T.axis.remap("SSR", [y, x, r])``: iterators over the loops' ranges."""
        parser = _state.require("T.axis.remap")
        if not isinstance(kinds, str) or any(k not in "SR" for k in kinds):
            raise TesseraValueError(
                f"T.axis.remap kinds must be a string of 'S' (spatial) and 'R' (reduce), got {kinds!r}")
        bindings = list(bindings) if isinstance(bindings, (list, tuple)) else [bindings]
        if len(kinds) != len(bindings):
            raise TesseraValueError(
                f"T.axis.remap has {len(kinds)} kinds ({kinds!r}) but {len(bindings)} bindings")
        out = []
        for kind, value in zip(kinds, bindings):
            loop = parser.loop_range(value)
            if loop is None:
                raise TesseraValueError(
                    f"T.axis.remap binds iterators to loop variables; {value} is not one")
            name = parser.take_name("v")
            iter_type = _core.IterVarType.DataPar if kind == "S" else _core.IterVarType.CommReduce
            out.append(parser.define_block_iter(name, _core.Range.from_min_extent(*loop), value, iter_type))
        return out[0] if len(out) == 1 else out


axis = _Axis()


# ---- loops ----


class LoopSpec:
    """What ``for ... in`` iterates over: one or more nested loops of one kind."""

    def __init__(self, kind, ranges, thread=None, annotations=None, step=None):
        self.kind = kind
        self.ranges = ranges  # [(start, stop)]
        self.thread = thread
        self.annotations = annotations
        # The step of a single loop (TVM v0.23's For.step): None for 1, an int or an expression.
        self.step = None if isinstance(step, int) and not isinstance(step, bool) and step == 1 else step

    def __enter__(self):
        # `with T.serial(128) as i:` under an imperative IRBuilder.
        return _builder_for("T.<loop>").enter_loop(self)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            _builder_for("T.<loop>").exit_loop(self)
        return False


def _loop(kind, name):
    def make(start, stop=None, step=None, *, annotations=None):
        if stop is None:
            start, stop = 0, start
        if isinstance(step, bool) or (step is not None and not isinstance(step, (int, _core.PrimExpr))):
            raise TesseraTypeError(f"T.{name}: the step must be an integer or an integer expression, "
                                   f"got {type(step).__name__}")
        if isinstance(step, int) and step <= 0:
            raise TesseraValueError(f"T.{name}: the step must be positive, got {step}")
        return LoopSpec(kind, [(start, stop)], annotations=annotations, step=step)

    make.__name__ = name
    make.__doc__ = (f"``for i in T.{name}(start, stop, step=None):``: a loop of kind {name} "
                    "(i = start, start + step, ... below stop).")
    return builtin(make)


serial = _loop(_core.ForKind.SERIAL, "serial")
parallel = _loop(_core.ForKind.PARALLEL, "parallel")
vectorized = _loop(_core.ForKind.VECTORIZED, "vectorized")
unroll = _loop(_core.ForKind.UNROLLED, "unroll")


@builtin
def thread_binding(start, stop=None, thread=None, *, annotations=None):
    """``for lane in T.thread_binding(32, thread="threadIdx.x"):``: a loop bound to a thread."""
    if stop is None:
        start, stop = 0, start
    if isinstance(stop, str) and thread is None:
        start, stop, thread = 0, start, stop
    if not isinstance(thread, str):
        raise TesseraValueError("T.thread_binding needs thread=\"threadIdx.x\" (or another tag)")
    return LoopSpec(_core.ForKind.THREAD_BINDING, [(start, stop)], thread=thread, annotations=annotations)


@builtin
def grid(*extents):
    """``for y, x, c in T.grid(4, 8, 3):``: nested serial loops from 0."""
    if not extents:
        raise TesseraValueError("T.grid needs at least one extent")
    return LoopSpec(_core.ForKind.SERIAL, [(0, e) for e in extents])
