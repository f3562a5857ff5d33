"""The vector DSL's own passes (``tvm.compass.dsl.transform``), as :class:`tessera.transform.Pass`
objects to call on an IRModule, e.g. ``CombineInstructions()(BuildManager().lower(f))``."""

from ..transform import Pass


def CombineInstructions():  # noqa: N802 (TVM's pass-factory naming)
    """x & ~y -> vbclr, x | ~y -> vbset, ~(x & y) -> vnand, ~(x | y) -> vnor (integer vectors and
    masks); integer vector * 2^k -> shift; float / 2^k -> * 2^-k where that is exact."""
    return Pass("dsl.CombineInstructions")


def AlignVectorWidth():  # noqa: N802
    """Split flexible- and multiple-width vectors into native ones, masking the padding."""
    return Pass("dsl.AlignVectorWidth")


def FoldConstant():  # noqa: N802
    """Names bound once to a constant (scalar, broadcast or constant mask) are replaced by the
    constant, as Compass's DSL folds them before code generation."""
    return Pass("dsl.FoldConstant")


__all__ = ["AlignVectorWidth", "CombineInstructions", "FoldConstant"]
