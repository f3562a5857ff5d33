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
    block = views.body.block.body.block
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
