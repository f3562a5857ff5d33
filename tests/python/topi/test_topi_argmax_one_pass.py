"""topi.argmax / argmin of rows of int32, int64 and float64 (first index, rows of topi's block
search, at least 512 elements) built with no schedule for the host: the pass tir.ArgExtremeRows
makes them one call a row of the code generator's one-pass search
(tessera_arg{max,min}_row_<dtype>, include/tessera/target/arg_extreme.h). Checked against
numpy: ties, NaN (the first one), the infinities, -0.0 / +0.0, row lengths around the vector and
the unrolled step (every tail), rows starting at every alignment, and the portable C (no
AVX-512). The te form, hand schedules and CUDA keep topi's blocks."""

import os

import numpy as np
import pytest
from topi_testing import TARGET, Kernels

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T

DTYPES = ("int32", "int64", "float64")
# lanes of a 64-byte vector: 16 int32, 8 int64 / float64; the loop takes 4 vectors a step, from
# the row's first 64-byte boundary; 512 is the shortest row of topi's block search
LENGTHS = (512, 513, 514, 515, 519, 520, 521, 527, 528, 529, 543, 544, 545, 575, 576, 577, 600,
           1000, 1031)
PASS = "tir.ArgExtremeRows"
# The search is a host step: the sweep for "cuda" (TESSERA_TOPI_TARGET) checks topi's blocks in
# test_topi_reduction.py; here, the kernels that topi_testing would build for it are skipped.
host_only = pytest.mark.skipif(TARGET != "c", reason="tir.ArgExtremeRows runs on the host only")


