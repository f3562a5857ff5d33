"""TVM's ``tvm.arith._ffi_api``: the registered arith functions TVM code calls by name, each a
thin wrapper over tessera's own API."""


def NarrowPredicateExpression(expr, free_parameters):  # noqa: N802 (TVM's name)
    """As ``tessera.arith.narrow_predicate_expression``."""
    from . import narrow_predicate_expression

    return narrow_predicate_expression(expr, free_parameters)
