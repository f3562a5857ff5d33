"""CodeGenHost::PrintAlignedStoreLoop, two cases of its flat loop of aligned stores:

- a copy (the stored value one load of the same type) in 32- or 64-byte vectors moves 64-byte
  lines of two 32-byte vectors, the stores aligned to the line, then what is left (one more
  vector where two are, and the vector ending at the last element);
- under the function's parallel loop, when one thread would run it (OMP_NUM_THREADS=1), the
  flat loop runs once over all the elements without the OpenMP region (tessera_max_threads).

Every kernel is checked against numpy with its input and its output at offsets within a cache
line (element-misaligned ones included), on shapes whose element counts leave an odd number of
vectors, partial last chunks and tails; the one-thread branch runs in a child process started
with OMP_NUM_THREADS=1 (the thread count is fixed when OpenMP starts)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

DTYPES = ["int8", "uint8", "int16", "float16", "int32", "float32", "int64", "float64"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _data(rng, shape, dtype):
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _at(shape, dtype, offset_bytes):
    """An array whose data starts `offset_bytes` past a 64-byte boundary."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(size + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset_bytes
    return raw[start:start + size].view(dtype).reshape(shape)


def _offsets(dtype):
    item = np.dtype(dtype).itemsize
    offs = {0, 16, 32, 48 - 48 % item, 64 - item}
    if item > 1:
        offs.add(1)  # not aligned to the element: every store unaligned
    return sorted(offs)


