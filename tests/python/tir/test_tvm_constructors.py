"""Node constructors with TVM's argument spellings (Python numbers, tuples, None, int kinds),
PrimType/PointerType, and Range's (begin, end) meaning; compared with TVMScript."""

import pytest

from tessera import ir, tir
from tessera.script import tir as T


@T.prim_func
def _expected_store(A: T.Buffer((4, 8), "float32")):
    for i in range(8):
        A[0, i] = T.float32(0.5)


def test_prim_func_from_python_values():
    a = tir.Var("a", "handle")
    buf = tir.decl_buffer((4, 8), "float32", name="A")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 8, 0, tir.BufferStore(buf, 0.5, [0, i]))
    func = tir.PrimFunc(params=[a], body=body, ret_type=None, buffer_map={a: buf}, attrs=None)
    expected = _expected_store
    for key in expected.attrs.keys():
        func = func.with_attr(key, expected.attrs[key])
    ir.assert_structural_equal(func, expected, map_free_vars=True)
    assert str(func.ret_type) == "void"
    typed = tir.PrimFunc([], tir.Evaluate(0), ret_type=ir.PrimType("int64"), attrs={"k": 3})
    assert str(typed.ret_type) == "int64" and typed.attrs["k"].value == 3


def test_module_and_iter_var():
    assert len(ir.IRModule(None, None)) == 0
    iv = tir.IterVar((2, 10), "v", iter_type=1, thread_tag="threadIdx.x")
    assert iv.iter_type == tir.IterVar.ThreadIndex
    assert (iv.dom.min.value, iv.dom.extent.value, iv.var.name) == (2, 8, "v")
    assert tir.IterVar(None, tir.Var("r", "int64"), tir.IterVar.CommReduce).dom is None


def test_range_is_begin_end():
    r = ir.Range(3, 10)
    assert (r.min.value, r.extent.value) == (3, 7)
    assert ir.Range(5).extent.value == 5 and ir.Range(5).min.value == 0
    n = tir.Var("n", "int64")
    sym = ir.Range(0, n)
    assert sym.extent.same_as(n) and sym.min.dtype == "int64"
    assert ir.Range.from_min_extent(3, 10).extent.value == 10


def test_expression_nodes_from_numbers():
    assert tir.Select(True, 0, 2).script() == "T.Select(T.bool(True), 0, 2)"
    x = tir.Var("x", "int32")
    assert str(tir.Let(x, 1, x + 1).value) == "1"
    assert tir.Ramp(x, 1, 4).lanes == 4 and tir.Broadcast(0.5, 8).dtype == "float32x8"
    # Lanes are an int32 constant, whatever integer type they were given in (as TVM's).
    for node in (tir.Ramp(x, 1, tir.IntImm("int64", 11)), tir.Broadcast(x, tir.IntImm("int64", 11))):
        assert isinstance(node.lanes, tir.IntImm) and node.lanes.dtype == "int32" and int(node.lanes) == 11
    load = tir.BufferLoad(tir.decl_buffer((4,), "int8"), [3])
    assert load.indices[0].value == 3
    assert tir.Add(x, 2).b.value == 2


def test_pointer_and_prim_types():
    v = tir.Var("v", ir.PointerType(ir.PrimType("float32"), "local"))
    assert v.scope == "local" and v.pointer_element == "float32"
    assert v.type_annotation == ir.PointerType(ir.PrimType("float32"), "local")
    assert v.type_annotation.element_type == ir.PrimType("float32")
    assert tir.Var("g", ir.PointerType(ir.PrimType("int8"))).scope == "global"
    assert ir.PrimType("float16").script() == "T.float16"
    assert ir.PointerType(ir.PrimType("int32"), "global").script() == 'T.handle("int32", "global")'
    assert tir.Var("s", ir.PrimType("int64")).dtype == "int64"


