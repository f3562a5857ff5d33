"""PassContext with the host pipeline: registered config keys and records, disabled passes,
dumps and timings."""

import os

import numpy as np
import pytest

import tessera as ts
from tessera import lower
from tessera.script import tir as T
from tessera.transform import PassContext

SPEC_KEYS = ["tir.noalias", "tir.disable_vectorize", "tir.disable_assert", "tir.disable_storage_rewrite",
             "tir.disable_cse_tir", "tir.instrument_bound_checkers", "tir.use_async_copy", "tir.ptx_ldg32",
             "tir.enable_debug", "tir.UnrollLoop", "tir.Simplify", "tir.LoopPartition", "tir.HoistIfThenElse",
             "tir.RemoveNoOp", "tir.InjectDoubleBuffer", "tessera.dump_ir", "tessera.dump_ir_unchanged",
             "tessera.time_passes", "tessera.verify_each_pass", "tessera.verify_between_stages"]


@T.prim_func
def kernel(A: T.Buffer((64,), "float32")):
    for i in T.vectorized(64):
        A[i] = A[i] + T.float32(1)


def test_registered_keys_cover_the_spec():
    configs = PassContext.list_configs()
    for key in SPEC_KEYS:
        assert key in configs, key
    assert configs["tir.UnrollLoop"] == "dict"


def test_unknown_key_lists_the_valid_ones():
    with pytest.raises(AttributeError, match="Invalid config option 'tir.nonsense'; valid options are:.*tir.UnrollLoop"):
        PassContext(config={"tir.nonsense": True})


def test_wrong_value_type_is_rejected():
    with pytest.raises(TypeError, match="expects a bool"):
        PassContext(config={"tir.disable_vectorize": "yes"})


def test_record_fields_are_checked():
    PassContext(config={"tir.UnrollLoop": {"auto_max_step": 8, "explicit_unroll": False}})
    with pytest.raises(AttributeError, match="Invalid field 'max_step' of config option 'tir.UnrollLoop'.*auto_max_step"):
        PassContext(config={"tir.UnrollLoop": {"max_step": 8}})
    with pytest.raises(TypeError, match="field 'explicit_unroll' of config option 'tir.UnrollLoop' expects a bool"):
        PassContext(config={"tir.UnrollLoop": {"explicit_unroll": "no"}})


def test_disabled_pass_and_disable_vectorize_still_build_correct_code():
    for ctx in (PassContext(disabled_pass=["tir.VectorizeLoop"]),
                PassContext(config={"tir.disable_vectorize": True})):
        with ctx:
            lib = ts.build(kernel)
        assert "vector_size" not in lib.get_source()
        a = np.zeros(64, "float32")
        lib(a)
        np.testing.assert_array_equal(a, np.ones(64))


def test_dumps_and_timings(tmp_path):
    with PassContext(config={"tessera.dump_ir": str(tmp_path)}):
        lw = lower.StageLowerer(kernel, target="c")
        lw.run_to("cleanup")
        assert lw.current_stage == "cleanup"
        lib = lw.run_to("end")
    files = sorted(os.listdir(tmp_path / "kernel"))
    assert files[0] == "000_input.py"
    assert any(f.endswith("_loop_tir.VectorizeLoop.py") for f in files)
    assert any(f.endswith("_codegen.c") and len(f) == len("000_codegen.c") for f in files)
    passes = [t[1] for t in lw.timings]
    assert passes.index("tir.FlattenBuffer") < passes.index("tir.VectorizeLoop") < passes.index("tir.MakePackedAPI")
    a = np.zeros(64, "float32")
    lib(a)
    assert a[0] == 1


def test_ts_lower_is_also_the_lower_module():
    assert ts.lower is lower
    mod = ts.lower(kernel, target="llvm", stage="flatten")
    assert "T.vectorized" in mod.script()


def test_print_ir_prints_the_module_and_returns_it(capsys):
    import tessera as ts
    from tessera.script import tir as T

    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for i in range(4):
            if i < 8:
                A[i] = T.float32(1)

    mod = ts.ir.IRModule.from_expr(func)
    seq = ts.ir.transform.Sequential([ts.transform.PrintIR("before"), ts.tir.transform.Simplify()])
    after = seq(mod)
    out = capsys.readouterr().out
    assert out.startswith("before\n") and "if i < 8:" in out
    assert ts.transform.PrintIR()(mod).same_as(mod)
    assert ts.ir.module.IRModule is ts.ir.IRModule
    assert "if" not in after.script()
