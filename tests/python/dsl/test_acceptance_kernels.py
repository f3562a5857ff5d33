"""Acceptance kernels: a max reduction (S.vrpmax over a loop of vector loads) and a float32
row softmax, compiled and under PySim, give numpy's results."""

import numpy as np

from tessera.dsl import script as S
from tessera.dsl.testing import assert_allclose, rand

from _util import run_both

N = 8 * 37 + 5  # a tail that needs a mask


@S.prim_func
def max_reduce(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
    for t in S.tec_range(1):
        acc = S.int32x8(-2147483648)
        for i in range(S.ceildiv(n, 8)):
            m = S.tail_mask(n - i * 8, 8)
            acc = S.max(acc, S.vload(a + i * 8, mask=m), mask=m, r=acc)
        out[0] = S.vrpmax(acc)[0]


def test_max_reduction():
    a = rand(N, "int32")
    out = np.zeros(1, "int32")
    (_, c, _), (_, s, _) = run_both(max_reduce, a, out, N)
    assert c[0] == a.max() and s[0] == a.max()


ROWS, COLS = 8, 8 * 5 + 3


@S.prim_func
def softmax(x: S.ptr("fp32", "global"), y: S.ptr("fp32", "global"), rows: S.i32, cols: S.i32):
    for t in S.tec_range(4):
        for r in range(t, rows, 4):
            row = x + r * cols
            out = y + r * cols
            blocks = S.ceildiv(cols, 8)
            vmax = S.float32x8(-3.0e38)
            for i in range(blocks):
                m = S.tail_mask(cols - i * 8, 8)
                vmax = S.max(vmax, S.vload(row + i * 8, mask=m), mask=m, r=vmax)
            top = S.vrpmax(vmax)[0]
            vsum = S.float32x8(0.0)
            for i in range(blocks):
                m = S.tail_mask(cols - i * 8, 8)
                e = S.exp(S.vsub(S.vload(row + i * 8, mask=m), top))
                S.vstore(e, out + i * 8, mask=m)
                vsum = S.vadd(vsum, e, mask=m, r=vsum)
            inv = 1.0 / S.vrpadd(vsum)[0]
            for i in range(blocks):
                m = S.tail_mask(cols - i * 8, 8)
                S.vstore(S.vmul(S.vload(out + i * 8, mask=m), inv), out + i * 8, mask=m)


def test_row_softmax():
    x = rand((ROWS, COLS), "float32", low=-10.0, high=10.0)
    y = np.zeros((ROWS, COLS), "float32")
    (_, c, _, _), (_, s, _, _) = run_both(softmax, x, y, ROWS, COLS)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    ref = (e / e.sum(axis=1, keepdims=True)).astype("float32")
    assert_allclose(c, ref, rtol=1e-5, atol=1e-7)
    assert_allclose(s, ref, rtol=1e-5, atol=1e-7)
