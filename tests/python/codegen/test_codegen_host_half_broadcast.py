"""CodeGenHost: a float16 scalar broadcast to a vector goes through its bits (int16 lanes, one
vector broadcast) rather than _Float16 lanes set one at a time. The values, NaN, infinities,
-0.0 and subnormals included, come through bit for bit; checked against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


@pytest.mark.parametrize("shape,full", [((64, 1), (64, 256)), ((37, 1), (37, 53)),
                                        ((3, 5, 1), (3, 5, 32))])
def test_a_float16_column_broadcast_matches_numpy_bit_for_bit(shape, full):
    A = te.placeholder(shape, "float16", name="A")
    lib = ts.build(te.create_prim_func([A, topi.broadcast_to(A, full)]), target="c")
    a = np.random.default_rng(0).standard_normal(shape).astype("float16")
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 6e-8, -6e-8, 65504], "float16")
    a.reshape(-1)[: special.size] = special[: a.size]
    out = np.empty(full, "float16")
    lib(a, out)
    want = np.broadcast_to(a, full)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    src = lib.get_source()
    if full == (64, 256):  # rows of whole vectors, each a broadcast of the column's element
        assert "memcpy(&b, &a0, sizeof(b));" in src


def test_a_float16_scalar_in_vector_arithmetic():
    # A broadcast operand of float16 arithmetic (x * s + 1 for a scalar s read per row).
    X = te.placeholder((9, 64), "float16", name="X")
    S = te.placeholder((9,), "float16", name="S")
    Y = te.compute((9, 64), lambda i, j: X[i, j] * S[i], name="Y")
    lib = ts.build(te.create_prim_func([X, S, Y]), target="c")
    rng = np.random.default_rng(1)
    x, s = rng.standard_normal((9, 64)).astype("float16"), rng.standard_normal(9).astype("float16")
    y = np.empty((9, 64), "float16")
    lib(x, s, y)
    np.testing.assert_allclose(y.astype(np.float32), (x * s[:, None]).astype(np.float32), rtol=1e-3)
