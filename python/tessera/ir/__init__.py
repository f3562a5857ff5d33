"""IR containers and comparisons: IRModule, GlobalVar, structural equality and hashing."""

from .. import _core
from ..error import TesseraValueError

IRModule = _core.IRModule
GlobalVar = _core.GlobalVar
Op = _core.Op
Span = _core.Span
Range = _core.Range
from .dtype import DataType, DataTypeCode  # noqa: E402,F401


def structural_equal(a, b, map_free_vars=False):
    """Whether two IR objects are the same program up to the names of bound variables."""
    return _core.structural_equal(a, b, map_free_vars)


def structural_hash(node, map_free_vars=False):
    """A hash consistent with :func:`structural_equal`."""
    return _core.structural_hash(node, map_free_vars)


def assert_structural_equal(a, b, map_free_vars=False):
    """Raise ValueError naming the first difference when ``a`` and ``b`` differ.

    >>> assert_structural_equal(mod_after_pass, expected_mod)
    """
    why = _core.structural_equal_failure(a, b, map_free_vars)
    if why:
        raise TesseraValueError(
            "StructuralEqual check failed: " + why + "\n--- lhs ---\n" + str(a) + "\n--- rhs ---\n" + str(b)
        )


_script = _core.Object.script


def _object_script(self, *, show_meta=False, ir_prefix="I", tir_prefix="T", syntax_sugar=True,
                   verbose_expr=False, print_line_numbers=False, path_to_underline=None,
                   obj_to_annotate=None):
    """TVMScript text of this IR object (``verbose_expr`` is accepted for TVM compatibility;
    every node has a literal form, so there is no metadata section).

    ``path_to_underline`` (a statement or a list of them) and ``obj_to_annotate`` (a dict from
    statement to tag) mark statements for diagnostics: the first line of each is underlined
    with ``^`` and tagged ``# tag``; marked text does not parse back.
    """
    if path_to_underline is not None and not isinstance(path_to_underline, (list, tuple)):
        path_to_underline = [path_to_underline]
    annotate = list(obj_to_annotate.items()) if obj_to_annotate else None
    return _script(self, ir_prefix=ir_prefix, tir_prefix=tir_prefix, syntax_sugar=syntax_sugar,
                   show_meta=show_meta, print_line_numbers=print_line_numbers,
                   path_to_underline=path_to_underline, obj_to_annotate=annotate)


def _object_show(self, **kwargs):
    """Print the TVMScript text of this IR object (``mod.show()``)."""
    print(_object_script(self, **kwargs))


def _module_getitem(self, name):
    """``mod["main"]``: the function named ``name``."""
    func = self.lookup(name if isinstance(name, str) else name.name_hint)
    if func is None:
        raise KeyError(name)
    return func


if not getattr(_core.Object.script, "_tessera_wrapped", False):
    _object_script._tessera_wrapped = True
    _core.Object.script = _object_script
    _core.Object.show = _object_show
    _core.IRModule.__getitem__ = _module_getitem
