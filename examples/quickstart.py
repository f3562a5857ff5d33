"""Quick start: the first seed example of the vector DSL, built and run on the host CPU."""

import numpy as np

from tessera.dsl import BuildManager, script as S


@S.prim_func
def func(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    va = S.vload(a)
    vb = S.vadd(va, 1)
    S.vstore(vb, b)


ex = BuildManager(target="X2_1204").build(func)
print(ex.c_code)
a = np.array(list(range(8)), dtype="int32")
out = np.zeros((8,), dtype="int32")
ex(a, out)
print(a, out)
