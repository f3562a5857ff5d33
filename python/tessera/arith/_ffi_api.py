"""TVM's ``tvm.arith._ffi_api`` entry points that TVM's own tests call directly."""

from .solve import domain_touched as _domain_touched
from .solve import solve_inequalities_as_condition as _as_condition


def DomainTouched(stmt, buffer, consider_loads, consider_stores):  # noqa: N802 (TVM's name)
    """The region of ``buffer`` accessed in ``stmt`` (see ``solve.domain_touched``)."""
    return _domain_touched(stmt, buffer, consider_loads, consider_stores)


def SolveInequalitiesAsCondition(variables, ranges, relations):  # noqa: N802 (TVM's name)
    """The solved bounds of the inequalities as conditions (see
    ``solve.solve_inequalities_as_condition``)."""
    return _as_condition(variables, ranges, relations)


def NarrowPredicateExpression(expr, free_parameters):  # noqa: N802 (TVM's name)
    """As ``tessera.arith.narrow_predicate_expression``."""
    from . import narrow_predicate_expression

    return narrow_predicate_expression(expr, free_parameters)
