"""Seed example 3: a macro with static capture (n is 8 inside the macro, whatever the caller's n)."""

import numpy as np

from tessera.dsl import BuildManager, script as S

n = 8


@S.macro
def add_func(inp, out, idx):
    out[idx] = inp[idx] + n


@S.prim_func
def func(a: S.ptr("i32", "global"), b: S.ptr("i32", "global"), n: S.i32):
    if n > 0:
        add_func(a, b, 0)
    else:
        add_func(a, b, 1)


ex = BuildManager(target="X2_1204").build(func)
print(ex.c_code)  # if (0 < n) { b[0] = (a[0] + 8); } else { b[1] = (a[1] + 8); }
a = np.array([1, 2], dtype="int32")
b = np.zeros(2, dtype="int32")
ex(a, b, 1)
print(a, b)  # [1 2] [9 0]
