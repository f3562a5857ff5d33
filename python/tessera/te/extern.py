"""te.extern, te.extern_primfunc and te.scan: operations whose body is not one formula.

>>> C = te.extern((n,), [A], lambda ins, outs: tir.call_packed("my.add_one", ins[0], outs[0]))
>>> smoothed = te.scan(h0, h_next, h, inputs=[U])   # a recurrence over the first axis
"""

import numbers

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..tir import expr_ops
from .tensor import Tensor, _attrs, _shape

ExternOp = _core.te.ExternOp
ScanOp = _core.te.ScanOp


def _tag(tag, what):
    from .ops import current_tag

    scope = current_tag()
    if scope:
        if tag:
            raise TesseraValueError(f"{what}: a tag given inside a te.tag_scope ('{scope}'); "
                                    "nested tags are not allowed")
        return scope
    return tag


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def decl_buffer(shape, dtype="float32", name="buffer", elem_offset=None, offset_factor=0):
    """A buffer over fresh storage (``tir.decl_buffer``): ``elem_offset`` may be a variable, as
    te.extern's buffers have, so that a view with an offset binds to it."""
    from ..tir import decl_buffer as _decl

    return _decl(shape, dtype, name, elem_offset=elem_offset, offset_factor=offset_factor)


def extern(shape, inputs, fcompute, name="extern", dtype=None, in_buffers=None, out_buffers=None,
           tag="", attrs=None):
    """Tensors computed by a statement, typically a call of a packed or C function.

    ``fcompute(ins, outs)`` receives one buffer per input and per output and returns the
    statement (or an expression, evaluated for its effect) that fills the outputs, e.g.
    ``tir.call_packed("name", ins[0], outs[0])`` (buffers are passed as DLTensors) or
    ``tir.call_extern("int32", "my_c_function", ins[0].data, outs[0].data, n)``.
    ``shape`` is one shape or a list of shapes (one output each); ``dtype`` defaults to the
    inputs' common dtype. Returns the tensor, or the list of tensors for several outputs.

    >>> B = te.extern((n,), [A], lambda ins, outs: tir.call_packed("add_one", ins[0], outs[0]),
    ...               name="B")
    """
    what = f"te.extern '{name}'"
    tag = _tag(tag, what)
    if isinstance(shape, (numbers.Integral, _core.PrimExpr)):
        shape = (shape,)
    shape = list(shape)
    if not shape or isinstance(shape[0], (numbers.Integral, _core.PrimExpr)):
        shapes = [shape]
    else:
        shapes = [list(s) if isinstance(s, (list, tuple)) else _as_list(s) for s in shape]
    inputs = _as_list(inputs)
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TesseraTypeError(f"{what}: inputs must be te tensors, got {t!r}")
    if in_buffers is not None:
        in_buffers = _as_list(in_buffers)
        if len(in_buffers) != len(inputs):
            raise TesseraValueError(f"{what}: {len(inputs)} inputs but {len(in_buffers)} in_buffers")
    else:
        in_buffers = [decl_buffer(t.shape, t.dtype, t.op.name,
                                  elem_offset=_core.Var("elem_offset", "int32")) for t in inputs]
    if out_buffers is not None:
        out_buffers = _as_list(out_buffers)
        if len(out_buffers) != len(shapes):
            raise TesseraValueError(f"{what}: {len(shapes)} outputs but {len(out_buffers)} out_buffers")
    else:
        if dtype is None:
            types = {str(t.dtype) for t in inputs}
            if len(types) != 1:
                raise TesseraValueError(f"{what}: cannot infer the output dtype from inputs of "
                                        f"dtypes {sorted(types)}; give dtype=")
            dtype = [types.pop()] * len(shapes)
        dtypes = [str(dtype)] * len(shapes) if isinstance(dtype, str) else [str(d) for d in dtype]
        if len(dtypes) != len(shapes):
            raise TesseraValueError(f"{what}: {len(shapes)} outputs but {len(dtypes)} dtypes")
        out_buffers = [decl_buffer(_shape(s, what), d, name,
                                   elem_offset=_core.Var("elem_offset", "int32"))
                       for s, d in zip(shapes, dtypes)]
    body = fcompute(in_buffers, out_buffers)
    if isinstance(body, (_core.PrimExpr, numbers.Number)) and not isinstance(body, bool):
        body = _core.Evaluate(expr_ops.convert(body))
    if not isinstance(body, _core.Stmt):
        fname = getattr(fcompute, "__name__", "fcompute")
        raise TesseraTypeError(f"{what}: '{fname}' must return a statement or an expression, "
                               f"got {type(body).__name__}")
    op = _core.te.extern_op(name, tag, _attrs(attrs, name), inputs, in_buffers, out_buffers, body)
    outs = [op.output(i) for i in range(op.num_outputs)]
    return outs[0] if len(outs) == 1 else outs


