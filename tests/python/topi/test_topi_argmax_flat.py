"""topi.argmax / argmin over a whole tensor (no axis, or every axis) built with no schedule for
the host: the pass tir.ArgExtremeRows makes topi's two passes (and, for a 1-d tensor, topi's block
search) one call of the code generator's flat search (tessera_arg{max,min}_flat_<dtype>,
include/tessera/target/arg_extreme.h): 16 KB chunks, each chunk's extreme lane by lane, then the
first element equal to the extreme in the first chunk that holds it. Checked against numpy on every
type the search takes: ties, the extreme at the chunk boundaries and the ends, lengths around the
vector, the unrolled step and the chunk (every tail), data starting at every element offset from a
64-byte boundary, NaN (the first one), the infinities (+inf beside -inf in a chunk sums to NaN),
-0.0 / +0.0, keepdims and 1- to 3-d shapes. The te form, hand schedules and CUDA keep topi's
passes."""

import numpy as np
import pytest
from topi_testing import TARGET, Kernels

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float32", "float64")
DTYPES = INTS + FLOATS
PASS = "tir.ArgExtremeRows"
host_only = pytest.mark.skipif(TARGET != "c", reason="tir.ArgExtremeRows runs on the host only")


def _chunk(dtype):
    return 16384 // np.dtype(dtype).itemsize


def _lengths(dtype):
    """Lengths around a vector (64 bytes), the unrolled step (four vectors) and the chunk."""
    lanes, c = 64 // np.dtype(dtype).itemsize, _chunk(dtype)
    return sorted({2, 3, lanes - 1, lanes, lanes + 1, 4 * lanes - 1, 4 * lanes, 4 * lanes + 1,
                   5 * lanes + 3, c - 1, c, c + 1, 2 * c + 4 * lanes + 5, 3 * c + 17})


def _random(rng, n, dtype, lo=-50, hi=50):
    if dtype.startswith("float"):
        return rng.integers(lo, hi + 1, n).astype(dtype) / 4
    info = np.iinfo(dtype)
    return rng.integers(max(lo, info.min), min(hi, info.max) + 1, n).astype(dtype)