def test_allocate_and_statements_from_numbers():
    v = tir.Var("v", ir.PointerType(ir.PrimType("float32"), "local"))
    alloc = tir.Allocate(v, "float32", (10,), True, tir.Evaluate(1))
    assert alloc.extents[0].value == 10 and alloc.condition.dtype == "bool"
    assert tir.AttrStmt(None, "pragma", 2, tir.Evaluate(0)).value.value == 2
    assert tir.AssertStmt(True, "msg", tir.Evaluate(0)).message.value == "msg"


def test_bad_arguments_still_fail():
    with pytest.raises(TypeError):
        tir.BufferStore("not a buffer", 0.1, [0])
    with pytest.raises(TypeError):
        tir.Ramp(tir.Var("x", "int32"), 1, tir.Var("n", "int32"))
    with pytest.raises(Exception, match="expected a number or an expression"):
        tir.Select("yes", 0, 1)


def test_standalone_objects_declare_their_free_variables():
    a = tir.Var("a", "float32")
    assert a.script(verbose_expr=True) == "a = T.float32()\na" and str(a) == "a"
    cast = tir.Cast("float64", a)
    assert cast.script(verbose_expr=True) == 'a = T.float32()\nT.Cast("float64", a)'
    buf = tir.decl_buffer((4,), "float16", name="A")
    assert buf.script(verbose_expr=True) == 'A = T.Buffer((4,), "float16")\nA'
    assert str(buf) == 'T.Buffer((4,), "float16")'
    iv = tir.IterVar((0, 8), "v", iter_type=tir.IterVar.DataPar)
    assert iv.script(verbose_expr=True) == 'v = T.int32()\nT.iter_var(v, T.Range(0, 8), "DataPar", "")'


def test_kinds_compare_with_tvm_integers():
    assert tir.ForKind.THREAD_BINDING == 4 and tir.IterVarType.CommReduce == 2


def test_module_repr_is_its_script():
    mod = ir.IRModule({"main": tir.PrimFunc([], tir.Evaluate(0))})
    assert repr(mod) == str(mod) and "def main():" in repr(mod)


def test_string_constants_and_llvm_intrinsics():
    s = tir.StringImm("attr_value")
    assert s == "attr_value" and s != "other" and s == tir.StringImm("attr_value")
    assert {s: 1}["attr_value"] == 1
    call = tir.call_llvm_intrin("int32x4", "llvm.donothing")
    assert call.script() == 'T.call_llvm_intrin("int32x4", "llvm.donothing")'
    assert tir.call_llvm_pure_intrin("int32", "llvm.x").dtype == "int32"


def test_type_script_takes_the_printing_options():
    assert ir.PrimType("float32").script(verbose_expr=True) == "T.float32"
    assert ir.PointerType(ir.PrimType("int8")).script(verbose_expr=True) == 'T.handle("int8")'


def test_constant_operands_print_as_nodes_and_round_trip():
    from tessera.script import ir as I

    assert str(ir.Range(0, 10)) == "I.Range(0, 10)"
    assert ir.structural_equal(I.Range(0, 10), ir.Range(0, 10))
    assert str(tir.Add(tir.IntImm("int64", 3), tir.IntImm("int64", 4))) == "T.Add(T.int64(3), T.int64(4))"
    assert str(tir.LT(1, 2)) == "T.LT(1, 2)"

    @T.prim_func
    def consts(A: T.Buffer((2,), "int32")):
        A[0] = T.Add(1, 2)
        A[1] = T.FloorMod(T.int32(7), 3)

    text = consts.script()
    assert "T.Add(1, 2)" in text and "T.FloorMod(7, 3)" in text
    from tessera.script import from_source

    ir.assert_structural_equal(from_source(text), consts)


def test_uint64_constants_above_int64_range():
    big = tir.const(2**64 - 1, "uint64")
    assert isinstance(big, tir.IntImm) and big.value == 2**64 - 1 and int(big) == 2**64 - 1
    assert tir.const(2**63, "uint64").value == 2**63 and tir.const(5, "uint64").value == 5
    with pytest.raises(ValueError, match="does not fit in uint64"):
        tir.const(2**64, "uint64")
    with pytest.raises(ValueError, match="does not fit in int64"):
        tir.const(2**63, "int64")


