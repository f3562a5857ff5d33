"""AccessPath: paths into IR objects, and printing that marks what they name."""

import pytest

import tessera as ts
from tessera.ir.access_path import AccessPath
from tessera.script import tir as T


@T.prim_func
def steps(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, 4))
    T.evaluate(0)
    T.evaluate(n)
    T.evaluate(2)


def test_paths_compare_print_and_resolve():
    body = AccessPath.root().attr("body").attr("seq")
    assert body.array_item(1) == AccessPath.root().attr("body").attr("seq").array_item(1)
    assert body.array_item(1) != body.array_item(2)
    assert len({body.array_item(1), body.array_item(1)}) == 1
    assert repr(body.array_item(1)) == "<root>.body.seq[1]"
    assert body.is_prefix_of(body.array_item(1)) and not body.array_item(1).is_prefix_of(body)
    assert body.array_item(1).get_parent() == body and AccessPath.root().get_parent() is None

    assert body.array_item(1).resolve(steps).same_as(steps.body.seq[1])
    handle = steps.params[0]
    shape = AccessPath.root().attr("buffer_map").map_item(handle).attr("shape").array_item(0)
    assert shape.resolve(steps).value == 8
    assert repr(shape) == "<root>.buffer_map[a].shape[0]"
    with pytest.raises(ValueError, match=r"<root>.body.seq\[7\] does not exist"):
        body.array_item(7).resolve(steps)
    with pytest.raises(TypeError):
        body.array_item("x")


def test_annotations_are_comments_and_underlines_are_carets():
    func = steps.with_attr("global_symbol", "main")
    seq = AccessPath.root().attr("body").attr("seq")
    text = func.script(path_to_annotate={seq.array_item(1): "note"})
    assert "    T.evaluate(n)  # note\n    T.evaluate(2)" in text and "^" not in text
    text = func.script(path_to_underline=[seq.array_item(2)])
    assert "    T.evaluate(2)\n    ^^^^^^^^^^^^^" in text
    both = func.script(path_to_underline=[seq.array_item(0)], obj_to_annotate={func.body.seq[0]: "here"})
    assert "    T.evaluate(0)  # here\n    ^^^^^^^^^^^^^\n" in both
    # A path ending at a plain field marks the last object on it (the statement's value).
    value_path = seq.array_item(2).attr("value").attr("value")
    assert func.script(path_to_underline=[value_path]) == func.script(path_to_underline=[seq.array_item(2).attr("value")])


def test_first_structural_mismatch_paths():
    from tessera import tir
    from tessera.ir.base import get_first_structural_mismatch

    x, y, z = tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")
    # A difference inside the common prefix is reported before the difference of length.
    seq4 = tir.SeqStmt([tir.Evaluate(x), tir.Evaluate(x + 1), tir.Evaluate(x + 2), tir.Evaluate(x + 3)])
    seq3 = tir.SeqStmt([tir.Evaluate(x), tir.Evaluate(x + 1), tir.Evaluate(x + 3)])
    seq = AccessPath.root().attr("seq")
    inside = seq.array_item(2).attr("value").attr("b").attr("value")
    assert get_first_structural_mismatch(seq4, seq3) == (inside, inside)
    # Equal up to the length: the side without the item ends in array_item_missing.
    prefix = tir.SeqStmt([tir.Evaluate(x), tir.Evaluate(x + 1), tir.Evaluate(x + 2)])
    assert get_first_structural_mismatch(seq4, prefix) == (seq.array_item(3), seq.array_item_missing(3))
    assert get_first_structural_mismatch(prefix, seq4) == (seq.array_item_missing(3), seq.array_item(3))
    assert repr(seq.array_item_missing(3)) == "<root>.seq[<missing item 3>]"

    f2 = tir.PrimFunc([x, y], tir.Evaluate(x))
    f3 = tir.PrimFunc([x, y, z], tir.Evaluate(x))
    params = AccessPath.root().attr("params")
    assert get_first_structural_mismatch(f2, f3) == (params.array_item_missing(2), params.array_item(2))
    # A parameter of another dtype: the path ends at the Var's dtype.
    f_float = tir.PrimFunc([x, tir.Var("y", "float32")], tir.Evaluate(x))
    dtype = params.array_item(1).attr("dtype")
    assert get_first_structural_mismatch(f2, f_float) == (dtype, dtype)
    assert get_first_structural_mismatch(f2, tir.PrimFunc([x, y], tir.Evaluate(x))) is None


def test_module_mismatch_path_names_the_global_var():
    from tessera.script import ir as I

    def module(n):
        @I.ir_module
        class Module:
            @T.prim_func
            def func(A: T.Buffer(1, "int32")):
                for i in range(n):
                    A[0] = A[0] + 1

        return Module

    ts.ir.assert_structural_equal(module(4), module(4))
    with pytest.raises(ValueError, match=r'<root>\.functions\[I\.GlobalVar\("func"\)\]\.body\.extent\.value'):
        ts.ir.assert_structural_equal(module(4), module(8))


def test_container_mismatch_paths_end_at_the_item():
    # An Array's or Map's items are steps of their own (no `.items` field), and a number in a
    # container is a plain value there: the path ends at the item, not at its `.value`.
    from tessera.ir.base import get_first_structural_mismatch
    from tessera.runtime import convert

    root = AccessPath.root()
    assert get_first_structural_mismatch(convert([1, 2, 3]), convert([1, 4, 3])) == (root.array_item(1),) * 2
    assert get_first_structural_mismatch(convert([1, 3, 4]), convert([1, 2, 3, 4])) == (root.array_item(1),) * 2
    assert get_first_structural_mismatch(convert([]), convert([1])) == (root.array_item_missing(0), root.array_item(0))
    assert get_first_structural_mismatch(convert({"a": 3, "b": 4}), convert({"a": 3, "b": 5})) == (root.map_item("b"),) * 2
    small, big = convert({"a": 3, "b": 4}), convert({"a": 3, "b": 4, "c": 5})
    assert get_first_structural_mismatch(small, big) == (root.map_item_missing("c"), root.map_item("c"))
    assert get_first_structural_mismatch(big, small) == (root.map_item("c"), root.map_item_missing("c"))
    assert get_first_structural_mismatch(convert({"a": [1, 2]}), convert({"a": [1, 2]})) is None
    nested = get_first_structural_mismatch(convert({"a": [1, 2]}), convert({"a": [1, 7]}))
    assert nested == (root.map_item("a").array_item(1),) * 2
    assert repr(nested[0]) == "<root>['a'][1]"
