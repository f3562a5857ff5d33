"""CodeGenHost: GCC moves an OpenMP loop's body into a function of its own, where the buffer
pointers lose `restrict`, so a body that adds vectors into a buffer stored them after every step.
The body of such a parallel loop in a noalias function is printed as a static inline function
whose pointer parameters are restrict again. Results are checked against numpy."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def _column_sum(noalias=True):
    @T.prim_func
    def f(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64,), "float32"), scale: T.float32):
        T.func_attr({"tir.noalias": noalias})
        for c in T.parallel(4):
            for j in T.vectorized(16):
                B[c * 16 + j] = T.float32(0)
            for k in range(32):
                for j in T.vectorized(16):
                    B[c * 16 + j] = B[c * 16 + j] + A[k, c * 16 + j] * scale

    return f


def _run(func):
    lib = ts.build(func, target="c")
    a = np.random.default_rng(0).standard_normal((32, 64)).astype("float32")
    b = np.empty(64, "float32")
    lib(a, b, np.float32(0.5))
    np.testing.assert_allclose(b, (a * np.float32(0.5)).sum(0), rtol=1e-5, atol=1e-5)
    return lib.get_source()


def test_a_parallel_vector_update_is_a_function_with_restrict_pointers():
    src = _run(_column_sum())
    # The helper: the loop variable, then the body's other variables in order of first use.
    head = "static inline void tessera_parallel_body_0(int32_t c, float* restrict B_1, "
    start = src.index(head)
    signature = src[start:src.index("{\n", start)]
    assert "float* restrict A_1" in signature and "float scale" in signature, signature
    args = signature[len("static inline void tessera_parallel_body_0("):-2]
    names = ", ".join(p.split()[-1] for p in args.split(", "))
    # The parallel loop calls it with the same names.
    loop = src.index("#pragma omp parallel for")
    assert f"    tessera_parallel_body_0({names});\n" in src[loop:], src[loop:]
    body = src[start:src.index("\n}\n", start)]
    assert "tessera_store_float32x16" in body and "tessera_load_float32x16" in body


def test_without_noalias_the_body_stays_in_the_loop():
    src = _run(_column_sum(noalias=False))
    assert "tessera_parallel_body" not in src
    assert "#pragma omp parallel for" in src


def test_a_scalar_update_or_a_write_only_body_stays_in_the_loop():
    @T.prim_func
    def scalar(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        for r in T.parallel(8):
            B[r] = T.float32(0)
            for k in range(16):
                B[r] = B[r] + A[r, k]

    @T.prim_func
    def copy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for c in T.parallel(4):
            for j in T.vectorized(16):
                B[c * 16 + j] = A[c * 16 + j] + T.float32(1)

    a = np.random.default_rng(1).standard_normal((8, 16)).astype("float32")
    lib = ts.build(scalar, target="c")
    b = np.empty(8, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5, atol=1e-5)
    assert "tessera_parallel_body" not in lib.get_source()
    lib = ts.build(copy, target="c")
    x = a.reshape(-1)[:64].copy()
    y = np.empty(64, "float32")
    lib(x, y)
    np.testing.assert_array_equal(y, x + 1)
    assert "tessera_parallel_body" not in lib.get_source()