def _rows(n, dtype):
    """Rows of length n: random with many ties, the extreme at the first, last and an inner
    place, several times, and rows of one value; floats also NaN, +-inf and -0.0 / +0.0."""
    rng = np.random.default_rng(n)
    is_float = dtype.startswith("float")
    top = np.inf if is_float else np.iinfo(dtype).max
    low = -np.inf if is_float else np.iinfo(dtype).min
    rows = [rng.integers(-3, 4, n).astype(dtype) for _ in range(4)]  # ties everywhere

    def row(*at, value=top, base=None):
        r = rng.integers(-1000, 1001, n).astype(dtype) if base is None else base.copy()
        r[[i % n for i in at]] = value
        rows.append(r)
        return r

    for at in ((0,), (n - 1,), (n // 2,), (3, n - 2), (n - 1, 0), (n // 3, 2 * n // 3)):
        row(*at)
    rows += [np.full(n, low, dtype), np.full(n, top, dtype), np.zeros(n, dtype)]
    if is_float:
        for at in ((0,), (n - 1,), (n // 2,), (n // 2, 1), (n - 2, n - 1)):
            row(*at, value=np.nan)
        inf_first = row(0, value=np.inf)
        row(n - 1, value=np.nan, base=inf_first)  # +inf before a NaN: the NaN (numpy)
        row(n // 2, value=-np.inf, base=np.full(n, -np.inf, dtype))
        rows.append(np.full(n, np.nan, dtype))
        signed_zeros = np.where(rng.integers(0, 2, n) == 1, 0.0, -0.0).astype(dtype)
        rows.append(signed_zeros)  # all equal: index 0
        rows.append(-np.abs(rng.standard_normal(n)).astype(dtype) + signed_zeros * 0)
    return np.stack(rows)


def _source(func, target="c", **ctx):
    with ts.transform.PassContext(**ctx):
        return ts.build(func, target=target).get_source()


@host_only
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_argmax_argmin_rows_as_numpy(dtype, n):
    a = _rows(n, dtype)
    A = te.placeholder(a.shape, dtype, name="A")
    k = Kernels()
    k.add("max", [A], topi.argmax(A, axis=1))
    k.add("min", [A], topi.argmin(A, axis=-1))
    np.testing.assert_array_equal(k.run("max", a), np.argmax(a, axis=1))
    np.testing.assert_array_equal(k.run("min", a), np.argmin(a, axis=1))
    if dtype.startswith("float"):
        b = -a  # argmin's own NaN and infinity cases
        np.testing.assert_array_equal(k.run("min", b), np.argmin(b, axis=1))
    assert f"tessera_argmax_row_{dtype}((" in k._lib["all"].get_source()


@host_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_starting_at_every_alignment(dtype):
    # rows of 517 elements start at every element offset from a 64-byte boundary: the first
    # vector overlaps the aligned ones, the last overlaps the one before it
    n, rows = 517, 64
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 51, (rows, n)).astype(dtype)
    a[np.arange(rows), (np.arange(rows) * 9) % n] = 60  # the maximum at many positions
    a[::3, (np.arange(rows)[::3] * 7) % n] = 60  # and a second one in some rows
    A = te.placeholder(a.shape, dtype, name="A")
    k = Kernels()
    k.add("max", [A], topi.argmax(A, axis=1))
    k.add("min", [A], topi.argmin(A, axis=1))
    np.testing.assert_array_equal(k.run("max", a), np.argmax(a, axis=1))
    np.testing.assert_array_equal(k.run("min", -a), np.argmin(-a, axis=1))


@host_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_keepdims_and_leading_axes(dtype):
    a = _rows(700, dtype)[:12].reshape(2, 3, 2, 700)
    X = te.placeholder(a.shape, dtype, name="X")
    k = Kernels()
    k.add("keep", [X], topi.argmax(X, axis=3, keepdims=True))
    k.add("flat", [X], topi.argmin(X, axis=-1))
    np.testing.assert_array_equal(k.run("keep", a), np.argmax(a, axis=3, keepdims=True))
    np.testing.assert_array_equal(k.run("flat", a), np.argmin(a, axis=3))
    assert k._lib["all"].get_source().count("tessera_arg") >= 4


def test_the_pass_makes_one_call_a_row():
    A = te.placeholder((4, 600), "int64", name="A")
    func = te.create_prim_func([A, topi.argmax(A, axis=1)])
    got = ts.transform.Pass(PASS)(func)["main"]

    @T.prim_func
    def expected(A: T.Buffer((4, 600), "int64"), A_red: T.Buffer((4,), "int32")):
        T.func_attr({"tir.noalias": True})
        for i0 in range(4):
            with T.block("A_red"):
                v_i0 = T.axis.spatial(4, i0)
                T.reads(A[v_i0, 0:600])
                T.writes(A_red[v_i0])
                A_red[v_i0] = T.call_extern("int32", "tessera_argmax_row_int64",
                                            T.address_of(A[v_i0, 0]), T.int64(600), A[v_i0, 599])

    ts.ir.assert_structural_equal(got.with_attr("global_symbol", "main"),
                                  expected.with_attr("global_symbol", "main"))


def test_the_te_form_is_topis_blocks():
    # the rewrite is a host lowering step: topi's compute, its TVMScript and a schedule on it
    # are the target-independent block search
    A = te.placeholder((4, 1024), "int32", name="A")
    func = te.create_prim_func([A, topi.argmax(A, axis=1)])
    assert "A_blocks" in func.script() and "tessera_arg" not in func.script()
    sch = ts.tir.Schedule(func)
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))] == [
        "A_blocks", "A_extreme", "A_block", "A_red"]


def test_names_do_not_matter_the_structure_does():
    A = te.placeholder((4, 600), "float64", name="A")
    text = te.create_prim_func([A, topi.argmin(A, axis=1)]).script()
    renamed = (text.replace("A_blocks", "P").replace("A_extreme", "E").replace("A_block", "W")
               .replace('"A_red"', '"R"'))
    assert "tessera_arg" in ts.transform.Pass(PASS)(ts.script.from_source(renamed)).script()
    # the same text with one thing changed is not topi's search: left as it is
    inits = 'A_blocks[v_i0, v_i1, v_i2] = T.float64("inf")'
    assert inits in text
    for before, after in (
        (inits, 'A_blocks[v_i0, v_i1, v_i2] = T.float64(0.0)'),  # another identity
        ("A_red[v_i0] = T.min(A_red[v_i0]", "A_red[v_i0] = T.max(A_red[v_i0]"),  # last index
        ('T.float64("-inf"), A[', 'T.float64("inf"), A['),  # a NaN read as the other side
        ("T.min(A_block[v_i0] * 256, 344) + v_j))",
         "T.min(A_block[v_i0] * 256, 343) + v_j))"),  # another element
    ):
        assert before in text, before
        changed = ts.script.from_source(text.replace(before, after))
        out = ts.transform.Pass(PASS)(changed)
        assert "tessera_arg" not in out.script(), before
        ts.ir.assert_structural_equal(out["main"], changed)


def test_other_statements_of_the_function():
    # a 0-d result beside the rows (a root block without a loop, not a nest of the rows' form):
    # the rows still take the call
    A = te.placeholder((6, 600), "int32", name="A")
    B = te.placeholder((5,), "float32", name="B")
    twice = te.compute((), lambda: B[1] * 2.0, name="C")
    f = te.create_prim_func([A, B, topi.argmax(A, axis=1), twice])
    assert 'with T.block("C"):\n        vi = T.axis.spatial(1, 0)' in f.script()
    lib = ts.build(f, target="c")
    assert "tessera_argmax_row_int32((" in lib.get_source()
    a = np.random.default_rng(3).integers(-9, 9, (6, 600)).astype("int32")
    b = np.random.default_rng(4).standard_normal(5).astype("float32")
    idx, c = np.empty(6, "int32"), np.empty((), "float32")
    lib(a, b, idx, c)
    np.testing.assert_array_equal(idx, np.argmax(a, axis=1))
    assert c == b[1] * 2
    # a block that writes the input before the search: left as it is
    text = te.create_prim_func([A, topi.argmax(A, axis=1)]).script()
    head = "    for i0, i1, i2, k in T.grid("
    assert head in text
    clobber = ('    with T.block("clobber"):\n        T.reads()\n        T.writes(A[0, 0])\n'
               '        A[0, 0] = 99\n')
    changed = ts.script.from_source(text.replace(head, clobber + head, 1))
    out = ts.transform.Pass(PASS)(changed)
    assert "tessera_arg" not in out.script()
    ts.ir.assert_structural_equal(out["main"], changed)


def test_other_rows_keep_their_search():
    # last index, other types, short rows, another axis, a computed input: no call
    def calls(A, out):
        return "tessera_arg" in _source(te.create_prim_func([A, out]))

    A = te.placeholder((4, 1024), "int32", name="A")
    assert calls(A, topi.argmax(A, axis=1))
    assert not calls(A, topi.argmax(A, axis=1, select_last_index=True))
    assert not calls(A, topi.argmax(A, axis=0))
    for dtype in ("float32", "int16", "uint32"):
        X = te.placeholder((4, 1024), dtype, name="X")
        assert not calls(X, topi.argmax(X, axis=1)), dtype
    S = te.placeholder((4, 300), "int32", name="S")  # two passes, not the block search
    assert not calls(S, topi.argmax(S, axis=1))
    B = te.placeholder((4, 600), "int64", name="B")
    e = topi.argmax(te.compute(B.shape, lambda i, j: B[i, j] * 2, name="E"), axis=1)
    f = te.create_prim_func([B, e])
    assert "tessera_arg" not in _source(f)
    b = np.random.default_rng(0).integers(-9, 9, (4, 600)).astype("int64")
    out = np.empty(4, "int32")
    ts.build(f, target="c")(b, out)
    np.testing.assert_array_equal(out, np.argmax(b * 2, axis=1))


def test_only_where_the_automatic_schedule_runs():
    A = te.placeholder((8, 1024), "float64", name="A")
    func = te.create_prim_func([A, topi.argmax(A, axis=1)])
    a = np.random.default_rng(2).standard_normal((8, 1024))
    assert "tessera_argmax_row_float64" in _source(func)
    assert "tessera_arg" not in _source(func, disabled_pass=[PASS])
    assert "tessera_arg" not in _source(func, disabled_pass=["tir.AutoSchedule"])
    assert "tessera_arg" not in _source(func, config={"tir.auto_schedule": False})
    # a function scheduled by hand keeps its blocks, and its results
    sch = ts.tir.Schedule(func)
    sch.parallel(sch.get_loops(sch.get_block("A_red"))[0])
    lib = ts.build(sch.mod, target="c")
    assert "tessera_arg" not in lib.get_source()
    out = np.empty(8, "int32")
    lib(a, out)
    np.testing.assert_array_equal(out, np.argmax(a, axis=1))
    # and the pass leaves a function that says it takes no automatic schedule
    no = func.with_attr("tessera.auto_schedule", False)
    ts.ir.assert_structural_equal(ts.transform.Pass(PASS)(no)["main"], no)


def test_cuda_keeps_the_cross_thread_search():
    A = te.placeholder((64, 2048), "int32", name="A")
    func = te.create_prim_func([A, topi.argmax(A, axis=1)])
    mod = ts.lower(func, target="cuda", stage="begin", auto_schedule=True)
    assert "tessera_arg" not in mod.script()
    # run by itself on a function bound to CUDA, the pass changes nothing either
    bound = func.with_attr("target", "cuda")
    ts.ir.assert_structural_equal(ts.transform.Pass(PASS)(bound)["main"], bound)


def test_the_definition_is_emitted_once_a_module():
    A = te.placeholder((3, 600), "float64", name="A")
    B = te.placeholder((5, 700), "float64", name="B")
    f = te.create_prim_func([A, B, topi.argmax(A, axis=1), topi.argmax(B, axis=1),
                             topi.argmin(B, axis=1)])
    src = ts.build(f, target="c").get_source()
    assert src.count("static int32_t tessera_argmax_row_float64(const void* row, int64_t n, "
                     "double last) {") == 1
    assert src.count("static int32_t tessera_argmin_row_float64(") == 1
    assert src.count("tessera_argmax_row_float64((") == 2  # the calls


def test_portable_c_without_avx512(tmp_path, monkeypatch):
    # the same search in GCC vector extensions (the #else side), built without AVX-512
    wrapper = tmp_path / "cc"
    wrapper.write_text('#!/bin/sh\nexec gcc "$@" -mno-avx512f\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path / "cache"))
    for dtype in DTYPES:
        for n in (512, 533, 1000):
            a = _rows(n, dtype)
            A = te.placeholder(a.shape, dtype, name="A")
            lib = ts.build(te.create_prim_func([A, topi.argmax(A, axis=1), topi.argmin(A, axis=1)]),
                           target="c")
            assert "__AVX512F__" in lib.get_source()
            imax, imin = np.empty(len(a), "int32"), np.empty(len(a), "int32")
            lib(a, imax, imin)
            np.testing.assert_array_equal(imax, np.argmax(a, axis=1))
            np.testing.assert_array_equal(imin, np.argmin(a, axis=1))
    assert os.path.isdir(tmp_path / "cache")
