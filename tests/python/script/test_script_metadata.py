"""The metadata section of printed scripts: strings of several lines print, as TVM prints them,
as references `metadata["tir.StringImm"][i]`; with show_meta=True the text defines them first
and parses back."""

import pytest

import tessera as ts
from tessera.error import TesseraValueError
from tessera.script import ir as I
from tessera.script import tir as T

TEXT = T.StringImm("first\nsecond\n")
OTHER = T.StringImm("x\ny")


@I.ir_module
class Module:
    @T.prim_func
    def f():
        a = TEXT
        b = TEXT
        T.evaluate(T.call_extern("int32", "puts", OTHER))

    @T.prim_func
    def g():
        a = TEXT
        T.evaluate(0)


def test_multiline_strings_print_as_metadata_references():
    text = Module.script()
    # One entry per object: the same string object printed three times is entry 0 each time.
    assert text.count('metadata["tir.StringImm"][0]') == 3
    assert text.count('metadata["tir.StringImm"][1]') == 1
    assert "first" not in text and 'T.call_extern("int32", "puts", metadata["tir.StringImm"][1])' in text
    assert text.endswith("\n\n# Metadata not shown: print with script(show_meta=True) to include it.")


def test_show_meta_text_parses_back():
    text = Module.script(show_meta=True)
    first, rest = text.split("\n", 1)
    assert first == ('metadata = tessera.ir.load_json("""{\\"format\\": \\"tessera-metadata\\", '
                     '\\"version\\": 1, \\"metadata\\": {\\"tir.StringImm\\": '
                     '[\\"first\\\\nsecond\\\\n\\", \\"x\\\\ny\\"]}}""")')
    assert "Metadata not shown" not in rest
    parsed = ts.script.from_source(text)
    ts.ir.assert_structural_equal(parsed, Module)
    assert parsed["f"].body.value.value == "first\nsecond\n"


def test_single_line_strings_stay_literals():
    @T.prim_func
    def f():
        s: T.handle = "one line"
        T.evaluate(T.call_extern("int32", "puts", s))

    text = f.script()
    assert 's: T.handle = "one line"' in text and "metadata" not in text
    ts.ir.assert_structural_equal(ts.script.from_source(text), f)


def test_load_json_refuses_a_malformed_metadata_section():
    with pytest.raises(TesseraValueError, match="malformed metadata section"):
        ts.ir.load_json('{"format": "tessera-metadata", "version": 1, "metadata": {"tir.StringImm": [1]}}')
    with pytest.raises(TesseraValueError, match="malformed metadata section"):
        ts.ir.load_json('{"format": "tessera-metadata", "version": 1, "metadata": {"ir.Other": []}}')
