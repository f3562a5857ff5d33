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
