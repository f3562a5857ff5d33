"""Executor calls: wrong arguments are TypeError/ValueError naming the parameter."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import build


@S.prim_func
def add_one(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[0] = a[0] + 1


def test_none_for_an_accessed_pointer_is_a_type_error():
    ex = build(add_one)
    a = np.array([41], "int32")
    out = np.zeros(1, "int32")
    ex(a, out)
    assert out[0] == 42
    with pytest.raises(TypeError, match="argument 'a' of .*got None"):
        ex(None, out)
    with pytest.raises(TypeError, match="argument 'out'"):
        ex(a, None)


def test_integer_modulo_and_division_by_constant_zero_are_compile_errors():
    from _util import expect_diag

    @S.prim_func
    def mod_zero(a: S.ptr("int32", "global")):
        a[0] = a[0] % 0

    expect_diag(mod_zero, "a[0] % 0", "integer modulo by zero")

    @S.prim_func
    def div_zero(a: S.ptr("int32", "global")):
        x = a[0]
        a[0] = x // 0

    expect_diag(div_zero, "x // 0", "integer division by zero")
