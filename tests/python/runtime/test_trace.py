"""tir.trace: a kernel calls a global function with values while it runs; the expression is
worth the traced value, or what the function returns."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir


@pytest.fixture
def recorder():
    calls = []
    names = []

    def register(name, returns=None):
        def action(*args):
            calls.append(args)
            return returns(*args) if returns else None

        ts.register_func(name, action, override=True)
        names.append(name)
        return calls

    yield register
    for name in names:
        ts.runtime.remove_global_func(name)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_trace_passes_the_value_through_and_sees_each_element(recorder, dtype):
    calls = recorder("test.rt14.record")
    x = te.placeholder((2, 3), name="x", dtype=dtype)
    y = te.compute(x.shape, lambda i, j: tir.trace([i, j, x[i, j]], "test.rt14.record") * 2, name="y")
    lib = ts.build(te.create_prim_func([x, y]))
    data = np.arange(6).reshape(2, 3).astype(dtype) + 1
    out = ts.nd.empty((2, 3), dtype)
    lib(ts.nd.array(data), out)
    np.testing.assert_array_equal(out.numpy(), data * 2)
    assert sorted(calls) == [(i, j, data[i, j]) for i in range(2) for j in range(3)]
    assert all(isinstance(c[0], int) and isinstance(c[2], int if "int" in dtype else float) for c in calls)


@pytest.mark.parametrize("dtype, value", [("int32", 7), ("float32", 0.5)])
def test_a_returned_number_replaces_the_traced_value(recorder, dtype, value):
    recorder("test.rt14.replace", returns=lambda *args: value)
    x = te.placeholder((4,), name="x", dtype=dtype)
    y = te.compute(x.shape, lambda i: tir.trace([x[i]], "test.rt14.replace") + x[i], name="y")
    lib = ts.build(te.create_prim_func([x, y]))
    data = np.arange(4).astype(dtype)
    out = ts.nd.empty((4,), dtype)
    lib(ts.nd.array(data), out)
    np.testing.assert_array_equal(out.numpy(), (data + np.array(value, dtype)).astype(dtype))


def test_default_action_prints_the_values(capfd):
    x = te.placeholder((2,), name="x", dtype="int32")
    y = te.compute(x.shape, lambda i: tir.trace([i, x[i]]), name="y")
    lib = ts.build(te.create_prim_func([x, y]))
    out = ts.nd.empty((2,), "int32")
    lib(ts.nd.array(np.array([5, 9], "int32")), out)
    np.testing.assert_array_equal(out.numpy(), [5, 9])
    assert capfd.readouterr().out.splitlines() == ["[0, 5]", "[1, 9]"]


def test_an_error_in_the_action_fails_the_call(recorder):
    def fail(*args):
        raise ValueError("trace refused")

    ts.register_func("test.rt14.fail", fail, override=True)
    try:
        x = te.placeholder((2,), name="x", dtype="float32")
        y = te.compute(x.shape, lambda i: tir.trace([x[i]], "test.rt14.fail"), name="y")
        lib = ts.build(te.create_prim_func([x, y]))
        with pytest.raises(RuntimeError, match="trace refused"):
            lib(ts.nd.array(np.zeros(2, "float32")), ts.nd.empty((2,), "float32"))
    finally:
        ts.runtime.remove_global_func("test.rt14.fail")


def test_trace_expression_and_its_argument_errors():
    x = te.placeholder((2,), name="x", dtype="float16")
    call = tir.trace([x[0]], "my.action")
    assert call.dtype == "float16"
    assert call.op.name == "tir.tvm_call_trace_packed"
    assert str(call.args[0].value) == "my.action"
    with pytest.raises(TypeError, match="as a list"):
        tir.trace(x[0])
    with pytest.raises(ValueError, match="at least one"):
        tir.trace([])
    with pytest.raises(TypeError, match="name of a global function"):
        tir.trace([x[0]], 3)


def test_trace_prints_and_parses_back():
    x = te.placeholder((2,), name="x", dtype="float32")
    y = te.compute(x.shape, lambda i: tir.trace([i, x[i]], "a.b"), name="y")
    func = te.create_prim_func([x, y])
    text = func.script()
    assert 'y[v_i] = T.tvm_call_trace_packed("a.b", v_i, x[v_i])' in text
    back = ts.script.from_source(text)
    assert ts.ir.structural_equal(back, func)
    assert back.script() == text
