"""The T/I dialects: region inference, root blocks, macros, modules, Python operators on
expressions, and round trips of IR built directly."""

import pytest

import tessera as ts
from tessera import _core, tir
from tessera.script import ir as I
from tessera.script import tir as T
from corpus import elementwise, lowlevel, macros, matmul, modules, nested_blocks


def blocks_of(func):
    """BlockNodes of a function, outermost first (the root included)."""
    out = []

    def walk(s):
        if isinstance(s, _core.BlockRealize):
            out.append(s.block)
            walk(s.block.body)
        elif isinstance(s, _core.SeqStmt):
            for x in s.seq:
                walk(x)
        elif isinstance(s, (_core.For, _core.LetStmt, _core.DeclBuffer, _core.Allocate, _core.AttrStmt,
                            _core.AssertStmt, _core.While)):
            walk(s.body)
        elif isinstance(s, _core.IfThenElse):
            walk(s.then_case)
            if s.else_case is not None:
                walk(s.else_case)
    walk(func.body)
    return out


def assert_same_program(a, b):
    """Structural equality of two functions whatever their names."""
    name = _core.StringImm("f")
    ts.ir.assert_structural_equal(a.with_attr("global_symbol", name), b.with_attr("global_symbol", name))


def test_verbose_and_concise_forms_are_equal():
    assert_same_program(matmul.matmul, matmul.matmul_verbose)


