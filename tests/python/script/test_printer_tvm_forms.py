"""The printer's TVM forms: scoped binders printed alone, decl_buffer sugar, the default dtype,
underlines of objects, comments on compound statements, loop jumps, object addresses."""

import re

import tessera as ts
from tessera import tir
from tessera.script import tir as T


def _parse(text):
    return ts.script.from_source(text)


def _func_text(func):
    return func.with_attr("global_symbol", "main").script()


@T.prim_func
def binders(n: T.int32):
    x: T.int32 = n + 1
    assert x > 0, "positive"
    T.evaluate(x)


def test_a_binder_printed_alone_keeps_its_scope():
    let = binders.body
    assert let.script() == "n = T.int32()\nwith T.LetStmt(n + 1) as x:\n    assert x > 0, \"positive\"\n    T.evaluate(x)"
    # Inside a function, the last statement of a body prints concisely.
    text = _func_text(binders)
    assert "    x: T.int32 = n + 1\n    assert x > 0, \"positive\"\n    T.evaluate(x)" in text


def test_an_annotated_binder_keeps_its_scope_and_the_comment_goes_above():
    text = binders.with_attr("global_symbol", "main").script(obj_to_annotate={binders.body.body: "checked"})
    assert text.endswith(
        "    x: T.int32 = n + 1\n"
        "    # checked\n"
        "    with T.Assert(x > 0, \"positive\"):\n"
        "        T.evaluate(x)")
    assert ts.ir.structural_equal(_parse(text), binders.with_attr("global_symbol", "main"))


@T.prim_func
def allocations():
    buf_data = T.allocate([16, 4], "float16", "global")
    buf = T.decl_buffer((16, 4), "float16", data=buf_data)
    buf[0, 0] = T.float16(1.0)
    T.evaluate(buf_data)


@T.prim_func
def allocation_viewed_otherwise():
    ptr = T.allocate([64], "float32", "global")
    view = T.decl_buffer((8, 8), data=ptr)
    view[0, 0] = T.float32(1.0)


def test_an_allocation_with_its_buffer_prints_as_one_decl_buffer():
    text = _func_text(allocations)
    assert "    buf = T.decl_buffer((16, 4), \"float16\")\n    buf[0, 0] = T.float16(1.0)\n    T.evaluate(buf.data)" in text
    assert ts.ir.structural_equal(_parse(text), allocations.with_attr("global_symbol", "main"))
    # A buffer of another shape than its allocation keeps both; float32 is not spelled.
    text = _func_text(allocation_viewed_otherwise)
    assert "    ptr = T.allocate([64], \"float32\", \"global\")\n    view = T.decl_buffer((8, 8), data=ptr)" in text
    assert ts.ir.structural_equal(_parse(text), allocation_viewed_otherwise.with_attr("global_symbol", "main"))
    # Printed alone, the sugar is scoped.
    assert allocations.body.script() == (
        "with T.decl_buffer((16, 4), \"float16\") as buf:\n"
        "    buf[0, 0] = T.float16(1.0)\n"
        "    T.evaluate(buf.data)")


@T.prim_func
def shared_data(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 4))
    B = T.match_buffer(b, (16,), data=A.data)
    B[0] = A[0, 0]


@T.prim_func
def scoped_param(a: T.handle):
    A = T.match_buffer(a, (4,), "int8", scope="shared")
    A[0] = T.int8(1)


def test_parameter_annotations_only_for_plain_buffers_of_their_own():
    text = _func_text(shared_data)
    assert "def main(a: T.handle, b: T.handle):\n    A = T.match_buffer(a, (4, 4))\n    B = T.match_buffer(b, (16,), data=A.data)" in text
    assert ts.ir.structural_equal(_parse(text), shared_data.with_attr("global_symbol", "main"))
    text = _func_text(scoped_param)
    assert "    A = T.match_buffer(a, (4,), \"int8\", scope=\"shared\")" in text
    assert ts.ir.structural_equal(_parse(text), scoped_param.with_attr("global_symbol", "main"))


@T.prim_func
def views(A: T.Buffer((16, 64), "int32")):
    with T.block():
        B = T.match_buffer(A[8:16, 32:64])
        B[0, 0] = 1


def test_match_buffer_region_alone_and_implicit_view_shape():
    block = views.body.block  # the lone block without iterators is the root, as in TVM
    match = block.match_buffers[0]
    assert match.buffer.dtype == "int32" and [int(e) for e in match.buffer.shape] == [8, 32]
    assert match.script(verbose_expr=True) == (
        "A = T.Buffer((16, 64), \"int32\")\nB = T.match_buffer(A[8:16, 32:64], (8, 32), \"int32\")")
    assert match.source.script(verbose_expr=True) == "A = T.Buffer((16, 64), \"int32\")\nA[8:16, 32:64]"


@T.prim_func
def evaluations(a: T.int32, b: T.int32):
    T.evaluate(a)
    T.evaluate(b)
    T.evaluate(a + b)


def test_underlines_follow_the_objects():
    func = evaluations.with_attr("global_symbol", "main")
    text = func.script(obj_to_underline=[func.params[0]])
    assert text.endswith(
        "    T.evaluate(a)\n"
        "               ^\n"
        "    T.evaluate(b)\n"
        "    T.evaluate(a + b)\n"
        "               ^")
    # A function underlines every line it prints, the import header excepted.
    lines = func.script(path_to_underline=[func]).splitlines()
    assert lines[2:] == ["@T.prim_func", "^^^^^^^^^^^^", "def main(a: T.int32, b: T.int32):",
                         "^" * 33, "    T.evaluate(a)", "    ^^^^^^^^^^^^^", "    T.evaluate(b)",
                         "    ^^^^^^^^^^^^^", "    T.evaluate(a + b)", "    ^^^^^^^^^^^^^^^^^"]


