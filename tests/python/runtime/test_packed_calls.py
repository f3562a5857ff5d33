"""T.call_packed from generated host code: string arguments reach the Python function as str,
and a call used as a value (te.compute of a call_packed) runs and is worth its return code."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.script import tir as T


@pytest.fixture
def registered():
    names = []

    def register(name, fn):
        ts.register_func(name, fn, override=True)
        names.append(name)

    yield register
    for name in names:
        ts.runtime.remove_global_func(name)


def test_string_arguments_arrive_as_str(registered, tmp_path):
    got = []
    registered("test.rt14.strings", lambda *args: got.append(args))
    path = str(tmp_path / 'a "quoted"\\name.txt')

    @T.prim_func
    def f(n: T.int32):
        T.evaluate(T.call_packed("test.rt14.strings", path, n, "second"))

    ts.build(f)(5)
    assert got == [(path, 5, "second")]


def test_call_packed_as_a_computed_value(registered, tmp_path):
    log = tmp_path / "log"
    registered("test.rt14.append", lambda name: open(name, "a").write("c") and None)
    x = te.compute((), lambda: tir.call_packed("test.rt14.append", str(log)), name="x")
    lib = ts.build(te.create_prim_func([x]))
    out = ts.nd.array(np.array(7, "int32"))
    lib(out)
    lib(out)
    assert log.read_text() == "cc"
    assert out.numpy() == 0  # the return code


def test_a_failing_call_used_as_a_value_fails_the_kernel(registered):
    def fail(*args):
        raise KeyError("no such entry")

    registered("test.rt14.fails", fail)
    x = te.compute((2,), lambda i: tir.call_packed("test.rt14.fails", i), name="x")
    lib = ts.build(te.create_prim_func([x]))
    with pytest.raises(RuntimeError, match="KeyError.*no such entry"):
        lib(ts.nd.empty((2,), "int32"))
