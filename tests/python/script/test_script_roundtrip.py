"""Every corpus program round-trips: print -> from_source -> structurally equal, and the
reparsed program prints to the same text."""

import pytest

import tessera as ts
from corpus import programs

PROGRAMS = programs()


def test_the_corpus_is_large():
    assert len(PROGRAMS) >= 50


@pytest.mark.parametrize("name,program", PROGRAMS, ids=[name for name, _ in PROGRAMS])
def test_round_trip(name, program):
    text = program.script()
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(program, again, map_free_vars=True)
    assert ts.ir.structural_hash(program, map_free_vars=True) == ts.ir.structural_hash(again, map_free_vars=True)
    assert again.script() == text


@pytest.mark.parametrize("name,program", PROGRAMS[:10], ids=[name for name, _ in PROGRAMS[:10]])
def test_round_trip_without_sugar(name, program):
    text = program.script(syntax_sugar=False)
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(program, again, map_free_vars=True)


def test_names_used_only_in_annotations_come_from_the_defining_scope():
    from tessera.script import tir as T

    def generate(dtype):
        @T.prim_func
        def copy(A: T.Buffer((4,), dtype), B: T.Buffer((4,), dtype)):
            for i in range(4):
                B[i] = A[i]

        return copy

    half, byte = generate("float16"), generate("int8")
    assert half.buffer_map[half.params[0]].dtype == "float16"
    assert byte.buffer_map[byte.params[1]].dtype == "int8"
