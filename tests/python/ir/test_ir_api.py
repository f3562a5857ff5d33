"""The IR from Python: nodes as handles, printing, structural equality, passes and stages."""

import re

import pytest

import tessera
from tessera import ir, tir
from tessera.dsl import BuildManager, script as S
from tessera.error import TesseraTypeError
from tessera.transform import PassContext


def test_nodes_are_handles_with_fields():
    x = tir.Var("x", "int32")
    e = tir.Add(x, tir.const(1))
    assert isinstance(e, tir.Add) and isinstance(e, tir.PrimExpr)
    assert e.a.same_as(x) and e.b.value == 1 and e.dtype == "int32"
    cmp = tir.LT(x, tir.const(3))
    assert cmp.dtype == "bool"
    with pytest.raises(TesseraTypeError, match="operand types of Add differ: int32 vs. float32"):
        tir.Add(x, tir.const(1.0))


def test_dtype_names():
    assert tessera._core.canonical_dtype("fp16x16") == "float16x16"
    assert tessera._core.canonical_dtype("i32") == "int32"
    assert str(ir.DataType("u8x32")) == "uint8x32"
    with pytest.raises(TypeError, match="unknown data type"):
        ir.DataType("int7")


@S.prim_func
def kernel(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), n: S.i32):
    for i in range(n):
        b[i] = a[i] + 1


def test_lower_returns_module_that_prints():
    mod = BuildManager().lower(kernel)
    text = mod.script()
    assert text == str(mod)
    assert "@I.ir_module" in text and "def kernel(" in text
    assert 'T.handle("int32", "global")' in text
    assert "for i in range(n):" in text


def test_structural_equality_of_independent_parses():
    m1 = BuildManager().lower(kernel)

    @S.prim_func
    def kernel2(x: S.ptr("int32", "global"), y: S.ptr("int32", "global"), m: S.i32):
        for j in range(m):
            y[j] = x[j] + 1

    m2 = BuildManager().lower(kernel2, name="kernel")
    assert ir.structural_equal(m1, m2)
    assert ir.structural_hash(m1) == ir.structural_hash(m2)
    ir.assert_structural_equal(m1, m2)

    @S.prim_func
    def kernel3(x: S.ptr("int32", "global"), y: S.ptr("int32", "global"), m: S.i32):
        for j in range(m):
            y[j] = x[j] + 2

    m3 = BuildManager().lower(kernel3, name="kernel")
    assert not ir.structural_equal(m1, m3)
    # As TVM: each side's path to the first mismatch and its script with the object underlined.
    with pytest.raises(ValueError, match=r"caused by lhs at <root>\.functions\[I\.GlobalVar\(\"kernel\"\)\]\.body\.[a-z.]*\.value:") as err:
        ir.assert_structural_equal(m1, m3)
    assert "b_buf[i] = a_buf[i] + 1\n" in str(err.value) and "y_buf[j] = x_buf[j] + 2\n" in str(err.value)
    assert str(err.value).count("^\n") == 1 and str(err.value).endswith("^")


def test_simplify_canonicalises_comparisons():
    @S.prim_func
    def f(a: S.ptr("int32", "global"), n: S.i32):
        if n > 0:
            a[0] = 2 * 3 + 1

    text = BuildManager().lower(f).script()
    assert "if 0 < n:" in text
    assert re.search(r"a_buf\[0\] = 7", text), text


def test_disabled_pass_and_pass_context():
    @S.prim_func
    def f(a: S.ptr("int32", "global"), n: S.i32):
        if n > 0:
            a[0] = 1

    text = BuildManager(disabled_pass=["tir.Simplify"]).lower(f).script()
    assert "if n > 0:" in text
    with PassContext(disabled_pass=["tir.Simplify"]):
        assert "if n > 0:" in BuildManager().lower(f).script()
    assert "if 0 < n:" in BuildManager().lower(f).script()


def test_pass_context_rejects_unknown_config():
    with pytest.raises(AttributeError, match="Invalid config option 'tir.nope'.*tir.disable_vectorize"):
        PassContext(config={"tir.nope": True})
    with pytest.raises(TypeError, match="expects a bool"):
        PassContext(config={"tir.disable_vectorize": "yes"})
    assert PassContext.list_configs()["tessera.dump_ir"] == "str"


def test_stage_lowerer_runs_to_a_stage_and_resumes(tmp_path):
    from tessera.dsl.build_manager import collect_module

    mod, entry = collect_module(kernel)
    lw = tessera._core.StageLowerer(mod, "dsl", "X2_1204", entry)
    lw.run_to("begin")
    assert lw.current_stage == "begin"
    lw.run_to("cleanup")
    assert lw.current_stage == "cleanup"
    with pytest.raises(ValueError, match="already past stage 'loop'"):
        lw.run_to("loop")
    passes = [t[1] for t in lw.timings]
    assert passes == ["tir.BindTarget", "dsl.VerifyTargetFeatures", "tir.VerifyBufferBounds",
                      "dsl.FoldConstant", "tir.Simplify", "tir.HoistIfThenElse", "tir.RemoveNoOp",
                      "tir.SplitVectorizedLoops", "tir.VectorizeLoop", "dsl.LowerActiveLaneMask",
                      "dsl.RenameLoopVar",
                      "dsl.VerifyLocalMemory"]
    assert all(t[2] >= 0 for t in lw.timings)


def test_ir_dumps(tmp_path):
    @S.prim_func
    def dumped(a: S.ptr("int32", "global"), n: S.i32):
        if n > 0:
            a[0] = 1

    with PassContext(config={"tessera.dump_ir": str(tmp_path)}):
        BuildManager().build(dumped)
    files = sorted(p.name for p in (tmp_path / "dumped").iterdir())
    assert files[0] == "000_input.py"
    assert any(f.endswith("_cleanup_tir.Simplify.py") for f in files)
    assert any(f.endswith("_codegen.cl") for f in files)
    assert "if 0 < n:" in (tmp_path / "dumped" / next(f for f in files if "Simplify" in f)).read_text()


def test_op_registry():
    assert tir.op("tir.exp").num_inputs == 1
    with pytest.raises(AttributeError, match="unknown intrinsic 'tir.expp'; did you mean 'tir.exp"):
        tir.op("tir.expp")


def test_tensors_compare_by_contents():
    import numpy as np

    x = np.arange(10, dtype="int64")
    a, b = tessera.nd.array(x), tessera.nd.array(x.copy())
    assert ir.structural_equal(a, b) and ir.structural_hash(a) == ir.structural_hash(b)
    assert not ir.structural_equal(a, tessera.nd.array(x.reshape(2, 5)))
    assert not ir.structural_equal(a, tessera.nd.array(x.astype("int32")))
    assert not ir.structural_equal(a, tessera.nd.array(x + 1))
    assert not ir.structural_equal(a, tir.const(1))
