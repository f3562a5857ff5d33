"""T.comm_reducer: a reducer as an IR value (the node of a "reduce_scope" attribute around
T.tvm_thread_allreduce): parsed, printed in TVM's form, structurally compared."""

import pytest

import tessera
from tessera import tir
from tessera.error import TesseraError
from tessera.script import tir as T


def test_single_value_reducer_fields():
    r = T.comm_reducer(lambda x, y: x + y, [T.float32(0)])
    assert isinstance(r, tir.CommReducer)
    assert [v.name for v in r.lhs] == ["x"] and [v.name for v in r.rhs] == ["y"]
    assert str(r.identity_element[0].dtype) == "float32"
    assert isinstance(r.result[0], tir.Add)


def reduce_sum():
    @T.prim_func
    def f(A: T.Buffer((128,), "float32"), B: T.Buffer((1,), "float32")):
        tx = T.env_thread("threadIdx.x")
        red = T.allocate([1], "float32", "local")
        T.launch_thread(tx, 128)
        red_buf = T.Buffer((1,), data=red, scope="local")
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, red_buf[0], tx,
                                              dtype="handle"))
        B[0] = red_buf[0]

    return f


def test_reducer_in_an_attribute_round_trips():
    f = reduce_sum()
    text = f.script()
    assert 'T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)]), "reduce_scope"' in text
    tessera.ir.assert_structural_equal(f, tessera.script.from_source(text))


def test_reducers_compare_by_structure():
    a = T.comm_reducer(lambda x, y: x + y, [T.float32(0)])
    b = T.comm_reducer(lambda p, q: p + q, [T.float32(0)])
    c = T.comm_reducer(lambda x, y: x * y, [T.float32(1)])
    d = T.comm_reducer(lambda x, y: y + x, [T.float32(0)])
    assert tessera.ir.structural_equal(a, b)
    assert tessera.ir.structural_hash(a) == tessera.ir.structural_hash(b)
    assert not tessera.ir.structural_equal(a, c)
    assert not tessera.ir.structural_equal(a, d)


def test_argmax_reducer_with_two_values():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        with T.attr(T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0),
                                                         T.Select(x1 >= y1, x1, y1)),
                                   [T.int32(-1), T.min_value("float32")]),
                    "reduce_scope", T.reinterpret("handle", T.uint64(0))):
            A[0] = T.float32(0)

    text = f.script()
    assert "T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(" in text
    tessera.ir.assert_structural_equal(f, tessera.script.from_source(text))


def test_reducer_errors():
    with pytest.raises(TesseraError, match="must take 2"):
        T.comm_reducer(lambda x: x, [T.float32(0)])
    with pytest.raises(TesseraError, match="mixes types"):
        tir.CommReducer([tir.Var("x", "float32")], [tir.Var("y", "float32")],
                        [tir.Var("x", "float32")], [tir.const(0, "int32")])
