"""Walking and rewriting TIR from Python (for passes written with prim_func_pass).

>>> def double(node):
...     if isinstance(node, tir.BufferStore):
...         return tir.BufferStore(node.buffer, node.value * 2, node.indices)
>>> body = stmt_functor.ir_transform(func.body, None, double, ["tir.BufferStore"])

The traversals run in C++; the callbacks are called for each node of the enabled kinds.
"""

from .. import _core


def ir_transform(stmt, preorder, postorder, only_enable=None):
    """Rewrite ``stmt`` (a statement or an expression) node by node.

    ``preorder(node)`` runs before a node's children: a returned node replaces it and its
    children are not visited; None continues. ``postorder(node)`` runs on the node rebuilt from
    its rewritten children: a returned node replaces it; None keeps it. ``only_enable`` limits
    the callbacks to node kinds such as ``["tir.For", "tir.BufferStore"]``. Either callback may
    be None. Nodes that do not change are shared with the input.
    """
    return _core.ir_transform(stmt, preorder, postorder, list(only_enable or []))


def post_order_visit(stmt, fvisit):
    """Call ``fvisit(node)`` on every statement and expression of ``stmt``, children first."""
    _core.post_order_visit(stmt, fvisit)


def pre_order_visit(stmt, fvisit):
    """Call ``fvisit(node)`` on every statement and expression of ``stmt``, parents first; when
    ``fvisit`` returns False the node's children are skipped."""

    def before(node):
        # Returning the node itself keeps it and skips its children.
        return node if fvisit(node) is False else None

    _core.ir_transform(stmt, before, None, [])


def substitute(node, vmap):
    """``node`` with the variables of ``vmap`` (a dict Var -> PrimExpr or number) replaced."""
    from . import const

    pairs = []
    for var, value in dict(vmap).items():
        if not isinstance(value, _core.PrimExpr):
            value = const(value, var.dtype)
        pairs.append((var, value))
    return _core.substitute(node, pairs)


def renew_defs(func):
    """A copy of the PrimFunc ``func`` in which every definition is new: parameters, buffers
    (with their data pointers and the size variables they define), loop, block and let
    variables, allocations. The copy is structurally equal to ``func`` and shares none of its
    variables or buffers, so it can be changed or inlined next to the original."""
    return _core.renew_defs(func)


__all__ = ["ir_transform", "post_order_visit", "pre_order_visit", "renew_defs", "substitute"]