def test_verbose_and_concise_elementwise():
    @T.prim_func
    def verbose(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            for i in T.serial(0, 16):
                for j in T.serial(0, 16):
                    with T.block("B"):
                        vi = T.axis.spatial(16, i)
                        vj = T.axis.spatial(16, j)
                        T.reads([A[vi, vj]])
                        T.writes([B[vi, vj]])
                        B[vi, vj] = T.max(A[vi, vj], T.float32(0))

    assert_same_program(elementwise.relu, verbose)


def test_regions_are_inferred_over_block_iterators():
    root, block = blocks_of(matmul.matmul)
    assert root.name_hint == "root"
    # As in TVM, a reduction block (one with T.init()) does not list what it writes among its reads.
    assert [str(r) for r in block.reads] == ["A[vi, vk]", "B[vk, vj]"]
    assert [str(r) for r in block.writes] == ["C[vi, vj]"]
    _, outer, inner = blocks_of(nested_blocks.two_level_nest_with_init)
    assert [str(r) for r in outer.reads] == ["A[vi, 0:32]"]
    assert [str(r) for r in inner.reads] == ["A[vi, vk0 * 8:vk0 * 8 + 8]"]
    assert [str(r) for r in outer.writes] == ["B[vi]"]


def test_a_float_computed_index_reads_the_whole_dimension():
    # As in TVM: an index computed in floating point has no bound (nearest-neighbour resize).
    @T.prim_func
    def resize(x: T.Buffer((8, 16), "float32"), y: T.Buffer((8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, T.Cast("int32", T.floor(T.Cast("float32", vj * 2) + T.float32(0.5)))]

    _, block = blocks_of(resize)
    assert [str(r) for r in block.reads] == ["x[vi, 0:16]"]
    assert [str(r) for r in block.writes] == ["y[vi, vj]"]


def test_an_explicit_empty_reads_is_kept():
    _, block = blocks_of(nested_blocks.opaque_block)
    assert list(block.reads) == []
    assert [str(r) for r in block.writes] == ["A[i]"]


def test_function_level_allocations_belong_to_the_root_block():
    root = blocks_of(matmul.MatmulRelu["main"])[0]
    assert root.name_hint == "root"
    assert [b.name for b in root.alloc_buffers] == ["Y"]
    assert '# with T.block("root"):' in matmul.MatmulRelu.script()


def test_functions_without_blocks_have_no_root_block():
    assert not isinstance(lowlevel.while_loop.body, _core.BlockRealize)


def test_repeated_macro_expansions_rename_blocks():
    names = [b.name_hint for b in blocks_of(macros.macro_used_twice)]
    assert names == ["root", "fill", "fill_1"]


def test_private_functions_have_no_global_symbol():
    assert "global_symbol" not in modules.private_function.attrs
    assert "global_symbol" not in modules.CallingModule["add_one"].attrs
    assert modules.CallingModule["twice"].attrs["global_symbol"].value == "twice"


def test_module_functions_call_each_other():
    main = modules.CallingModule["main"]
    text = modules.CallingModule.script()
    assert "cls.add_one(i) + cls.twice(i)" in text
    assert main.body.body.value.a.op.name_hint == "add_one"
    assert modules.CallingModule["add_one"].ret_type == "int32"


def test_module_attrs():
    assert modules.ModuleWithAttrs.attrs["version"].value == 2


def test_from_source_returns_a_prim_func_or_a_module():
    func = ts.script.from_source(elementwise.vector_add.script())
    assert isinstance(func, _core.PrimFunc)
    mod = ts.script.from_source(matmul.MatmulRelu.script())
    assert isinstance(mod, _core.IRModule)


def test_script_options():
    text = matmul.matmul.script(syntax_sugar=False, verbose_expr=True)
    assert "T.axis.spatial(128, i)" in text and "T.grid" not in text
    assert text.splitlines()[0] == "# from tessera.script import tir as T"  # a function: T only, as TVM
    numbered = elementwise.relu.script(print_line_numbers=True)
    assert numbered.splitlines()[0].startswith(" 1 ")


def test_python_operators_on_expressions():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    f = tir.Var("f", "float32")
    assert isinstance(x + 1, tir.Add) and (x + 1).b.dtype == "int32"
    assert isinstance(2 * x, tir.Mul)
    assert isinstance(x / y, tir.Div)
    assert isinstance(x // y, tir.FloorDiv)
    assert isinstance(x % 4, tir.FloorMod)
    assert isinstance(f / 2, tir.Div) and (f / 2).b.dtype == "float32"
    assert isinstance(x < y, tir.LT) and (x < y).dtype == "bool"
    assert isinstance(-x, tir.Mul) and (-x).b.value == -1  # as TVM: x * -1
    assert isinstance(x == y, tir.EQ)
    assert not bool(x == y) and bool(x == x)
    assert x in [y, x] and x not in [y]
    assert {x: 1}[x] == 1
    assert (x & 3).op_name == "tir.bitwise_and"
    assert (x.astype("float32")).dtype == "float32"
    n64 = tir.Var("n", "int64")
    assert (n64 + 1).b.dtype == "int64"
    assert (x + f).dtype == "float32"  # the integer operand is cast
    with pytest.raises(TypeError):
        bool(x < y)


def test_buffer_indexing_outside_a_script():
    A = _core.Buffer.decl("A", "float32", [tir.const(16)])
    i = tir.Var("i", "int32")
    load = A[i]
    assert isinstance(load, tir.BufferLoad)
    vec = A[0:4] + T.Broadcast(T.float32(1), 4)
    assert vec.dtype == "float32x4"


def test_closures_and_helpers_build_expressions():
    def affine(a, b):
        return a * 4 + b

    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i, j in T.grid(4, 4):
            A[affine(i, j)] = T.float32(0)

    assert "A[i * 4 + j] = T.float32(0.0)" in f.script()


def test_a_python_if_is_decided_while_parsing():
    for flag in (True, False):
        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            if flag:
                A[0] = 1
            else:
                A[0] = 2

        assert ("A[0] = 1" in f.script()) == flag


def test_round_trip_of_ir_built_directly():
    A = _core.Buffer.decl("A", "int32", [tir.const(4)])
    pa = _core.Var("A", "handle")
    s = [_core.BufferStore(A, tir.const(k), [tir.const(k)]) for k in range(3)]
    nested = _core.SeqStmt([_core.SeqStmt([s[0], s[1]]), s[2]])
    p = _core.Var.pointer("p", "int8", "global")
    B = _core.Buffer(p, "float32", [tir.const(4)], name="B")
    B2 = _core.Buffer(A.data, "int32", [tir.const(4)], name="B")
    pb = _core.Var("B", "handle")
    funcs = [
        _core.PrimFunc([pa], nested, "void", [(pa, A)]),
        _core.PrimFunc([pa], _core.SeqStmt([s[0]]), "void", [(pa, A)]),
        _core.PrimFunc([pa], _core.BufferStore(B, tir.const(1.0), [tir.const(0)]), "void", [(pa, A)]),
        _core.PrimFunc([pa, pb], _core.BufferStore(B2, _core.BufferLoad(A, [tir.const(0)]), [tir.const(1)]),
                       "void", [(pa, A), (pb, B2)]),
    ]
    for func in funcs:
        func = func.with_attr("global_symbol", _core.StringImm("f"))
        again = ts.script.from_source(func.script())
        ts.ir.assert_structural_equal(func, again, map_free_vars=True)


def test_block_built_directly_round_trips():
    A = _core.Buffer.decl("A", "float32", [tir.const(8)])
    pa = _core.Var("A", "handle")
    i, vi = tir.Var("i", "int32"), tir.Var("vi", "int32")
    store = _core.BufferStore(A, tir.const(0.0), [vi])
    block = _core.Block([tir.IterVar(tir.Range(tir.const(0), tir.const(8)), vi, tir.IterVarType.DataPar)],
                        [], [_core.BufferRegion.full_region(A)], "B", store)
    loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
                   _core.BlockRealize([i], None, block))
    root = _core.BlockRealize([], None, _core.Block([], [], [], "root", loop))
    func = _core.PrimFunc([pa], root, "void", [(pa, A)], {"global_symbol": _core.StringImm("main")})
    text = func.script()
    assert "T.writes(A[0:8])" in text
    ts.ir.assert_structural_equal(func, ts.script.from_source(text))


def test_infer_block_access_regions_binding():
    _, block = blocks_of(matmul.matmul)
    reads, writes = _core.infer_block_access_regions(block)
    assert [str(r) for r in reads] == [str(r) for r in block.reads]


def test_module_decorator_on_functions_defined_elsewhere():
    @I.ir_module
    class Mod:
        main = elementwise.vector_add

    assert isinstance(Mod["main"], _core.PrimFunc)
