"""tessera.compat.akg: AKG's package over a checkout, its build/run interface and its TVM fork's
names on tessera; tessera.topi.testing's numpy references.

The checkout here is a small one written by the test (an operator module in AKG's style), so
that nothing outside tessera is needed; tests/compat/run_akg_tests.py runs AKG's own files.
"""

import sys
import textwrap

import numpy as np
import pytest

import tessera.compat
import tessera.compat.akg as akg_compat
from tessera.topi import testing as ref


# ------------------------------------------------------------------------------------------------
# topi.testing: checked against loops written out


def _conv_loops(a, w, stride, pads, groups=1):
    n, c, h, wd = a.shape
    k, cg, kh, kw = w.shape
    top, left, bottom, right = pads
    p = np.pad(a, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh, ow = (h + top + bottom - kh) // stride + 1, (wd + left + right - kw) // stride + 1
    out = np.zeros((n, k, oh, ow), a.dtype)
    for b in range(n):
        for o in range(k):
            g = o // (k // groups)
            for y in range(oh):
                for x in range(ow):
                    win = p[b, g * cg:(g + 1) * cg, y * stride:y * stride + kh, x * stride:x * stride + kw]
                    out[b, o, y, x] = np.sum(win * w[o])
    return out


@pytest.mark.parametrize("padding, pads, groups", [("VALID", (0, 0, 0, 0), 1), ("SAME", (1, 1, 1, 1), 1),
                                                   ((1, 0, 2, 1), (1, 0, 2, 1), 2)])
def test_conv2d_nchw_python(padding, pads, groups):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 7, 6)).astype("float32")
    w = rng.standard_normal((6, 4 // groups, 3, 3)).astype("float32")
    stride = 2 if groups == 2 else 1
    got = ref.conv2d_nchw_python(a, w, stride, padding, groups=groups)
    np.testing.assert_allclose(got, _conv_loops(a, w, stride, pads, groups), rtol=1e-5, atol=1e-5)


def test_depthwise_conv2d_python_nchw():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 3, 7, 7)).astype("float32")
    f = rng.standard_normal((3, 2, 3, 3)).astype("float32")
    got = ref.depthwise_conv2d_python_nchw(a, f, (2, 2), "SAME")
    assert got.shape == (1, 6, 4, 4)  # ceil(7 / 2) rows and columns
    full = np.zeros((1, 6, 4, 4), "float32")
    for c in range(3):
        for m in range(2):
            full[:, c * 2 + m] = _conv_loops(a[:, c:c + 1], f[c:c + 1, m:m + 1], 2, (1, 1, 1, 1))[:, 0]
    np.testing.assert_allclose(got, full, rtol=1e-5, atol=1e-5)
    valid = ref.depthwise_conv2d_python_nchw(a, f, 1, "VALID")
    assert valid.shape == (1, 6, 5, 5)


def test_dilate_python():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    got = ref.dilate_python(x, (1, 3), dilation_value=-1.0)
    assert got.shape == (2, 7)
    np.testing.assert_array_equal(got[:, ::3], x)
    assert (got[:, 1::3] == -1).all() and (got[:, 2::3] == -1).all()
    with pytest.raises(ValueError, match="2 strides"):
        ref.dilate_python(np.zeros((2, 2, 2)), (1, 1))


# ------------------------------------------------------------------------------------------------
# tessera.compat.akg over a checkout written here

_OPS = '''
import akg.tvm as tvm
import akg.topi as topi
from akg.topi.util import get_const_tuple


def packed_matmul(a, b, scale, target="llvm"):
    """C[i, j] = scale * sum_k A[i, k] * B[k // 4, j, k % 4], with the fork's names."""
    m, k = get_const_tuple(a.shape)
    r = tvm.reduce_axis((0, k), name="r")
    c = tvm.compute((m, b.shape[1]), lambda i, j: tvm.sum(
        a[i, r] * b[tvm.indexdiv(r, 4), j, tvm.indexmod(r, 4)], axis=r), name="c")
    out = tvm.compute(c.shape, lambda i, j: c[i, j] * tvm.const(scale, "float32"), name="out")
    return out, {"target_seen": target}


def add_in_place(ref, val):
    """ref += val in place (an output bound to ref's buffer), and a copy of the sum."""
    total = tvm.compute(ref.shape, lambda i: ref[i] + val[i], name="total", attrs={"create_sch_only": 1})
    buf = tvm.decl_buffer(ref.shape, ref.dtype, name="ref_buf")
    copy = tvm.compute(ref.shape, lambda i: total[i] * 1.0, name="copy")
    return copy, total, {"binds": {ref: buf, total: buf}}


def total(a):
    """The sum of all elements: a zero-dimensional result."""
    r = tvm.reduce_axis((0, a.shape[0]), name="r")
    return tvm.compute((), lambda: tvm.sum(a[r], axis=r), name="total")


def pools(data):
    """The fork's topi: pool (no dilation) and global_pool on NCHWc data with layout NCHW."""
    p = topi.nn.pool(data, kernel=[2, 2], stride=[2, 2], padding=[0, 0, 1, 1], pool_type="max",
                     ceil_mode=False, layout="NCHWc")
    return p, topi.nn.global_pool(data, "avg")
'''


