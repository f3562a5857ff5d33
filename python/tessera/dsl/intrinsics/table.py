"""The intrinsics declared in C++'s table (tessera/target/dsl_intrinsics.h): S.vaddh, S.vsubh,
S.vmaxh, S.vminh. Each entry's argument checks come from its form and element types; the op
registry and PySim's dispatch are derived from the same entry."""

from ... import _core
from ._registry import intrinsic
from .arith import _pairwise


def _define(entry):
    name, op_name, elements = entry["name"], entry["op"].split(".", 1)[1], tuple(entry["elements"])
    if entry["form"] == "pairwise":
        def impl(p, node, x, y):
            return _pairwise(p, node, op_name, x, y, elements)
    else:
        raise NotImplementedError(f"intrinsic form {entry['form']!r} of S.{name}")
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = entry["doc"]
    intrinsic(impl, name=name)


for _entry in _core.dsl_intrinsics():
    _define(_entry)
