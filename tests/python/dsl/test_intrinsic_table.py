"""The declarative intrinsic table (tessera/target/dsl_intrinsics.h): S.<name>, the op registry
and PySim's dispatch all come from one entry."""

import pytest

from tessera import _core
from tessera.dsl import script as S
from tessera.dsl.intrinsics import REGISTRY
from tessera.dsl.pysim.ops import CALLS

TABLE = _core.dsl_intrinsics()


def test_table_entries_are_registered_everywhere():
    assert [d["name"] for d in TABLE] == ["vaddh", "vsubh", "vmaxh", "vminh"]
    for d in TABLE:
        assert REGISTRY[d["name"]].__doc__ == d["doc"]
        op = _core.Op.get(d["op"])
        assert op.get_attr("dsl.name") == d["c_name"]
        assert d["op"] in CALLS
        assert d["mask"] == "all"


@pytest.mark.parametrize("name", ["vaddh", "vsubh", "vmaxh", "vminh"])
def test_element_checks_come_from_the_table(name):
    from tessera.dsl import BuildManager
    from tessera.error import DiagnosticError

    elements = next(d["elements"] for d in TABLE if d["name"] == name)

    @S.prim_func
    def k(a: S.ptr("bfloat16", "global")):
        v = S.vload(a)
        S.vstore(getattr(S, name)(v, v), a)  # noqa: B023

    if "bfloat16" in elements:  # vmaxh, vminh
        BuildManager().lower(k)
    else:  # vaddh, vsubh: the message lists the table's element types, in its order
        with pytest.raises(DiagnosticError, match=f'S.{name}: the arg "x" has unsupported type '
                                                  f'"bfloat16x16"; expected elements of '
                                                  f'{", ".join(elements)}'):
            BuildManager().lower(k)