def _tensors(n, dtype):
    """1-d tensors of length n: ties everywhere, the extremes (one or two of each) at the ends,
    the chunk boundaries and inside, one value throughout; floats also NaN, the infinities and
    signed zeros."""
    rng = np.random.default_rng(n)
    is_float = dtype.startswith("float")
    info = None if is_float else np.iinfo(dtype)
    top = np.inf if is_float else info.max
    low = -np.inf if is_float else info.min
    c = _chunk(dtype)
    out = [_random(rng, n, dtype, -3, 3) for _ in range(2)]
    spots = [(0,), (n - 1,), (n // 2,), (1, n - 1), (n - 1, 0), (c - 1,), (c,), (c - 1, c),
             (c, 2 * c), (2 * c + 1, c + 5)]
    for at in spots:
        for value in (top, low):
            t = _random(rng, n, dtype)
            t[[i % n for i in at]] = value
            out.append(t)
    out += [np.full(n, low, dtype), np.full(n, top, dtype), np.zeros(n, dtype)]
    if is_float:
        for at in ((0,), (n - 1,), (n // 2,), (c + 1, 3), (c,), (2 * c, c + 2)):
            t = _random(rng, n, dtype)
            t[[i % n for i in at]] = np.nan
            out.append(t)
        t = _random(rng, n, dtype)
        t[0], t[n - 1] = np.inf, np.nan  # +inf before a NaN: the NaN (numpy)
        out.append(t)
        t = _random(rng, n, dtype)
        t[n // 3], t[2 * n // 3] = np.inf, -np.inf  # a chunk's sum is NaN, without a NaN
        out.append(t)
        t = _random(rng, n, dtype)
        t[[i % n for i in (1, c + 1, 2 * c)]] = -np.inf
        t[[i % n for i in (0, c, 2 * c + 1)]] = np.inf
        out.append(t)
        out.append(np.full(n, np.nan, dtype))
        zeros = np.where(rng.integers(0, 2, n) == 1, 0.0, -0.0).astype(dtype)
        out.append(zeros)  # all equal: index 0
        out.append(-np.abs(_random(rng, n, dtype)) + zeros * 0)
    return out


def _calls(src, name):
    """Whether the C `src` stores a call of `name`."""
    return f"= {name}(" in src


def _flat_kernels(shapes, dtype, keepdims=False):
    """argmax (no axis) and argmin (every axis) kernels "max<i>" / "min<i>" of each shape, one
    module."""
    k = Kernels()
    for i, shape in enumerate(shapes):
        A = te.placeholder(shape, dtype, name="A")
        k.add(f"max{i}", [A], topi.argmax(A, keepdims=keepdims))
        k.add(f"min{i}", [A], topi.argmin(A, axis=tuple(range(len(shape))), keepdims=keepdims))
    return k


def _check(k, a, keepdims=False, i=0):
    for name, ref in ((f"max{i}", np.argmax), (f"min{i}", np.argmin)):
        got = k.run(name, a)
        want = ref(a, keepdims=keepdims) if keepdims else ref(a)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {a.dtype} {a.shape}")


@host_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_flat_search_as_numpy(dtype):
    lengths = _lengths(dtype)
    k = _flat_kernels([(n,) for n in lengths], dtype)
    for i, n in enumerate(lengths):
        for a in _tensors(n, dtype):
            _check(k, a, i=i)
            if dtype.startswith("float"):
                _check(k, -a, i=i)  # argmin's own NaN and infinity cases
    src = k._lib["all"].get_source()
    assert src.count(f"= tessera_argmax_flat_{dtype}(") == len(lengths)


@host_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_shape_reads_the_tensor_as_one_row(dtype):
    c = _chunk(dtype)
    shapes = ((3, 5), (7, 1, 9), (2, c // 2 + 3), (5, 3, c // 8 + 1), (c + 3, 2))
    for keepdims in (False, True):
        k = _flat_kernels(shapes, dtype, keepdims)
        for i, shape in enumerate(shapes):
            tensors = _tensors(int(np.prod(shape)), dtype)
            for a in tensors[:6] + tensors[-4:]:
                _check(k, a.reshape(shape), keepdims, i)
        src = k._lib["all"].get_source()
        assert src.count(f"= tessera_argmin_flat_{dtype}(") == len(shapes)


@host_only
@pytest.mark.parametrize("dtype", ("int8", "int32", "float32", "float64"))
def test_data_starting_at_every_offset(dtype):
    # the first chunk ends at the first 64-byte boundary: every element offset from one
    lanes = 64 // np.dtype(dtype).itemsize
    n = 3 * _chunk(dtype) + 21
    k = _flat_kernels([(n,)], dtype)
    rng = np.random.default_rng(5)
    for offset in range(lanes + 1):
        buf = _random(rng, n + lanes + 1, dtype)
        a = buf[offset:offset + n]
        assert a.flags.c_contiguous
        for at in (0, 1, lanes - offset, _chunk(dtype) - 1, n - 1):
            b = a.copy() if at < 0 else a
            saved = b[at % n]
            b[at % n], b[(at + 7) % n] = 60, -60
            _check(k, b)
            b[(at + 7) % n] = 0
            b[at % n] = saved


@host_only
def test_the_pass_makes_one_call():
    A = te.placeholder((6, 10), "int16", name="A")
    func = te.create_prim_func([A, topi.argmax(A)])
    got = ts.transform.Pass(PASS)(func)["main"]

    @T.prim_func
    def expected(A: T.Buffer((6, 10), "int16"), A_red: T.Buffer((), "int32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block("A_red_1"):
                T.reads(A[0:6, 0:10])
                T.writes(A_red[()])
                A_red[()] = T.call_extern("int32", "tessera_argmax_flat_int16",
                                          T.address_of(A[0, 0]), T.int64(60), A[5, 9])

    ts.ir.assert_structural_equal(got.with_attr("global_symbol", "main"),
                                  expected.with_attr("global_symbol", "main"))


@host_only
@pytest.mark.parametrize("dtype", ("float32", "int16", "uint8", "int64"))
def test_one_dimension_by_blocks_takes_the_flat_search(dtype):
    # a 1-d tensor of topi's block search (at least 512 elements) is a whole tensor too
    n = 1500
    A = te.placeholder((n,), dtype, name="A")
    k = Kernels()
    k.add("max", [A], topi.argmax(A, axis=0))
    k.add("min", [A], topi.argmin(A, axis=-1, keepdims=True))
    names = [b.name_hint for b in _blocks(te.create_prim_func([A, topi.argmax(A, axis=0)]))]
    if dtype != "uint8":
        assert "A_blocks" in names  # topi's block search, before the pass
    for a in _tensors(n, dtype)[:8]:
        np.testing.assert_array_equal(k.run("max", a), np.argmax(a))
        np.testing.assert_array_equal(k.run("min", a), np.argmin(a, keepdims=True))
    src = k._lib["all"].get_source()
    assert _calls(src, f"tessera_argmax_flat_{dtype}") and _calls(src, f"tessera_argmin_flat_{dtype}")


def _blocks(func):
    sch = ts.tir.Schedule(func)
    return [sch.get(b) for b in sch.get_child_blocks(sch.get_block("root"))]


def _source(func, target="c", **ctx):
    with ts.transform.PassContext(**ctx):
        return ts.build(func, target=target).get_source()


@host_only
def test_other_reductions_keep_their_passes():
    def calls(A, out):
        return "tessera_arg" in _source(te.create_prim_func([A, out]))

    A = te.placeholder((40, 30), "int32", name="A")
    assert calls(A, topi.argmax(A))
    assert not calls(A, topi.argmax(A, select_last_index=True))
    assert not calls(A, topi.argmax(A, axis=0))  # some axes only
    B = te.placeholder((4, 5, 6), "float32", name="B")
    assert not calls(B, topi.argmin(B, axis=(0, 2)))
    X = te.placeholder((40, 30), "float16", name="X")  # a type the search does not take
    f = te.create_prim_func([X, topi.argmax(X)])
    assert "tessera_arg" not in _source(f)
    x = np.random.default_rng(1).standard_normal((40, 30)).astype("float16")
    out = np.empty((), "int32")
    ts.build(f, target="c")(x, out)
    assert out == np.argmax(x)
    one = te.placeholder((1, 1), "int32", name="O")  # one element: no call
    assert not calls(one, topi.argmax(one))
    # a computed input is not a parameter: topi's passes, and their result
    C = te.placeholder((9, 11), "int64", name="C")
    f = te.create_prim_func([C, topi.argmax(te.compute(C.shape, lambda i, j: C[i, j] * 2, name="E"))])
    assert "tessera_arg" not in _source(f)
    c = np.random.default_rng(0).integers(-9, 9, (9, 11)).astype("int64")
    out = np.empty((), "int32")
    ts.build(f, target="c")(c, out)
    assert out == np.argmax(c * 2)


@host_only
def test_names_do_not_matter_the_structure_does():
    A = te.placeholder((6, 70), "float32", name="A")
    text = te.create_prim_func([A, topi.argmin(A)]).script()
    renamed = text.replace('"A_red_1"', '"R"').replace('"A_red"', '"E"')
    assert "tessera_argmin_flat_float32" in ts.transform.Pass(PASS)(ts.script.from_source(renamed)).script()
    for before, after in (
        ('A_red_1[v_i0, v_i1] = T.float32("inf")', 'A_red_1[v_i0, v_i1] = T.float32(0.0)'),
        ("A_red[()] = T.min(A_red[()]", "A_red[()] = T.max(A_red[()]"),  # last index
        ('T.float32("-inf"), A[', 'T.float32("inf"), A['),  # a NaN read as the other side
        ("v_k0 * 70 + v_k1", "v_k0 * 71 + v_k1"),  # another index
        ("v_k0 * 70 + v_k1", "v_k1 * 6 + v_k0"),  # the index of the transposed tensor
        ("A_red_1[0, 0] < A[v_k0, v_k1]", "A_red_1[0, 0] > A[v_k0, v_k1]"),  # the other extreme
        ("A_red_1[0, 0] < A[v_k0, v_k1]", "A_red_1[0, 0] == A[v_k0, v_k1]"),  # a float's ==
        ("A_red_1[0, 0] < A[v_k0, v_k1]", "A_red_1[0, 1] < A[v_k0, v_k1]"),  # not the extreme
    ):
        assert before in text, before
        changed = ts.script.from_source(text.replace(before, after))
        out = ts.transform.Pass(PASS)(changed)
        assert "tessera_arg" not in out.script(), (before, after)
        ts.ir.assert_structural_equal(out["main"], changed)


@host_only
def test_only_where_the_automatic_schedule_runs():
    A = te.placeholder((64, 33), "int8", name="A")
    func = te.create_prim_func([A, topi.argmax(A)])
    assert "tessera_argmax_flat_int8" in _source(func)
    assert "tessera_arg" not in _source(func, disabled_pass=[PASS])
    assert "tessera_arg" not in _source(func, config={"tir.auto_schedule": False})
    # a function scheduled by hand keeps its passes, and its result
    a = np.random.default_rng(2).integers(-100, 100, (64, 33)).astype("int8")
    sch = ts.tir.Schedule(func)
    sch.reorder(*reversed(sch.get_loops(_blocks(func)[0].name_hint)[2:]))
    lib = ts.build(sch.mod, target="c")
    assert "tessera_arg" not in lib.get_source()
    out = np.empty((), "int32")
    lib(a, out)
    assert out == np.argmax(a)


def test_cuda_keeps_topis_passes():
    A = te.placeholder((64, 2048), "float32", name="A")
    func = te.create_prim_func([A, topi.argmax(A)])
    mod = ts.lower(func, target="cuda", stage="begin", auto_schedule=True)
    assert "tessera_arg" not in mod.script()
    bound = func.with_attr("target", "cuda")
    ts.ir.assert_structural_equal(ts.transform.Pass(PASS)(bound)["main"], bound)


@host_only
def test_the_definition_is_emitted_once_a_module():
    A = te.placeholder((3, 600), "uint16", name="A")
    B = te.placeholder((5, 700), "uint16", name="B")
    f = te.create_prim_func([A, B, topi.argmax(A), topi.argmax(B), topi.argmin(B)])
    src = ts.build(f, target="c").get_source()
    assert src.count("static int32_t tessera_argmax_flat_uint16(const void* data, int64_t n, "
                     "uint16_t last) {") == 1
    assert src.count("static int32_t tessera_argmin_flat_uint16(") == 1
    assert src.count("= tessera_argmax_flat_uint16(") == 2  # the calls


@host_only
def test_portable_c_without_avx512(tmp_path, monkeypatch):
    # GCC vector extensions only: the same search built without AVX-512
    wrapper = tmp_path / "cc"
    wrapper.write_text('#!/bin/sh\nexec gcc "$@" -mno-avx512f\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path / "cache"))
    for dtype in ("int8", "uint32", "float64"):
        n = _chunk(dtype) + 77
        k = _flat_kernels([(n,)], dtype)
        for a in _tensors(n, dtype)[::3]:
            _check(k, a)
