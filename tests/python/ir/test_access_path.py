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