@T.prim_func
def jumps(A: T.Buffer((4,), "float32")):
    for i in range(10):
        if i % 3 == 0:
            continue
        if A[0] > T.float32(1.0):
            break
        A[0] = A[0] + T.float32(1.0)


def test_loop_jumps_print_as_tvm_calls_and_read_back():
    text = _func_text(jumps)
    assert "            T.continue_loop()\n" in text and "            T.break_loop()\n" in text
    assert ts.ir.structural_equal(_parse(text), jumps.with_attr("global_symbol", "main"))

    @T.prim_func
    def explicit():
        for i in range(4):
            if i == 2:
                T.evaluate(T.break_loop())

    @T.prim_func
    def implicit():
        for i in range(4):
            if i == 2:
                break

    assert ts.ir.structural_equal(explicit.body, implicit.body)


def test_return_without_annotation_and_cast_of_constants():
    @T.prim_func
    def explicit():
        T.evaluate(T.ret(5))

    @T.prim_func
    def implicit():
        return 5

    assert ts.ir.structural_equal(explicit.body, implicit.body)
    # As TVM's tir.cast: a scalar constant folds.
    folded = T.cast(T.int32(3), "float32")
    assert isinstance(folded, tir.FloatImm) and folded.value == 3.0
    assert isinstance(T.cast(T.float32(2.5), "int32"), tir.IntImm)


def test_object_addresses_suffix_every_name():
    func = evaluations.with_attr("global_symbol", "main")
    text = func.script(show_object_address=True)
    names = re.findall(r"\b(a|b)_0x([0-9a-f]+)\b", text)
    assert {n for n, _ in names} == {"a", "b"}
    assert len({(n, addr) for n, addr in names}) == 2  # one address per variable


def test_python_numbers_bound_to_names_are_let_variables():
    @T.prim_func
    def implicit(i: T.int32):
        j = 42
        T.evaluate(j + i)

    @T.prim_func
    def explicit(i: T.int32):
        j: T.int32 = 42
        T.evaluate(j + i)

    assert isinstance(implicit.body, tir.LetStmt)
    assert ts.ir.structural_equal(implicit.with_attr("global_symbol", "main"),
                                  explicit.with_attr("global_symbol", "main"))

    def layout(i, j):
        return T.meta_var((i * 4 + j, j))

    @T.prim_func
    def unpacked(A: T.Buffer((16, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("b"):
                i, j = T.axis.remap("SS", [i, j])  # a block iterator may shadow its loop
                row, col = layout(i, j)
                A[row, col] = T.float32(0)

    block = unpacked.body.block.body.body.body.block
    store = block.body
    assert isinstance(store, tir.BufferStore)
    assert [iv.var.name for iv in block.iter_vars] == ["i", "j"]
    assert "A[i_1 * 4 + j_1, j_1] = T.float32(0.0)" in _func_text(unpacked)
    assert ts.ir.structural_equal(_parse(_func_text(unpacked)), unpacked.with_attr("global_symbol", "main"))


def test_module_calls_by_class_name_and_call_tir():
    from tessera.script import ir as I

    @I.ir_module
    class mod:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            mod.helper(A.data)
            tir.call_tir(mod.nothing)

        @T.prim_func
        def helper(p: T.handle("float32")):
            T.evaluate(0)

        @T.prim_func
        def nothing():
            T.evaluate(0)

    calls = [s.value for s in mod["main"].body.seq]
    assert [c.op.name_hint for c in calls] == ["helper", "nothing"] and calls[1].dtype == "void"
    again = ts.script.from_source(mod.script())
    assert ts.ir.structural_equal(again, mod)


def test_address_of_a_buffer_is_its_first_element():
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32")):
        T.evaluate(T.address_of(A))

    assert "T.address_of(A[0, 0])" in _func_text(f)


def test_structural_mismatch_names_tvm_paths_and_underlines():
    from tessera.ir.access_path import AccessPath

    @T.prim_func
    def one():
        T.evaluate(1)

    @T.prim_func
    def two():
        T.evaluate(2)

    a, b = one.with_attr("global_symbol", "main"), two.with_attr("global_symbol", "main")
    path = AccessPath.root().attr("body").attr("value").attr("value")
    try:
        ts.ir.assert_structural_equal(a, b)
    except ValueError as err:
        message = str(err)
    else:
        raise AssertionError("the functions differ")
    assert message == (f"StructuralEqual check failed, caused by lhs at {path}:\n"
                       f"{a.script(path_to_underline=[path], syntax_sugar=False)}\n"
                       f"and rhs at {path}:\n{b.script(path_to_underline=[path], syntax_sugar=False)}")
    assert message.endswith("    T.evaluate(2)\n               ^")


def test_tuple_type_prints_its_fields():
    assert ts.ir.TupleType([ts.ir.PrimType("float32"), ts.ir.PrimType("int32")]).script() == "T.Tuple(T.float32, T.int32)"


@T.prim_func
def allocation_with_a_second_view():
    ptr = T.allocate([16], "float32", "global")
    buf = T.decl_buffer((16,), data=ptr)
    view = T.Buffer((4, 4), data=ptr)
    buf[0] = T.float32(1.0)
    view[1, 1] = buf[0]


def test_a_view_of_a_sugared_allocation_is_declared_inside_it():
    text = _func_text(allocation_with_a_second_view)
    assert "    buf = T.decl_buffer((16,))\n    view = T.Buffer((4, 4), data=buf.data)\n" in text
    assert ts.ir.structural_equal(_parse(text), allocation_with_a_second_view.with_attr("global_symbol", "main"))
