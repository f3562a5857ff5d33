"""TIR analyses by TVM's names (``tvm.tir.analysis``).

>>> expr_deep_equal(x + 1, x + 1)
True
"""

from .. import _core


def expr_deep_equal(lhs, rhs):
    """Whether two expressions are the same tree, variables compared by identity (no mapping of
    one expression's variables onto the other's)."""
    return bool(_core.structural_equal(lhs, rhs, False))


def verify_well_formed(obj, assert_mode=True):
    """Whether a PrimFunc (or every PrimFunc of an IRModule) is well formed: the checks the
    TVMScript parser makes (variables defined before use and once, blocks using their own
    iterators, constant divisors, ...), and, for a module, that no two functions bind the same
    variable. With ``assert_mode`` the first violation raises DiagnosticValueError (a ValueError,
    as TVM raises it; with the source location when known) instead of returning False.

    >>> verify_well_formed(mod)
    True
    """
    from ..error import DiagnosticValueError, TesseraTypeError

    if isinstance(obj, _core.PrimFunc):
        mod = _core.IRModule.from_expr(obj)
    elif isinstance(obj, _core.IRModule):
        mod = obj
    else:
        raise TesseraTypeError(f"verify_well_formed takes a PrimFunc or an IRModule, got {type(obj).__name__}")
    errors = _core.verify_well_formed_detailed(mod)
    if not errors:
        return True
    if not assert_mode:
        return False
    message, span, detail = errors[0]
    text = detail or message
    if span is not None and span.line > 0:
        raise DiagnosticValueError(_core.render_diagnostic(span, text), text, span.file, span.line, span.column)
    raise DiagnosticValueError(text, text)


def _buffer_var_pairs(buffer_var_map):
    from ..error import TesseraTypeError

    items = buffer_var_map.items() if hasattr(buffer_var_map, "items") else None
    if items is None:
        raise TesseraTypeError(
            f"buffer_var_map must map data variables to buffers, got {type(buffer_var_map).__name__}"
        )
    return [(var, buf) for var, buf in items]


def get_block_access_region(block, buffer_var_map):
    """The regions ``block`` reads, writes and accesses opaquely, as ``[reads, writes, opaques]``,
    among the buffers of ``buffer_var_map`` ({data var: buffer}). An opaque access is a use of a
    buffer's data pointer other than a load or store (an extern call's argument, a read-write
    ``access_ptr``); it covers the whole buffer (for a match_buffer, its source region).

    >>> reads, writes, opaques = get_block_access_region(block, {b.data: b for b in bufs})
    """
    r = _core.get_block_access_region(block, _buffer_var_pairs(buffer_var_map), False)
    return [list(r[0]), list(r[1]), list(r[2])]


def get_block_read_write_region(block, buffer_var_map):
    """``[reads, writes]`` of ``block``, as :func:`get_block_access_region` finds them, with each
    opaquely accessed buffer counted as both read and written (the form TVMScript uses when it
    fills in a block's T.reads / T.writes)."""
    r = _core.get_block_access_region(block, _buffer_var_pairs(buffer_var_map), True)
    return [list(r[0]), list(r[1])]


__all__ = [
    "expr_deep_equal",
    "get_block_access_region",
    "get_block_read_write_region",
    "verify_well_formed",
]