def extern_primfunc(input_tensors, primfunc, **kwargs):
    """Tensors computed by the body of a TensorIR function: its buffer parameters that are read
    (and not written) take ``input_tensors`` in order; the written ones become the outputs.

    >>> C = te.extern_primfunc([A], func, name="C")
    """
    bmap = primfunc.buffer_map
    pairs = list(bmap.items()) if hasattr(bmap, "items") else list(bmap)
    buffers = [b for p in primfunc.params for v, b in pairs if v.same_as(p)]
    read_data, write_data = _accessed_data(primfunc.body)
    reads = [b for b in buffers if any(b.data.same_as(v) for v in read_data)]
    writes = [b for b in buffers if any(b.data.same_as(v) for v in write_data)]
    if not reads:
        raise TesseraValueError("te.extern_primfunc: the function reads no buffer parameter")
    if not writes:
        raise TesseraValueError("te.extern_primfunc: the function writes no buffer parameter")
    outputs = [b for b in writes if not any(b.same_as(r) for r in reads)]
    in_bufs = list(reads)
    if not outputs:
        inplace = [b for b in writes if any(b.same_as(r) for r in reads)]
        outputs = [inplace[-1]]
        in_bufs = [b for b in in_bufs if not b.same_as(outputs[0])]
    input_tensors = _as_list(input_tensors)
    if len(in_bufs) != len(input_tensors):
        raise TesseraValueError(
            f"te.extern_primfunc: the function reads {len(in_bufs)} buffers "
            f"({', '.join(b.name for b in in_bufs)}) but {len(input_tensors)} tensors are given")
    for t, b in zip(input_tensors, in_bufs):
        same = len(t.shape) == len(b.shape) and all(
            _core.structural_equal(x, y) for x, y in zip(t.shape, b.shape))
        if not same:
            raise TesseraValueError(
                f"te.extern_primfunc: tensor {t.name} of shape {list(t.shape)} does not match "
                f"buffer {b.name} of shape {list(b.shape)}; list the tensors in the order of "
                "the function's parameters")
    return extern([b.shape for b in outputs], input_tensors, lambda ins, outs: primfunc.body,
                  in_buffers=in_bufs, out_buffers=outputs, **kwargs)


def _accessed_data(body):
    """The data pointers of the buffers ``body`` loads from and stores to (as TVM's access map:
    element accesses, outside the declared regions of blocks)."""
    from ..tir import stmt_functor

    reads, writes = [], []

    def visit(node):
        if isinstance(node, _core.BufferLoad):
            reads.append(node.buffer.data)
        elif isinstance(node, _core.BufferStore):
            writes.append(node.buffer.data)

    stmt_functor.post_order_visit(body, visit)
    return reads, writes


def scan(init, update, state_placeholder, inputs=None, name="scan", tag="", attrs=None):
    """Tensors defined by a recurrence over their first dimension (TVM's ``te.scan``).

    Rows ``[0, init.shape[0])`` are ``init``; each later row ``t`` is ``update``'s row ``t``,
    which reads earlier rows through ``state_placeholder`` (``h[t - 1, j]`` below). Lists give
    several states computed together. Returns the tensor, or the list of tensors. An
    exponential smoothing of the rows of ``U`` (``steps`` x ``width``):

    >>> h = te.placeholder((steps, width), name="h")
    >>> h0 = te.compute((1, width), lambda _, j: U[0, j])
    >>> h_next = te.compute((steps, width), lambda t, j: h[t - 1, j] * 0.5 + U[t, j] * 0.5)
    >>> smoothed = te.scan(h0, h_next, h, inputs=[U])
    """
    what = f"te.scan '{name}'"
    tag = _tag(tag, what)
    init, update, state = _as_list(init), _as_list(update), _as_list(state_placeholder)
    inputs = [] if inputs is None else _as_list(inputs)
    for t in init + update + state + inputs:
        if not isinstance(t, Tensor):
            raise TesseraTypeError(f"{what}: expects te tensors, got {t!r}")
    if len(init) != len(update) or len(init) != len(state):
        raise TesseraValueError(f"{what}: init, update and state_placeholder must have the same "
                                f"length, got {len(init)}, {len(update)} and {len(state)}")
    op = _core.te.scan_op(name, tag, _attrs(attrs, name), init, update, state, inputs)
    outs = [op.output(i) for i in range(op.num_outputs)]
    return outs[0] if len(outs) == 1 else outs