def test_assert_stmt_takes_a_string_message():
    nop = tir.Evaluate(0)
    stmt = tir.AssertStmt(tir.const(True, "bool"), "n must be positive", nop)
    assert isinstance(stmt.message, tir.StringImm) and stmt.message.value == "n must be positive"
    assert stmt.body.same_as(nop)


def test_stmt_list_and_stmt_seq_flatten_sequences():
    a, b, c = tir.Evaluate(1), tir.Evaluate(2), tir.Evaluate(3)
    nested = tir.SeqStmt([a, tir.SeqStmt([b, c])])
    assert [s.same_as(t) for s, t in zip(tir.stmt_list(nested), [a, b, c])] == [True] * 3
    assert tir.stmt_list(a)[0].same_as(a)
    seq = tir.stmt_seq(a, nested, tir.const(4))
    assert [int(s.value) for s in seq.seq] == [1, 1, 2, 3, 4]
    assert tir.stmt_seq(b).same_as(b)


def test_prim_func_takes_an_ir_builder_pointer_as_its_parameter():
    # As TVM: `ib.pointer(...)` is passed as the pointer variable itself (no buffer bound).
    import numpy as np

    import tessera as ts

    ib = tir.ir_builder.create()
    A = ib.pointer("float32", name="A")
    n = tir.Var("n", "int32")
    with ib.for_range(0, n, name="i") as i:
        A[i] = tir.Cast("float32", i) * 2.0
    func = tir.PrimFunc([A, n], ib.get())
    assert func.params[0].same_as(A.data)
    assert len(func.buffer_map) == 0
    lib = ts.build(func.with_attr("global_symbol", "main"), target="c")
    a = np.zeros(6, "float32")
    lib(a, 5)
    np.testing.assert_array_equal(a, np.array([0, 2, 4, 6, 8, 0], "float32"))


def test_ir_builder_scope_attr_on_a_pointer_annotates_its_buffer():
    ib = tir.ir_builder.create()
    data = ib.pointer("float32", name="data", scope="global")
    ib.scope_attr(data, "storage_scope", "global")
    data[0] = tir.const(1.0, "float32")
    stmt = ib.get()
    assert isinstance(stmt, tir.AttrStmt) and stmt.attr_key == "storage_scope"
    assert stmt.node.same_as(data.asobject())
    assert stmt.value.value == "global"


def test_slicing_a_buffer_in_python_gives_a_region_that_still_loads():
    A = tir.decl_buffer((8, 16), "float32", name="A")
    i = tir.Var("i", "int32")
    row = A[i, 4:12]
    # as TVM's Buffer.__getitem__: a BufferRegion (one row, 8 columns)
    assert isinstance(row, tir.BufferRegion)
    ir.assert_structural_equal(
        row, tir.BufferRegion(A, [ir.Range.from_min_extent(i, 1), ir.Range.from_min_extent(4, 8)]))
    # used as a value it is the vector load of the row's 8 elements
    load = row.as_expr()
    assert isinstance(load, tir.BufferLoad) and load.dtype == "float32x8"
    # a slice with a step is no region: it stays a strided access
    assert not isinstance(A[0:8:2, 0], tir.BufferRegion)
    # a block's regions may be slices and whole buffers, without any slice too
    block = tir.Block(iter_vars=[], reads=[A], writes=[A[0:2, 0:16]], name_hint="b",
                      body=tir.Evaluate(0))
    assert block.reads[0].region[1].extent.value == 16
    assert block.writes[0].region[0].extent.value == 2
    with pytest.raises(TypeError):
        tir.Block(iter_vars=[], reads=[3], writes=[], name_hint="b", body=tir.Evaluate(0))
