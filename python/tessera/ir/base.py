"""Comparisons of IR objects as TVM's ``tvm.ir.base`` names them.

>>> lhs_path, rhs_path = get_first_structural_mismatch(func0, func1)
>>> lhs_path   # <root>.body.value.b
"""

from .. import _core

_FROM_IR = ("assert_structural_equal", "structural_equal", "structural_hash")


def get_first_structural_mismatch(lhs, rhs, map_free_vars=False):
    """Where ``lhs`` and ``rhs`` first differ: ``(lhs_path, rhs_path)``, two AccessPaths, or
    None when they are structurally equal. Where one side lacks an item the other has (arrays or
    maps of different size), that side's path ends in ``array_item_missing`` /
    ``map_item_missing``."""
    from . import _as_node, _mismatch_paths  # tessera.ir imports this module

    mismatch = _core.structural_equal_mismatch(_as_node(lhs), _as_node(rhs), map_free_vars)
    if mismatch is None:
        return None
    lhs_path, rhs_path = _mismatch_paths(mismatch[1])
    return lhs_path, rhs_path


def __getattr__(name):
    """The names of tessera.ir (``structural_equal``, ``save_json``, ...), which TVM's
    ``tvm.ir.base`` also holds."""
    import importlib

    ir = importlib.import_module("tessera.ir")
    if not name.startswith("__") and hasattr(ir, name):
        return getattr(ir, name)
    raise AttributeError(f"module 'tessera.ir.base' has no attribute '{name}'")


__all__ = ["get_first_structural_mismatch", *_FROM_IR]