@pytest.fixture
def akg(tmp_path):
    (tmp_path / "python" / "akg" / "ops").mkdir(parents=True)
    (tmp_path / "python" / "akg" / "utils").mkdir()
    (tmp_path / "python" / "akg" / "utils" / "__init__.py").write_text("LLVM = 'llvm'\n")
    (tmp_path / "python" / "akg" / "__init__.py").write_text("raise RuntimeError('AKG own __init__ must not run')\n")
    (tmp_path / "python" / "akg" / "ops" / "__init__.py").write_text("")
    (tmp_path / "python" / "akg" / "ops" / "mine.py").write_text(textwrap.dedent(_OPS))
    tessera.compat.uninstall()
    akg_compat.install(str(tmp_path))
    import akg

    yield akg
    akg_compat.uninstall()
    assert "akg" not in sys.modules and "tvm" not in sys.modules


def test_checkout_ops_build_and_run(akg):
    from akg.ops.mine import packed_matmul
    from akg.utils import kernel_exec as utils

    assert akg_compat.installed() is not None
    mod = utils.op_build_test(packed_matmul, ((3, 8), (2, 5, 4)), ("float32", "float32"), op_attrs=[0.5],
                              kernel_name="mm", attrs={"target": "llvm -mcpu=core-avx2"})
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 8)).astype("float32")
    b = rng.standard_normal((2, 5, 4)).astype("float32")
    expect = 0.5 * a @ b.transpose(0, 2, 1).reshape(8, 5)
    out = utils.mod_launch(mod, (a, b, np.full((3, 5), np.nan, "float32")), expect=expect)
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5)
    # AKG's launcher passes buffers by address: an output of another shape with as many
    # elements is filled in the kernel's order; a wrong element count is refused.
    flat = utils.mod_launch(mod, (a, b, np.zeros(15, "float32")))
    np.testing.assert_allclose(flat, expect.reshape(15), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="argument 2 has shape"):
        utils.mod_launch(mod, (a, b, np.zeros(14, "float32")))


def test_zero_dimensional_output(akg):
    from akg.ops.mine import total
    from akg.utils import kernel_exec as utils

    mod = utils.op_build_test(total, ((6,),), ("float32",), attrs={"target": "llvm"}, kernel_name="total")
    x = np.arange(6, dtype="float32")
    out = utils.mod_launch(mod, (x, np.zeros((1,), "float32")))  # AKG's harness passes shape (1,)
    assert out.shape == (1,) and out[0] == 15.0


def test_in_place_update(akg):
    from akg.ops.mine import add_in_place
    from akg.utils import kernel_exec as utils

    mod = utils.op_build_test(add_in_place, ((5,), (5,)), ("float32", "float32"), attrs={"target": "llvm"},
                              kernel_name="inplace")
    ref, val = np.arange(5, dtype="float32"), np.full(5, 10, "float32")
    new_ref, copy = utils.mod_launch(mod, (ref, val, np.zeros(5, "float32")), outputs=(0, -1))
    np.testing.assert_array_equal(new_ref, ref + val)
    np.testing.assert_array_equal(copy, ref + val)


