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


def verify_ssa(func):
    """Whether every variable of ``func`` is bound once (parameter, let, loop, allocation, block
    iterator); the same let expression may appear more than once.

    >>> verify_ssa(tir.PrimFunc([x], tir.LetStmt(x, 1, body)))
    False
    """
    from ..error import TesseraTypeError

    if not isinstance(func, _core.PrimFunc):
        raise TesseraTypeError(f"verify_ssa takes a PrimFunc, got {type(func).__name__}")
    return bool(_core.verify_ssa(func))


def detect_buffer_access_lca(func):
    """{buffer: the innermost For or Block enclosing all its accesses} for the buffers ``func``
    accesses; ``None`` when that is the function's root. A reduction block's output counts as
    accessed above its reduction loops; a buffer in global memory no deeper than the loops bound
    to blockIdx.

    >>> detect_buffer_access_lca(func)[B]  # the For or Block
    """
    from ..error import TesseraTypeError

    if not isinstance(func, _core.PrimFunc):
        raise TesseraTypeError(f"detect_buffer_access_lca takes a PrimFunc, got {type(func).__name__}")
    return dict(_core.detect_buffer_access_lca(func))


def calculate_allocated_bytes(func_or_mod):
    """The most bytes allocated at once (Allocate statements, so after LowerOpaqueBlock) per
    memory scope: ``{function name: {scope: bytes}}``, a lone PrimFunc under "main".

    >>> calculate_allocated_bytes(lowered)["main"]["global.vtcm"]
    256
    """
    from ..error import TesseraTypeError

    if isinstance(func_or_mod, _core.PrimFunc):
        return {"main": dict(_core.calculate_allocated_bytes(func_or_mod))}
    if isinstance(func_or_mod, _core.IRModule):
        return {
            gv.name_hint: dict(_core.calculate_allocated_bytes(f))
            for gv, f in func_or_mod.functions.items()
            if isinstance(f, _core.PrimFunc)
        }
    raise TesseraTypeError(
        f"calculate_allocated_bytes takes a PrimFunc or an IRModule, got {type(func_or_mod).__name__}"
    )


def is_pure_function(func):
    """Whether ``func`` has no effect but its return value: it stores only to memory it allocates
    and calls no op that writes state or has unknown effects (``T.call_extern``).

    >>> is_pure_function(func)
    True
    """
    return _impurity(func, "is_pure_function") is None


def assert_pure_function(func):
    """True for a pure function (see :func:`is_pure_function`); otherwise raises an
    AssertionError (DiagnosticAssertionError) at the first store or call that makes it impure."""
    from ..error import DiagnosticAssertionError

    impurity = _impurity(func, "assert_pure_function")
    if impurity is None:
        return True
    text, span = impurity
    if span is not None and span.line > 0:
        raise DiagnosticAssertionError(_core.render_diagnostic(span, text), text, span.file, span.line, span.column)
    raise DiagnosticAssertionError(text, text)


def _impurity(func, api):
    from ..error import TesseraTypeError

    if not isinstance(func, _core.PrimFunc):
        raise TesseraTypeError(f"{api} takes a PrimFunc, got {type(func).__name__}")
    return _core.find_impurity(func)


def estimate_tir_flops(stmt_or_mod):
    """The arithmetic operations a statement, or every PrimFunc of a module, executes: loops
    multiply their bodies by their most iterations, branches count their larger side,
    comparisons and index arithmetic are free; a function's ``estimated_flops`` attribute is
    taken as given.

    >>> estimate_tir_flops(IRModule({"main": matmul_128}))
    4194304.0
    """
    from ..error import TesseraTypeError

    if isinstance(stmt_or_mod, _core.PrimFunc):
        from ..ir import IRModule

        stmt_or_mod = IRModule({"main": stmt_or_mod})
    if not isinstance(stmt_or_mod, (_core.IRModule, _core.Stmt)):
        raise TesseraTypeError(
            f"estimate_tir_flops takes a statement or an IRModule, got {type(stmt_or_mod).__name__}"
        )
    return float(_core.estimate_tir_flops(stmt_or_mod))


def OOBChecker():  # noqa: N802 - TVM's name
    """A pass that raises ScheduleError at the first access provably outside its buffer (a
    constant index, or one of loops of constant extents that leaves the buffer on some iteration),
    naming the buffer and dimension.

    >>> OOBChecker()(IRModule.from_expr(func))
    """
    from ..transform import Pass

    return Pass("tir.analysis.OOBChecker")


def identify_memcpy(stmt):
    """For every loop of ``stmt`` (pre-order): whether the loop nest from it down is a plain copy
    of one contiguous buffer region into another in the same element order. Each entry is
    ``(source_region, dest_region)`` (BufferRegions over the nest's loops; enclosing loop
    variables stay symbolic) or, when it is not a copy, the reason as a string.

    >>> identify_memcpy(func.body)   # for i in range(1024): B[i] = A[i]
    [(A[0:1024], B[0:1024])]
    """
    from ..error import TesseraTypeError

    if not isinstance(stmt, _core.Stmt):
        raise TesseraTypeError(f"identify_memcpy takes a statement, got {type(stmt).__name__}")
    return [(src, dst) if src is not None else reason
            for src, dst, reason in _core.identify_memcpy(stmt)]


class _FfiApi:
    """TVM's ``tvm.tir.analysis._ffi_api`` testing entries: results as TVM's FFI returns them
    (a copy as a list ``[source, dest]`` of BufferRegions, a reason as a StringImm)."""

    @staticmethod
    def _identify_memcpy(stmt):
        from . import StringImm

        return [StringImm(r) if isinstance(r, str) else list(r) for r in identify_memcpy(stmt)]


_ffi_api = _FfiApi()


__all__ = [
    "OOBChecker",
    "assert_pure_function",
    "is_pure_function",
    "calculate_allocated_bytes",
    "detect_buffer_access_lca",
    "estimate_tir_flops",
    "identify_memcpy",
    "verify_ssa",

    "expr_deep_equal",
    "get_block_access_region",
    "get_block_read_write_region",
    "verify_well_formed",
]
