"""The declarative intrinsic table (tessera/target/dsl_intrinsics.h): S.<name>, the op registry
and PySim's dispatch all come from one entry."""

import inspect

import numpy as np
import pytest

from tessera import _core
from tessera.dsl import BuildManager
from tessera.dsl import script as S
from tessera.dsl.intrinsics import REGISTRY
from tessera.dsl.pysim.ops import CALLS
from tessera.error import DiagnosticError

TABLE = _core.dsl_intrinsics()
BY_NAME = {d["name"]: d for d in TABLE}
MATH = ["exp", "log", "tanh", "sin", "cos", "rsqrt", "sqrt", "ceil", "erf", "exp2"]


def test_table_entries_are_registered_everywhere():
    assert [d["name"] for d in TABLE] == (["vaddh", "vsubh", "vmaxh", "vminh"] + MATH
                                          + ["vcls", "clz", "vbrevs", "vpcnt",
                                             "isnan", "isinf", "isfinite"])
    masks = {"pairwise": "all", "math": "all", "bits": "undefined", "classify": "false"}
    for d in TABLE:
        assert REGISTRY[d["name"]].__doc__ == d["doc"]
        op = _core.Op.get(d["op"])
        assert op.get_attr("dsl.name") == d["c_name"]
        assert d["op"] in CALLS
        assert d["mask"] == masks[d["form"]]
        # S.<name>'s parameters follow the form's mask rule and the entry's keywords.
        params = list(inspect.signature(REGISTRY[d["name"]].impl).parameters)[2:]
        assert ("mask" in params) == (d["mask"] != "all")
        assert ("out_sign" in params) == ("out_sign" in d["keywords"])


def _lower_error(kernel):
    with pytest.raises(DiagnosticError) as info:
        BuildManager().lower(kernel)
    return str(info.value)


@pytest.mark.parametrize("name", ["vaddh", "vsubh", "vmaxh", "vminh"])
def test_element_checks_come_from_the_table(name):
    elements = BY_NAME[name]["elements"]

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


def test_math_checks_come_from_the_table():
    d = BY_NAME["exp"]
    assert d["elements"] == ("float16", "float32", "bfloat16")
    assert d["scalar_elements"] == ("float16", "float32")

    @S.prim_func
    def vec_int(a: S.ptr("int32", "global")):
        S.vstore(S.exp(S.vload(a)), a)

    assert ('S.exp: the arg "x" has unsupported type "int32x8"; expected elements of '
            'float16, float32, bfloat16') in _lower_error(vec_int)

    @S.prim_func
    def scalar_bf16(a: S.ptr("bfloat16", "global")):
        a[0] = S.sqrt(a[0])

    assert ('S.sqrt: the arg "x" has unsupported type "bfloat16"; expected elements of '
            'float16, float32') in _lower_error(scalar_bf16)


def test_bits_checks_come_from_the_table():
    @S.prim_func
    def cls_unsigned(a: S.ptr("uint16", "global")):
        S.vstore(S.vcls(S.vload(a)), a)

    assert ('S.vcls: the arg "x" has unsupported type "uint16x16"; expected elements of '
            'int8, int16, int32') in _lower_error(cls_unsigned)

    @S.prim_func
    def brevs_scalar(a: S.ptr("int32", "global")):
        a[0] = S.vbrevs(a[0])  # no scalar elements: vectors only

    assert 'S.vbrevs: the arg "x" must be a vector' in _lower_error(brevs_scalar)

    @S.prim_func
    def brevs_sign(a: S.ptr("int32", "global")):
        S.vstore(S.vbrevs(S.vload(a), out_sign="u"), a)  # no out_sign keyword

    assert "S.vbrevs(" in _lower_error(brevs_sign)


def test_table_ops_run_in_pysim_and_compiled():
    from _util import run_both

    @S.prim_func
    def k(a: S.ptr("fp32", "global"), b: S.ptr("int32", "global"), fo: S.ptr("fp32", "global"),
          io: S.ptr("int32", "global")):
        S.vstore(S.exp2(S.vload(a)), fo)
        fo[8] = S.ceil(a[9])
        S.vstore(S.vpcnt(S.vload(b)), io)
        io[8] = S.clz(b[9])
        if S.isfinite(a[10]):
            io[9] = 2

    a = np.array([0.5, 1, 2, 3, -1, -2, 0.25, 4, 0, 2.5, np.inf], np.float32)
    b = np.array([0, 1, 3, 7, -1, 255, 256, 1023, 0, 1, 0], np.int32)
    fo, io = np.zeros(9, np.float32), np.ones(10, np.int32)
    (_, _, cf, ci), (_, _, sf, si) = run_both(k, a, b, fo, io)
    want_f = np.concatenate([np.exp2(a[:8]), [3.0]]).astype(np.float32)
    want_i = [bin(int(v) & 0xFFFFFFFF).count("1") for v in b[:8]] + [31, 1]  # inf: not finite
    for got_f, got_i in ((cf, ci), (sf, si)):
        np.testing.assert_allclose(got_f, want_f, rtol=1e-6)
        assert got_i.tolist() == want_i
