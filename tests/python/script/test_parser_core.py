"""The parser core's TVM-facing names: Source, ExprEvaluator, doc_core."""

import ast
import inspect

import pytest

from tessera.script.parser.core import doc_core
from tessera.script.parser.core.diagnostics import Source
from tessera.script.parser.core.evaluator import ExprEvaluator


def helper(x, y):
    return x * y + 1


def test_source_of_a_function_and_of_a_string():
    src = Source(helper)
    assert src.source_name == inspect.getsourcefile(helper)
    assert src.source == inspect.getsource(helper)
    assert src.start_column == 0 and src.start_line == inspect.getsourcelines(helper)[1]
    assert "def test_source_of_a_function_and_of_a_string" in src.full_source
    tree = src.as_ast()
    assert isinstance(tree, doc_core.Module) and tree.body[0].name == "helper"

    text = Source("a + b\nc")
    assert text.source_name == "<str>" and text.start_line == 1
    assert [type(s) for s in text.as_ast().body] == [doc_core.Expr, doc_core.Expr]


def test_evaluator_sees_the_value_table_and_builtins():
    node = Source("f(a, 3)[0] + len(xs) // 2").as_ast().body[0].value
    assert ExprEvaluator.eval(None, {"f": lambda p, q: (p - q, 0), "a": 10, "xs": [1] * 5}, node) == 9
    with pytest.raises(NameError):
        ExprEvaluator.eval(None, {}, node)
    with pytest.raises(TypeError, match="expression node"):
        ExprEvaluator.eval(None, {}, Source("x = 1").as_ast().body[0])


def test_doc_core_names_pythons_ast_classes():
    assert doc_core.FunctionDef is ast.FunctionDef and doc_core.With is ast.With
    assert "Assign" in doc_core.__all__
