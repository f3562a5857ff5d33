"""topi.sort / argsort / topk over the last axis built with no schedule for the host: the pass
tir.SortRows makes topi's quadratic rank-and-gather blocks one call a row of the code generator's
row sort (tessera_sort_row_<order>_<dtype>_<outputs>, include/tessera/target/sort_rows.h).
Checked exactly against numpy's stable order: ties in index order, NaN after every number in
both orders, -inf, -0.0 equal to +0.0 (and kept as -0.0), every integer type's extremes, row
lengths around the runs of 16 and the merges, past the 1024 elements on the stack, topk's
one-pass selection (k * 8 < n) and its merge sort. The te form, hand schedules and CUDA keep
topi's blocks."""

import numpy as np
import pytest
from topi_testing import TARGET, Kernels

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T

PASS = "tir.SortRows"
pytestmark = pytest.mark.skipif(TARGET != "c", reason="the row sort is the host's")
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64")


def _order(a, ascending):
    """numpy's stable order along the last axis (NaN last in both orders)."""
    if a.dtype.kind == "f":
        key = a if ascending else -a
    else:
        key = a if ascending else ~a  # order-reversing without overflow
    return np.argsort(key, axis=-1, kind="stable")


def _rows(n, dtype, count=6, seed=0):
    rng = np.random.default_rng(seed + n)
    if dtype.startswith("float"):
        rows = [rng.standard_normal(n), rng.integers(-3, 4, n).astype(float)]
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0])
        rows += [special[rng.integers(0, len(special), n)] for _ in range(count - 2)]
        return np.stack(rows).astype(dtype)
    info = np.iinfo(dtype)
    rows = [rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),
            rng.integers(0, 3, n).astype(dtype)]
    edges = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    rows += [edges[rng.integers(0, len(edges), n)] for _ in range(count - 2)]
    return np.stack(rows)


