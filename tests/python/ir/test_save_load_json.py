"""tessera.ir.save_json / load_json: PrimFuncs and IRModules through a JSON document."""

import json

import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.script import ir as I
from tessera.script import tir as T


@T.prim_func
def scale(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    T.func_attr({"global_symbol": "scale", "tir.noalias": True})
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        K_data = T.allocate_const([3, 1, 4, 1], "int32", [4])
        K = T.decl_buffer((4,), "int32", data=K_data)
        for i in range(4):
            A[i] = K[i]


@pytest.mark.parametrize("node", [scale, Module], ids=["PrimFunc", "IRModule"])
def test_round_trip(node):
    text = ts.ir.save_json(node)
    doc = json.loads(text)
    assert doc["type"] == type(node).__name__
    again = ts.ir.load_json(text)
    assert type(again) is type(node)
    ts.ir.assert_structural_equal(again, node)


def test_a_statement_alone_is_not_saved():
    # Functions, modules, targets, te graphs and values (expressions, containers) are stored.
    with pytest.raises(TesseraError, match="a te Tensor or Operation, an expression or an Array/Map"):
        ts.ir.save_json(ts.tir.Evaluate(ts.tir.const(1)))


@pytest.mark.parametrize("text", ["not json", "[]", '{"format": "other", "type": "PrimFunc", "script": ""}'])
def test_foreign_documents_are_refused(text):
    with pytest.raises(ValueError, match="load_json"):
        ts.ir.load_json(text)


def test_a_document_whose_type_lies_is_refused():
    doc = json.loads(ts.ir.save_json(scale))
    doc["type"] = "IRModule"
    with pytest.raises(ValueError, match="says IRModule but holds a PrimFunc"):
        ts.ir.load_json(json.dumps(doc))