def _copies(A, shape):
    """(name, te output, numpy of the input) of the copies of a 2-d placeholder."""
    rows, cols = shape
    n = rows * cols
    out = [("identity", topi.identity(A), lambda x: x),
           ("reshape", topi.reshape(A, (n // cols * 2, cols // 2)) if cols % 2 == 0 else
            topi.reshape(A, (n,)), lambda x: x.reshape(-1) if cols % 2 else
            x.reshape(n // cols * 2, cols // 2)),
           ("expand_dims", topi.expand_dims(A, 1), lambda x: x[:, None]),
           ("rows", topi.strided_slice(A, [1, 0], [rows, cols]), lambda x: x[1:rows])]
    return out


def check_copies(dtype, shape, one_thread=False):
    """Every copy of `shape` in `dtype`, at every input and output offset, against numpy;
    returns the sources."""
    rng = np.random.default_rng(len(dtype) * 100 + shape[1])
    A = te.placeholder(shape, dtype, name="A")
    srcs = []
    for name, out, np_fn in _copies(A, shape):
        lib = ts.build(te.create_prim_func([A, out]), target="c")
        src = lib.get_source()
        srcs.append(src)
        if one_thread and "tessera_vec_chunk" in src:
            assert "if (tessera_max_threads() > 1) {" in src, src
        x0 = _data(rng, shape, dtype)
        want = np_fn(x0)
        for in_off in _offsets(dtype):
            x = _at(shape, dtype, in_off)
            x[...] = x0
            for out_off in _offsets(dtype):
                got = _at(want.shape, dtype, out_off)
                got[...] = 0
                lib(x, got)
                np.testing.assert_array_equal(
                    got, want, err_msg=f"{name} {dtype} {shape}: input {in_off}, output {out_off}")
    return srcs


def check_multiply(dtype, shape):
    rng = np.random.default_rng(shape[1])
    a = te.placeholder(shape, dtype, name="a")
    b = te.placeholder(shape, dtype, name="b")
    lib = ts.build(te.create_prim_func([a, b, topi.multiply(a, b)]), target="c")
    x, y = _data(rng, shape, dtype), _data(rng, shape, dtype)
    want = np.multiply(x, y)
    for off in _offsets(dtype):
        got = _at(shape, dtype, off)
        got[...] = 0
        lib(x, y, got)
        np.testing.assert_array_equal(got, want, err_msg=f"multiply {dtype} {shape}: output {off}")
    return lib.get_source()


# (3, 8192) / (5, 4096): whole flat ranges; (97, 1024): a short last chunk; (33, 1056) and
# (65, 2080): rows of an odd number of 32-byte vectors (int8 1056 = 33 x 32); (37, 1000):
# rows with a tail (their own loops)
SHAPES = [(3, 8192), (5, 4096), (97, 1024), (33, 1056), (65, 2080), (37, 1000)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_copies_in_pairs_match_numpy_at_every_offset(dtype, shape):
    srcs = check_copies(dtype, shape)
    if shape[1] % 1024 == 0:
        # the copy's lines: two vectors a step, stores aligned to 64 bytes
        assert any("for (; tessera_vec_k" in s and "& 63)" in s for s in srcs), srcs[0]


def test_an_odd_number_of_32_byte_vectors_ends_with_one_more():
    # identity of int8 rows in 32-byte vectors: after the lines, one vector where two are
    # left, then the vector ending at the last element
    A = te.placeholder((64, 1056), "int8", name="A")
    lib = ts.build(te.create_prim_func([A, topi.identity(A)]), target="c")
    src = lib.get_source()
    if "tessera_load_int8x32" in src and "for (; tessera_vec_k" in src:
        assert src.count("tessera_store_int8x32(") >= 6, src
    x = _data(np.random.default_rng(1), (64, 1056), "int8")
    for off in range(0, 64, 8):
        got = _at((64, 1056), "int8", off)
        lib(x, got)
        np.testing.assert_array_equal(got, x)


def test_arithmetic_keeps_one_vector_a_step():
    # (not a copy: the pair is for loads stored as they are)
    src = check_multiply("int16", (5, 4096))
    assert "tessera_vec_skip" in src and "for (; tessera_vec_k" not in src


_CHILD = r"""
import sys
sys.path.insert(0, {here!r})
import test_codegen_host_copy_pairs as t
for dtype in t.DTYPES:
    for shape in [(3, 8192), (97, 1024), (33, 1056), (37, 1000)]:
        t.check_copies(dtype, shape, one_thread=True)
for dtype in ["int8", "uint8", "int16", "float32", "float64"]:
    for shape in [(64, 4096), (97, 1024), (3, 1001)]:
        src = t.check_multiply(dtype, shape)
        if "tessera_vec_chunk" in src:
            assert "if (tessera_max_threads() > 1) {{" in src, src
print("one thread ok")
"""


def test_one_thread_runs_the_flat_loop_without_the_region():
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(p for p in [os.path.join(ROOT, "python"),
                                                      os.environ.get("PYTHONPATH", "")] if p))
    out = subprocess.run([sys.executable, "-c", _CHILD.format(here=HERE)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "one thread ok" in out.stdout


def test_the_region_stays_for_several_threads():
    a = te.placeholder((2048, 2048), "int8", name="a")
    src = ts.build(te.create_prim_func([a, topi.identity(a)]), target="c").get_source()
    i = src.index("if (tessera_max_threads() > 1) {")
    j = src.index("#pragma omp parallel for schedule(dynamic, 1)")
    k = src.index("} else {", j)
    assert i < j < k
    # the serial branch: one flat range over all 2048 x 2048 elements, no chunk variable
    assert "tessera_vec_chunk" not in src[k:]
    assert "4194304" in src[k:]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cols", [1001, 333, 2047])
def test_copies_with_a_tail_take_the_same_flat_loop(dtype, cols):
    # rows of no whole number of vectors: the vector nest and its scalar tail are one flat
    # loop (its last vector ending at the row's last element), no helper of their own
    rows = 37
    rng = np.random.default_rng(cols)
    A = te.placeholder((rows, cols), dtype, name="A")
    lib = ts.build(te.create_prim_func([A, topi.flip(A, 0)]), target="c")
    src = lib.get_source()
    assert "tessera_copy_" not in src
    if cols * np.dtype(dtype).itemsize >= 2000:  # (16 vectors or more: the flat loop's least)
        assert "tessera_vec_skip" in src, src
    x0 = _data(rng, (rows, cols), dtype)
    for in_off in _offsets(dtype):
        x = _at((rows, cols), dtype, in_off)
        x[...] = x0
        for out_off in _offsets(dtype):
            got = _at((rows, cols), dtype, out_off)
            got[...] = 0
            lib(x, got)
            np.testing.assert_array_equal(got, x0[::-1],
                                          err_msg=f"input {in_off}, output {out_off}")