def _same(got, want):
    """Exactly equal, NaN for NaN and the sign of zeros too."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


def _source(func, target="c", **ctx):
    with ts.transform.PassContext(**ctx):
        return ts.build(func, target=target).get_source()


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_rows_as_numpy(dtype):
    k = Kernels()
    lengths = (2, 3, 16, 17, 31, 33, 128, 300)
    for n in lengths:
        A = te.placeholder((6, n), dtype, name="A")
        k.add(f"asc{n}", [A], topi.sort(A, axis=1))
        k.add(f"desc{n}", [A], topi.sort(A, axis=-1, is_ascend=False))
        k.add(f"arg{n}", [A], topi.argsort(A, axis=1, dtype="int32"))
        k.add(f"arg_desc{n}", [A], topi.argsort(A, axis=1, is_ascend=0))  # float32 indices
    for n in lengths:
        a = _rows(n, dtype)
        for name, ascending in (("asc", True), ("desc", False)):
            _same(k.run(f"{name}{n}", a), np.take_along_axis(a, _order(a, ascending), -1))
        _same(k.run(f"arg{n}", a), _order(a, True).astype("int32"))
        _same(k.run(f"arg_desc{n}", a), _order(a, False).astype("float32"))
    assert k._lib["all"].get_source().count("tessera_sort_row_") >= 8 * len(lengths)


def _ranged_rows(n, dtype, seed=0):
    """Rows of n: keys in a narrow range (the network's narrow words) and over the whole type."""
    rng = np.random.default_rng(seed + n)
    if dtype.startswith("float"):
        rows = [rng.integers(-300, 300, n), rng.standard_normal(n) * 1e3,
                rng.standard_normal(n)]
        return np.stack(rows).astype(dtype)
    info = np.iinfo(dtype)
    return np.stack([rng.integers(0, 3, n).astype(dtype),
                     (rng.integers(-100, 100, n) + (info.max // 2)).astype(dtype),
                     rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)])


@pytest.mark.parametrize("dtype", ("int8", "uint8", "int16", "int32", "uint32", "int64",
                                   "uint64", "float16", "float32", "float64"))
def test_long_rows_as_numpy(dtype):
    # past one block of the network (512, 256, 128 elements of 16-, 32-, 64-bit words), runs
    # merged a vector at a time, past the 8 KiB on the stack; narrow and whole-range keys
    lengths = (700, 2100, 5000)
    k = Kernels()
    for n in lengths:
        A = te.placeholder((3, n), dtype, name="A")
        k.add(f"asc{n}", [A], topi.sort(A, axis=1))
        k.add(f"desc{n}", [A], topi.sort(A, axis=1, is_ascend=False))
        k.add(f"arg{n}", [A], topi.argsort(A, axis=1, dtype="int32"))
        k.add(f"arg_desc{n}", [A], topi.argsort(A, axis=1, is_ascend=False, dtype="int64"))
    for n in lengths:
        a = _ranged_rows(n, dtype)
        _same(k.run(f"asc{n}", a), np.take_along_axis(a, _order(a, True), -1))
        _same(k.run(f"desc{n}", a), np.take_along_axis(a, _order(a, False), -1))
        _same(k.run(f"arg{n}", a), _order(a, True).astype("int32"))
        _same(k.run(f"arg_desc{n}", a), _order(a, False))


@pytest.mark.parametrize("dtype,lengths", (("int8", (255, 256)), ("uint8", (255, 256)),
                                           ("int16", (65535, 65536)), ("float16", (65536,))))
def test_argsort_where_the_index_takes_another_word(dtype, lengths):
    # key << bits(n - 1) | index: 8-bit keys in 16-bit words up to n = 256, 16-bit keys in
    # 32-bit words up to 65536; past that the next word
    k = Kernels()
    for n in lengths:
        A = te.placeholder((2, n), dtype, name="A")
        k.add(f"arg{n}", [A], topi.argsort(A, axis=1, dtype="int32"))
        k.add(f"both{n}", [A], topi.topk(A, n, axis=1, ret_type="both", is_ascend=True,
                                         dtype="int32"))
    for n in lengths:
        a = _ranged_rows(n, dtype)[1:]
        _same(k.run(f"arg{n}", a), _order(a, True).astype("int32"))
        values, indices = k.run(f"both{n}", a)
        _same(indices, _order(a, True).astype("int32"))
        _same(values, np.take_along_axis(a, _order(a, True), -1))


@pytest.mark.parametrize("dtype,bits", (("float16", "uint16"), ("float32", "uint32"),
                                        ("float64", "uint64")))
def test_sorted_values_keep_each_nan_and_zero(dtype, bits):
    # the values sort its bare keys; NaN of either sign and any payload, and the zeros, come back
    # from the row in its order
    rng = np.random.default_rng(3)
    n = 300
    a = rng.standard_normal((4, n)).astype(dtype)
    nbits = np.dtype(bits).itemsize * 8
    sign = np.array(1 << (nbits - 1), dtype=bits)
    nans = (np.full(8, np.nan, dtype).view(bits) | np.arange(1, 9).astype(bits)).view(dtype)
    for r in range(4):
        at = rng.choice(n, 40, replace=False)
        a[r, at[:8]] = nans
        a[r, at[8:12]] = (nans[:4].view(bits) | sign).view(dtype)  # negative NaN
        a[r, at[12:26]] = 0.0
        a[r, at[26:40]] = -0.0
    A = te.placeholder(a.shape, dtype, name="A")
    k = Kernels()
    k.add("asc", [A], topi.sort(A, axis=1))
    k.add("desc", [A], topi.sort(A, axis=1, is_ascend=False))
    for name, ascending in (("asc", True), ("desc", False)):
        want = np.take_along_axis(a, _order(a, ascending), -1)
        np.testing.assert_array_equal(k.run(name, a).view(bits), want.view(bits))


@pytest.mark.parametrize("dtype", ("int32", "float32", "float64", "uint64"))
def test_topk_rows_as_numpy(dtype):
    # n > 8k: one pass keeping the k best; else the merge sort
    for n, kk in ((200, 1), (200, 8), (200, 24), (200, 25), (64, 8), (9, 9), (1100, 100)):
        a = _rows(n, dtype)
        A = te.placeholder(a.shape, dtype, name="A")
        k = Kernels()
        k.add("both", [A], topi.topk(A, kk, axis=1))
        k.add("asc_idx", [A], topi.topk(A, kk, axis=1, ret_type="indices", is_ascend=True,
                                        dtype="int32"))
        k.add("values", [A], topi.topk(A, kk, axis=1, ret_type="values"))
        desc, asc = _order(a, False)[:, :kk], _order(a, True)[:, :kk]
        values, indices = k.run("both", a)
        _same(indices, desc.astype("int64"))
        _same(values, np.take_along_axis(a, desc, -1))
        _same(k.run("asc_idx", a), asc.astype("int32"))
        _same(k.run("values", a), np.take_along_axis(a, desc, -1))


def test_long_rows_past_the_stack_and_leading_axes():
    rng = np.random.default_rng(5)
    a = rng.integers(-40, 40, (2, 3, 1500)).astype("float32")
    a[0, 1, ::7] = np.nan
    a[1, 2, 3::5] = -0.0
    A = te.placeholder(a.shape, "float32", name="A")
    k = Kernels()
    k.add("sort", [A], topi.sort(A, axis=2))
    k.add("arg", [A], topi.argsort(A, axis=-1, is_ascend=False, dtype="int64"))
    _same(k.run("sort", a), np.take_along_axis(a, _order(a, True), -1))
    _same(k.run("arg", a), _order(a, False))
    v = rng.standard_normal(1029)
    V = te.placeholder(v.shape, "float64", name="V")  # one row: no leading axis
    k1 = Kernels()
    k1.add("one", [V], topi.argsort(V, dtype="int32"))
    _same(k1.run("one", v), np.argsort(v, kind="stable").astype("int32"))
    assert "tessera_sort_row_asc_float64_i_int32(" in k1._lib["all"].get_source()


def test_the_pass_makes_one_call_a_row():
    A = te.placeholder((4, 7), "float32", name="A")
    func = te.create_prim_func([A] + topi.topk(A, 3, axis=1))
    got = ts.transform.Pass(PASS)(func)["main"]

    @T.prim_func
    def expected(A: T.Buffer((4, 7), "float32"), T_topk_values: T.Buffer((4, 3), "float32"),
                 T_topk_indices: T.Buffer((4, 3), "int64")):
        T.func_attr({"tir.noalias": True})
        for i0 in range(4):
            with T.block("T_topk_values"):
                v_i0 = T.axis.spatial(4, i0)
                T.reads(A[v_i0, 0:7])
                T.writes(T_topk_values[v_i0, 0:3], T_topk_indices[v_i0, 0:3])
                T.call_extern("int32", "tessera_sort_row_desc_float32_vi_int64",
                              T.address_of(A[v_i0, 0]), T.int64(7),
                              T.address_of(T_topk_values[v_i0, 0]),
                              T.address_of(T_topk_indices[v_i0, 0]), T.int64(3), A[v_i0, 6])

    ts.ir.assert_structural_equal(got.with_attr("global_symbol", "main"),
                                  expected.with_attr("global_symbol", "main"))


def test_the_te_form_is_topis_blocks():
    A = te.placeholder((4, 16), "int32", name="A")
    func = te.create_prim_func([A, topi.sort(A, axis=1)])
    assert "T_sort_rank" in func.script() and "tessera_sort" not in func.script()


def test_names_do_not_matter_the_structure_does():
    A = te.placeholder((4, 9), "int32", name="A")
    text = te.create_prim_func([A, topi.argsort(A, axis=1, dtype="int32")]).script()
    renamed = text.replace("T_argsort_rank", "K").replace('"T_argsort"', '"G"')
    assert "tessera_sort_row_asc_int32_i_int32" in \
        ts.transform.Pass(PASS)(ts.script.from_source(renamed)).script()
    # one thing changed is not topi's sort: left as it is
    for before, after in (
        ("v_j < v_i1", "v_j <= v_i1"),  # not stable
        ("T_argsort_rank[v_i0, v_i1] = 0", "T_argsort_rank[v_i0, v_i1] = 1"),  # another start
        ("T_argsort_rank[v_i0, v_i] == v_i1", "T_argsort_rank[v_i0, v_i] == v_i1 + 1"),
    ):
        assert before in text, before
        changed = ts.script.from_source(text.replace(before, after))
        out = ts.transform.Pass(PASS)(changed)
        assert "tessera_sort" not in out.script(), before
        ts.ir.assert_structural_equal(out["main"], changed)


def test_other_sorts_keep_their_blocks():
    def calls(A, out):
        return "tessera_sort_row" in _source(te.create_prim_func([A, out]))

    A = te.placeholder((4, 10), "int32", name="A")
    assert calls(A, topi.sort(A, axis=1))
    assert not calls(A, topi.sort(A, axis=0))  # not the last axis
    H = te.placeholder((4, 10), "float16", name="H")
    assert calls(H, topi.sort(H, axis=1))
    G = te.placeholder((4, 10), "bfloat16", name="G")  # a type the row sort does not take
    g = te.create_prim_func([G, topi.sort(G, axis=1)])
    ts.ir.assert_structural_equal(ts.transform.Pass(PASS)(g)["main"], g)
    B = te.placeholder((4, 10), "int32", name="B")
    e = topi.sort(te.compute(B.shape, lambda i, j: B[i, j] * 3, name="E"), axis=1)
    f = te.create_prim_func([B, e])
    assert "tessera_sort_row" not in _source(f)  # a computed input
    b = np.random.default_rng(0).integers(-9, 9, (4, 10)).astype("int32")
    out = np.empty((4, 10), "int32")
    ts.build(f, target="c")(b, out)
    np.testing.assert_array_equal(out, np.sort(b * 3, axis=1))


def test_only_where_the_automatic_schedule_runs():
    A = te.placeholder((8, 40), "float64", name="A")
    func = te.create_prim_func([A, topi.argsort(A, axis=1, dtype="int32")])
    a = np.random.default_rng(2).standard_normal((8, 40))
    assert "tessera_sort_row_asc_float64_i_int32" in _source(func)
    assert "tessera_sort_row" not in _source(func, disabled_pass=[PASS])
    assert "tessera_sort_row" not in _source(func, disabled_pass=["tir.AutoSchedule"])
    assert "tessera_sort_row" not in _source(func, config={"tir.auto_schedule": False})
    sch = ts.tir.Schedule(func)
    sch.parallel(sch.get_loops(sch.get_block("T_argsort"))[0])
    lib = ts.build(sch.mod, target="c")
    assert "tessera_sort_row" not in lib.get_source()
    out = np.empty((8, 40), "int32")
    lib(a, out)
    np.testing.assert_array_equal(out, np.argsort(a, axis=1, kind="stable"))
    no = func.with_attr("tessera.auto_schedule", False)
    ts.ir.assert_structural_equal(ts.transform.Pass(PASS)(no)["main"], no)


def test_cuda_keeps_the_blocks():
    A = te.placeholder((16, 64), "float32", name="A")
    func = te.create_prim_func([A, topi.sort(A, axis=1)])
    mod = ts.lower(func, target="cuda", stage="begin", auto_schedule=True)
    assert "tessera_sort" not in mod.script()
    bound = func.with_attr("target", "cuda")
    ts.ir.assert_structural_equal(ts.transform.Pass(PASS)(bound)["main"], bound)


def test_the_definition_is_emitted_once_a_module():
    A = te.placeholder((3, 50), "float32", name="A")
    B = te.placeholder((5, 60), "float32", name="B")
    f = te.create_prim_func([A, B, topi.sort(A, axis=1), topi.sort(B, axis=1),
                             topi.argsort(B, axis=1, dtype="int32")])
    src = ts.build(f, target="c").get_source()
    assert src.count("static int32_t tessera_sort_row_asc_float32_v(") == 1
    assert src.count("static int32_t tessera_sort_row_asc_float32_i_int32(") == 1
    assert src.count("tessera_sort_row_asc_float32_v((") == 2  # the calls


def test_without_avx512(tmp_path, monkeypatch):
    # the network's GCC vector extensions built for a host without AVX-512
    wrapper = tmp_path / "cc"
    marker = tmp_path / "used"
    wrapper.write_text(f'#!/bin/sh\ntouch {marker}\nexec gcc "$@" -mno-avx512f\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path / "cache"))
    a = _rows(333, "float32")
    A = te.placeholder(a.shape, "float32", name="A")
    lib = ts.build(te.create_prim_func([A, topi.sort(A, axis=1),
                                        topi.argsort(A, axis=1, is_ascend=0, dtype="int32")]),
                   target="c")
    assert "tessera_sort_row_asc_float32_v((" in lib.get_source()
    values, indices = np.empty_like(a), np.empty(a.shape, "int32")
    lib(a, values, indices)
    _same(values, np.take_along_axis(a, _order(a, True), -1))
    _same(indices, _order(a, False).astype("int32"))
    assert marker.exists()
