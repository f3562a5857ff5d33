"""Seed example 2: a kernel calling a subroutine; both become C functions with prototypes first."""

import numpy as np

from tessera.dsl import BuildManager, script as S


@S.prim_func
def subfunc(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    b[0] = a[0] + 1


@S.prim_func
def func(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    subfunc(a, b)


ex = BuildManager(target="X2_1204").build(func)
print(ex.c_code)
a = np.array([41], dtype="int32")
b = np.zeros(1, dtype="int32")
ex(a, b)
print(a, b)  # [41] [42]
