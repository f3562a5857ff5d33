"""IR and target objects TVM code builds by hand: IRModule({...}), IRModule.from_expr,
mod[...] = f, tir.ir_builder, Target, ir.diagnostics.override_renderer."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import DiagnosticError, TesseraValueError
from tessera.ir import diagnostics
from tessera.script import tir as T
from tessera.target import Target


@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i] + T.float32(1)


@T.prim_func(private=True)
def twice(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = A[i] * T.float32(2)


def test_irmodule_from_a_dict_and_its_map_view():
    mod = ts.ir.IRModule({"main": add_one})
    gv = mod.get_global_var("main")
    assert gv.name_hint == "main"
    assert "main" in mod and gv in mod and "other" not in mod
    ts.ir.assert_structural_equal(mod["main"], add_one)
    ts.ir.assert_structural_equal(mod[gv], add_one)
    assert [g.name_hint for g, _ in mod.functions.items()] == ["main"]
    assert mod.functions.keys()[0].name_hint == "main"
    ts.ir.assert_structural_equal(mod.functions[gv], add_one)
    gv0, f0 = mod.functions[0]  # the ordered pairs, as before
    assert gv0.name_hint == "main"
    mod2 = ts.ir.IRModule({ts.ir.GlobalVar("main"): add_one})
    ts.ir.assert_structural_equal(mod, mod2)


def test_irmodule_setitem_and_from_expr():
    mod = ts.ir.IRModule.from_expr(add_one)
    assert [g.name_hint for g in mod.get_global_vars()] == ["add_one"]
    mod["helper"] = twice
    assert len(mod) == 2 and "helper" in mod
    mod["helper"] = add_one  # replaces
    assert len(mod) == 2
    assert [g.name_hint for g, _ in ts.ir.IRModule.from_expr(twice).functions] == ["main"]


def test_irmodule_dict_of_a_non_function_is_refused():
    with pytest.raises(TypeError, match="must be a PrimFunc"):
        ts.ir.IRModule({"main": 3})


def test_ir_builder_builds_a_function_that_runs():
    n = 10
    A = tir.Var("A", "handle")
    ib = tir.ir_builder.create()
    Abuf = T.Buffer((n,), "float32")
    a = ib.buffer_ptr(Abuf)
    tmp = ib.allocate("float32", (n,), name="tmp", scope="global")
    with ib.for_range(0, n, name="i") as i:
        tmp[i] = a[i] * 2.0
    with ib.for_range(0, n, name="i") as i:
        with ib.if_scope(i % 2 == 0):
            a[i] = tmp[i] + 1.0
        with ib.else_scope():
            a[i] = 0.0
    stmt = ib.get()
    assert isinstance(stmt, tir.Allocate)
    func = tir.PrimFunc([A], stmt, buffer_map=[(A, Abuf)]).with_attr("global_symbol", "f")
    x = np.arange(n, dtype="float32")
    ts.build(func, target="c")(x)
    expected = np.where(np.arange(n) % 2 == 0, np.arange(n) * 2.0 + 1.0, 0.0)
    np.testing.assert_allclose(x, expected)


def test_ir_builder_matches_the_same_program_in_tvmscript():
    ib = tir.ir_builder.create()
    p = ib.pointer("int32", name="A")
    with ib.for_range(0, 4, name="i") as i:
        with ib.while_loop(p[i] < 10):
            p[i] = p[i] + 1
    text = ib.get().script()
    assert "while A[i] < 10:" in text
    assert "A[i] = A[i] + 1" in text


def test_ir_builder_errors():
    ib = tir.ir_builder.create()
    with pytest.raises(TesseraValueError, match="else_scope must come right after an if_scope"):
        ib.else_scope()
    p = ib.pointer("int32")
    with pytest.raises(TypeError, match="in a buffer pointer of"):
        p[0] = T.float32(1)


def test_target_strings_dicts_and_attributes():
    t = Target("cuda -arch=sm_80 -max_num_threads=512", host="llvm")
    assert t.kind.name == "cuda" and t.arch == "sm_80" and t.max_num_threads == 512
    assert t.keys == ["cuda", "gpu"] and t.thread_warp_size == 32
    assert t.host.kind.name == "llvm"
    assert Target(t.export()) == t
    cpu = Target("llvm -mcpu=skylake-avx512 -mattr=+avx2,+fma -num-cores=4")
    assert cpu.mcpu == "skylake-avx512" and cpu.mattr == ["+avx2", "+fma"]
    assert cpu.attrs["num-cores"] == 4 and cpu.keys == ["cpu"]
    assert Target("llvm").mcpu == "" and Target("llvm").max_num_threads is None
    d = Target({"kind": "cuda", "arch": "sm_86", "host": {"kind": "llvm"}})
    assert d.arch == "sm_86" and d.host.kind.name == "llvm"
    assert str(Target("c")) == "c -keys=cpu"


def test_target_errors():
    with pytest.raises(TesseraValueError, match="unknown target kind 'tpu'"):
        Target("tpu")
    with pytest.raises(TesseraValueError, match="has no option 'bogus'"):
        Target("llvm -bogus=1")
    with pytest.raises(TesseraValueError, match="takes an integer"):
        Target("cuda -max_num_threads=lots")


def test_target_current_and_build():
    assert Target.current() is None
    with Target("llvm") as t:
        assert Target.current() is t
        lib = ts.build(add_one)  # the current target
    assert Target.current() is None
    a, b = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a + 1)
    lib2 = ts.build(add_one, target=Target("c"))
    b[:] = 0
    lib2(a, b)
    np.testing.assert_allclose(b, a + 1)


def test_override_renderer_sees_the_parse_error():
    seen = []
    diagnostics.override_renderer(lambda ctx: seen.extend(ctx.diagnostics))
    try:
        with pytest.raises(DiagnosticError):
            ts.script.from_source(
                "@T.prim_func\n"
                "def f(a: T.handle):\n"
                "    A = T.match_buffer((16, 16), 'float32')\n")
    finally:
        diagnostics.override_renderer(None)
    assert len(seen) == 1
    assert seen[0].span.line == 3 and seen[0].level == diagnostics.DiagnosticLevel.ERROR
    assert "match_buffer" in seen[0].message
    with pytest.raises(DiagnosticError):  # the default again: nothing recorded
        ts.script.from_source("@T.prim_func\ndef g():\n    T.evaluate(undefined_name)\n")
    assert len(seen) == 1


def test_register_op_attr_levels_and_decorator():
    from tessera.ir import op_attr, register_op_attr

    @register_op_attr("test.op_attr_op", "FTest")
    def first(x):
        return x

    assert op_attr("test.op_attr_op", "FTest") is first
    assert op_attr("test.op_attr_op", "Other", default=7) == 7
    # A lower level is ignored, a higher one replaces, an equal one is an error.
    register_op_attr("test.op_attr_op", "FTest", "low", level=5)
    assert op_attr("test.op_attr_op", "FTest") is first
    register_op_attr("test.op_attr_op", "FTest", "high", level=20)
    assert op_attr("test.op_attr_op", "FTest") == "high"
    with pytest.raises(TesseraValueError, match="already registered at level 20"):
        register_op_attr("test.op_attr_op", "FTest", "again", level=20)
    with pytest.raises(TesseraValueError, match="expected an operator name"):
        register_op_attr("", "FTest", 1)
