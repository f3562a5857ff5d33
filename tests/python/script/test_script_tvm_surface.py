"""TVMScript surface details TVM code relies on: __name__ of parsed functions and modules,
loops over tuples of loop variables, macros as methods, launch_thread domains, block_attr
merging, `a if c else b` on expressions."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import DiagnosticError, TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T


def test_prim_func_and_module_carry_their_python_name():
    @T.prim_func(private=True)
    def scale_rows(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    assert scale_rows.__name__ == "scale_rows"
    assert "global_symbol" not in scale_rows.attrs

    @I.ir_module
    class Kernels:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(2)

    assert Kernels.__name__ == "Kernels"


def test_private_function_refuses_a_global_symbol():
    with pytest.raises(DiagnosticError, match="private function"):
        @T.prim_func(private=True)
        def named(A: T.Buffer((4,), "float32")):
            T.func_attr({"global_symbol": "named"})
            A[0] = T.float32(1)


def test_one_name_over_several_loops_is_a_tuple_of_loop_variables():
    @T.prim_func(private=True)
    def tupled(A: T.Buffer((3, 4, 5), "int32")):
        for ijk in T.grid(3, 4, 5):
            A[ijk] = ijk[0] * 100 + ijk[1] * 10 + ijk[2]

    @T.prim_func(private=True)
    def named(A: T.Buffer((3, 4, 5), "int32")):
        for i, j, k in T.grid(3, 4, 5):
            A[i, j, k] = i * 100 + j * 10 + k

    assert_structural_equal(tupled, named)
    a = np.zeros((3, 4, 5), "int32")
    ts.build(tupled)(a)
    i, j, k = np.indices((3, 4, 5))
    np.testing.assert_array_equal(a, i * 100 + j * 10 + k)


def test_starred_loop_variable_takes_the_remaining_loops():
    @T.prim_func(private=True)
    def starred(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6), "float32")):
        for *ij, k in T.grid(4, 6, 8):
            with T.block("acc"):
                with T.init():
                    B[ij] = T.float32(0)
                B[ij] = B[ij] + A[(*ij, k)]

    @T.prim_func(private=True)
    def named(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6), "float32")):
        for i, j, k in T.grid(4, 6, 8):
            with T.block("acc"):
                with T.init():
                    B[i, j] = T.float32(0)
                B[i, j] = B[i, j] + A[i, j, k]

    assert_structural_equal(starred, named)


def test_loop_variable_count_errors_point_at_the_targets():
    src = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "int32")):
    for i, j, k in T.grid(4, 4):
        A[i, j] = 0
'''
    with pytest.raises(DiagnosticError, match="2 loops but 3 loop variables") as err:
        ts.script.from_source(src)
    assert "for i, j, k in T.grid(4, 4):" in str(err.value)
    with pytest.raises(DiagnosticError, match="loop variables must be names"):
        ts.script.from_source(src.replace("for i, j, k in", "for i, A[0] in"))


def test_macro_defined_in_a_class_is_a_method():
    class Copier:
        def __init__(self, shape):
            self.scratch = T.alloc_buffer(shape, "float32")

        @T.macro
        def load(self, src: T.Buffer):
            for i in range(8):
                self.scratch[i] = src[i] * T.float32(2)

    @T.prim_func(private=True)
    def with_method(A: T.Buffer((8,), "float32")):
        c = T.meta_var(Copier((8,)))
        c.load(A)

    @T.prim_func(private=True)
    def inline(A: T.Buffer((8,), "float32")):
        scratch = T.alloc_buffer((8,), "float32")
        for i in range(8):
            scratch[i] = A[i] * T.float32(2)

    assert_structural_equal(with_method, inline)


def test_launch_thread_gives_the_thread_its_domain():
    @T.prim_func(private=True)
    def launched(A: T.Buffer((4,), "int64")):
        bx = T.launch_thread("blockIdx.x", T.int64(4))
        A[bx] = bx

    iv = launched.body.node
    assert iv.var.dtype == "int64"
    assert iv.dom.min.dtype == "int64" and iv.dom.min.value == 0
    assert iv.dom.extent.value == 4
    assert launched.body.attr_key == "thread_extent"


def test_block_attr_calls_merge():
    @T.prim_func(private=True)
    def f():
        with T.block("b"):
            T.block_attr({"a": 1, "nested": {"x": "1"}})
            T.block_attr({"b": 2, "nested": {"y": "2"}})
            T.block_attr({"a": 1})
            T.evaluate(0)

    block = f.body.block
    if block.name_hint != "b":
        block = block.body.block
    ann = block.annotations
    assert int(ann["a"]) == 1 and int(ann["b"]) == 2
    assert sorted(ann["nested"].keys()) == ["x", "y"]

    with pytest.raises(TesseraError, match="two different values"):
        @T.prim_func(private=True)
        def g():
            with T.block("b"):
                T.block_attr({"a": 1})
                T.block_attr({"a": 2})
                T.evaluate(0)


def test_if_expression_on_an_expression_is_if_then_else():
    @T.prim_func(private=True)
    def ifexp(A: T.Buffer((8, 8), "int32")):
        for i, j in T.grid(8, 8):
            A[i, j] = i if i < j else j * 2

    @T.prim_func(private=True)
    def explicit(A: T.Buffer((8, 8), "int32")):
        for i, j in T.grid(8, 8):
            A[i, j] = T.if_then_else(i < j, i, j * 2)

    assert_structural_equal(ifexp, explicit)
    a = np.zeros((8, 8), "int32")
    ts.build(ifexp)(a)
    i, j = np.indices((8, 8))
    np.testing.assert_array_equal(a, np.where(i < j, i, j * 2))


def test_a_buffer_name_is_defined_once_per_scope():
    src = '''
@T.prim_func
def f():
    A = T.alloc_buffer((4,), "float32")
    A = T.alloc_buffer((4,), "float32")
'''
    with pytest.raises(DiagnosticError, match="buffer 'A' is already defined") as err:
        ts.script.from_source(src)
    assert ":5:5:" in str(err.value)


def test_a_string_is_not_a_shape():
    src = '''
@T.prim_func
def f():
    A = T.alloc_buffer("(4, 4)", "float32")
'''
    with pytest.raises(DiagnosticError, match="got the string"):
        ts.script.from_source(src)


def test_ir_builder_thread_binding_and_meta_var():
    from tessera.script.ir_builder import IRBuilder
    from tessera.script.ir_builder import tir as IB_T

    with IRBuilder() as ib:
        with IB_T.thread_binding(8, thread="threadIdx.x") as tx:
            IB_T.evaluate(tx)
    loop = ib.get()
    assert loop.thread_binding.dom is None and loop.thread_binding.thread_tag == "threadIdx.x"
    assert loop.extent.value == 8

    with IRBuilder() as ib:
        a, b = IB_T.meta_var([3, 4])
        IB_T.evaluate(a.value * b.value)
    assert ib.get().value.value == 12


def test_lone_block_is_the_root_and_keeps_no_inferred_regions():
    @T.prim_func(private=True)
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        with T.block():
            for i in range(8):
                with T.block("copy"):
                    vi = T.axis.remap("S", [i])
                    B[vi] = A[vi]

    root = f.body.block
    assert root.name_hint == "" and len(root.reads) == 0 and len(root.writes) == 0
    copy = root.body.body.block
    assert copy.name_hint == "copy" and len(copy.reads) == 1 and len(copy.writes) == 1


def test_inferred_reads_list_a_load_before_the_loads_in_its_indices():
    @T.prim_func(private=True)
    def gather(A: T.Buffer((16,), "float32"), idx: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("g"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[idx[vi]]

    reads = gather.body.block.body.body.block.reads
    assert [r.buffer.name for r in reads] == ["A", "idx"]


def test_inner_block_regions_of_a_match_buffer_are_regions_of_its_source():
    @T.prim_func(private=True)
    def f(A: T.Buffer((4, 16), "float32")):
        for i in range(4):
            with T.block("row"):
                vi = T.axis.remap("S", [i])
                Row = T.match_buffer(A[vi, 4:12], (8,))
                for j in range(8):
                    with T.block("elem"):
                        vj = T.axis.remap("S", [j])
                        Row[vj] = T.float32(1)

    row = f.body.block.body.body.block
    (w,) = row.writes
    assert w.buffer.name == "A"
    assert str(w.region[1].min) == "4" and w.region[1].extent.value == 8


def test_ir_builder_block_outside_a_function_keeps_detection_pending():
    from tessera.script.ir_builder import IRBuilder
    from tessera.script.ir_builder import tir as IB_T

    with IRBuilder() as ib:
        with IB_T.block("b"):
            IB_T.evaluate(0)
    block = ib.get().block
    assert block.annotations["tir.script_parsing_detect_access"].value == 3
    assert block.annotations["tir.script_parsing_detect_access"].dtype == "int64"
    assert len(block.reads) == 0 and len(block.writes) == 0


def test_block_constructor_takes_buffer_slices():
    from tessera import tir

    A = tir.decl_buffer((16, 16), "float32", name="A")
    sub = tir.decl_buffer((4, 4), "float32", name="sub")
    block = tir.Block(iter_vars=[], reads=[A[0:4, 0:4]], writes=[A], name_hint="b",
                      body=tir.Evaluate(0), alloc_buffers=None,
                      match_buffers=[tir.MatchBufferRegion(sub, A[4:8, 4:8])],
                      annotations={"k": "v"})
    assert block.reads[0].region[0].extent.value == 4
    assert block.writes[0].region[1].extent.value == 16
    assert block.match_buffers[0].source.region[0].min.value == 4


def test_macro_options_are_keywords():
    with pytest.raises(TesseraError, match="hygienic= as a keyword"):
        @T.macro(True)
        def m():
            T.evaluate(0)


def test_reinterpret_to_the_same_type_is_the_value():
    @T.prim_func(private=True)
    def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
        for i in range(4):
            A[i] = T.reinterpret("float32", A[i])
            B[i] = T.reinterpret("int32", A[i])

    first, second = f.body.body.seq
    assert isinstance(first.value, ts.tir.BufferLoad)
    assert isinstance(second.value, ts.tir.Call)


def test_match_buffer_shape_must_fit_the_region():
    src = '''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        with T.block():
            sub = T.match_buffer(A[i, 0:4], (5,))
            sub[0] = T.float32(1)
'''
    with pytest.raises(DiagnosticError, match=r"extents \(1, 4\) do not match the shape \(5\)") as err:
        ts.script.from_source(src)
    assert ":6:" in str(err.value)


def test_zero_dimensional_arrays_stay_zero_dimensional():
    @T.prim_func
    def add(a: T.Buffer((), "float32"), b: T.Buffer((), "float32")):
        b[()] = a[()] + T.float32(1)

    a = ts.nd.array(np.array(2.5, "float32"))
    b = ts.nd.array(np.zeros((), "float32"))
    assert a.shape == () and a.numpy().shape == ()
    ts.build(add)(a, b)
    assert float(b.numpy()) == 3.5


def test_root_around_a_lone_block_survives_printing():
    @T.prim_func(private=True)
    def f(A: T.Buffer((1,), "int32")):
        with T.block("root"):
            with T.block("inner"):
                A[0] = 0

    inner = f.body.block.body.block
    assert inner.name_hint == "inner" and len(inner.writes) == 1
    text = f.script()
    assert 'with T.block("root"):' in text and '# with T.block("root")' not in text
    assert_structural_equal(f, ts.script.from_source(text))


def test_range_takes_loop_annotations_as_t_serial():
    # As TVM: `range(...)` is T.serial, annotations= included.
    @T.prim_func
    def with_range(A: T.Buffer((16,), "float32")):
        for i in range(2, 16, annotations={"pragma_hint": 1, "note": "x"}):
            A[i] = T.float32(0)

    @T.prim_func
    def with_serial(A: T.Buffer((16,), "float32")):
        for i in T.serial(2, 16, annotations={"pragma_hint": 1, "note": "x"}):
            A[i] = T.float32(0)

    assert_structural_equal(with_range.with_attr("global_symbol", "f"), with_serial.with_attr("global_symbol", "f"))
    assert dict(with_range.body.annotations)["note"] == "x"


def test_range_refuses_other_keywords():
    with pytest.raises(DiagnosticError, match="range\\(\\) takes no keyword 'thread'"):
        @T.prim_func
        def bad(A: T.Buffer((16,), "float32")):
            for i in range(16, thread="x"):
                A[i] = T.float32(0)


class _PlainHolder:
    # As TVM: a @T.prim_func in a class that is not a module is parsed at once.
    @T.prim_func
    def kernel(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)


def test_prim_func_in_a_plain_class_is_parsed_at_once():
    func = _PlainHolder.kernel
    assert isinstance(func, ts.tir.PrimFunc)
    tagged = func.with_attr("global_symbol", "main")
    mod = ts.ir.IRModule.from_expr(tagged)
    assert_structural_equal(mod["main"], tagged)


def test_prim_func_in_a_module_class_still_sees_the_module():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(out: T.Buffer((1,), "int32")):
            out[0] = Mod.helper(T.int32(3))

        @T.prim_func(private=True)
        def helper(x: T.int32) -> T.int32:
            return x + 1

    assert set(gv.name_hint for gv in Mod.get_global_vars()) == {"main", "helper"}


def test_block_regions_come_from_nested_blocks_stated_regions():
    # As TVM's region detection: the outer block takes the inner blocks' stated regions; their
    # bodies' use of a data pointer (an extern call) is theirs to state.
    @T.prim_func
    def func(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for o in range(1):
            with T.block("outer"):
                B = T.alloc_buffer((64,), "float32")
                for i in range(64):
                    with T.block("inner"):
                        T.reads(A[i])
                        T.writes(B[i])
                        T.evaluate(T.call_extern("opaque", A.data, B.data, dtype="int32"))

    @T.prim_func
    def stated(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for o in range(1):
            with T.block("outer"):
                T.reads(A[0:64])
                T.writes()
                B = T.alloc_buffer((64,), "float32")
                for i in range(64):
                    with T.block("inner"):
                        T.reads(A[i])
                        T.writes(B[i])
                        T.evaluate(T.call_extern("opaque", A.data, B.data, dtype="int32"))

    assert_structural_equal(func.with_attr("global_symbol", "f"), stated.with_attr("global_symbol", "f"))


def test_data_pointer_in_the_blocks_own_body_still_needs_stated_regions():
    with pytest.raises(DiagnosticError, match="cannot infer the regions block \"own\""):
        @T.prim_func
        def func(a: T.handle):
            A = T.match_buffer(a, (64,), "float32")
            with T.block("own"):
                T.evaluate(T.call_extern("opaque", A.data, dtype="int32"))


def test_prim_func_of_a_plain_class_that_needs_its_module_waits_for_it():
    class Funcs:
        @T.prim_func
        def main(out: T.Buffer((1,), "int32")):
            out[0] = Funcs.helper(T.int32(3))

        @T.prim_func(private=True)
        def helper(x: T.int32) -> T.int32:
            return x + 1

    assert isinstance(Funcs.helper, ts.tir.PrimFunc)
    with pytest.raises(TesseraError):
        Funcs.main.with_attr("global_symbol", "main")  # alone, `Funcs.helper` is not a function of its module
    mod = I.ir_module(Funcs)
    assert set(gv.name_hint for gv in mod.get_global_vars()) == {"main", "helper"}