def test_fork_topi_pools(akg):
    from akg.ops.mine import pools
    from akg.utils import kernel_exec as utils

    mod = utils.op_build_test(pools, ((1, 2, 5, 5, 4),), ("float32",), attrs={"target": "llvm"}, kernel_name="p")
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5, 4)).astype("float32")
    padded = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-np.inf)
    want_max = padded.reshape(1, 2, 3, 2, 3, 2, 4).max(axis=(3, 5))
    got_max, got_avg = utils.mod_launch(mod, (x, np.zeros((1, 2, 3, 3, 4), "float32"),
                                              np.zeros((1, 2, 1, 1, 4), "float32")), outputs=(-2, -1))
    np.testing.assert_allclose(got_max, want_max, rtol=1e-6)
    np.testing.assert_allclose(got_avg, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_fork_names(akg):
    import topi
    import tvm

    assert tvm is akg.tvm and topi is akg.topi
    import akg.tvm.expr

    assert akg.tvm.expr is tvm.expr
    x = tvm.var("x")
    assert isinstance(x, tvm.expr.Var) and isinstance(tvm.const(3), tvm.expr.IntImm)
    assert not isinstance(tvm.const(3), tvm.expr.UIntImm)  # the fork's node tessera never makes
    a = tvm.placeholder((4,), "float32", name="a")
    assert isinstance(a, tvm.tensor.Tensor)
    # The fork's node arrays: a shape is one, a list of Python ints is not.
    assert isinstance(a.shape, tvm.container.Array) and not isinstance([4], tvm.container.Array)
    from tessera.tir import ir_builder

    assert isinstance(tvm.ir_builder.create(), ir_builder.IRBuilder)
    assert str(tvm.ir_pass.Simplify(x * 2 - x)) == "x"
    assert tvm.context("llvm", 0) == tvm.cpu(0)
    assert topi.util.get_const_tuple(a.shape) == (4,)
    s = tvm.create_schedule(a.op)
    with pytest.raises(NotImplementedError, match="te schedule stages"):
        s[a].split(a.op.axis[0], 2)
    # Names of the fork that tessera lacks: naming them works, using them says what is missing.
    with pytest.raises(NotImplementedError, match="tvm._api_internal._Lower"):
        tvm._api_internal._Lower()
    from tvm.autotvm.env import AutotvmGlobalScope

    with pytest.raises(NotImplementedError, match="autotvm.env of AKG.s TVM fork is not part of tessera"):
        AutotvmGlobalScope()

    @tvm.hybrid.script
    def hybrid_op(a):
        return a

    with pytest.raises(NotImplementedError, match="hybrid script"):
        hybrid_op(a)


def test_fork_register_func_and_ir_builder(akg):
    import tvm
    from akg.utils import kernel_exec as utils

    seen = {}

    @tvm.register_func("tessera.test.akg_attrs", override=True)
    def attrs_fn(inputs, attrs, n):
        seen.update(attrs, n=n)
        return inputs[0]

    a = tvm.placeholder((2, 3), "float32", name="a")
    assert attrs_fn([a], {"flag": True, "axis": [1], "name": "x"}, 5) is a
    # The fork's FFI hands containers over with IR constants inside, numbers as they are.
    assert seen["flag"].value == 1 and int(seen["axis"][0]) == 1 and seen["n"] == 5
    assert tvm.get_global_func("tessera.test.akg_attrs") is attrs_fn
    from tessera.runtime import remove_global_func

    remove_global_func("tessera.test.akg_attrs")

    def reverse_rows(data):
        def body(ins, outs):
            ib = tvm.ir_builder.create()
            with ib.for_range_n(data.shape[:1], "r") as r:
                with ib.for_range(0, 3) as c:
                    ib.store(outs[0], r + [c], ib.load(ins[0], [1 - r[0], c]) * 2.0)
            return ib.get()

        return tvm.extern((2, 3), [data], body, name="rev", dtype="float32")

    mod = utils.op_build_test(reverse_rows, ((2, 3),), ("float32",), attrs={"target": "llvm"}, kernel_name="rev")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(utils.mod_launch(mod, (x, np.zeros((2, 3), "float32"))), x[::-1] * 2)


def test_unavailable_targets(akg):
    from akg.ops.mine import packed_matmul
    from akg.utils import kernel_exec as utils

    with pytest.raises(NotImplementedError, match="cce .Ascend. target is not available"):
        utils.op_build_test(packed_matmul, ((4, 4), (1, 4, 4)), ("float32", "float32"), op_attrs=[1.0])
    with pytest.raises(NotImplementedError, match="Ascend kernel by name"):
        utils.mod_launch("some_kernel", ())
    from akg.backend import aic_model

    with pytest.raises(NotImplementedError, match="Ascend back end"):
        aic_model.launch()


def test_install_errors(tmp_path):
    with pytest.raises(ValueError, match="not an AKG source checkout"):
        akg_compat.install(str(tmp_path))
    assert akg_compat.installed() is None
