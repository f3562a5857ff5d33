"""tir.analysis.is_pure_function / assert_pure_function."""

import pytest

from tessera import tir
from tessera.error import TesseraTypeError
from tessera.script import tir as T


def test_local_memory_and_pure_calls_are_pure():
    @T.prim_func
    def total(A: T.Buffer((4, 4), "float32")) -> T.float32:
        acc = T.decl_buffer([], "float32")
        acc[()] = T.float32(0)
        for i, j in T.grid(4, 4):
            acc[()] = acc[()] + T.exp(A[i, j])
        T.ret(acc[()])

    assert tir.analysis.is_pure_function(total)
    assert tir.analysis.assert_pure_function(total) is True


def test_a_store_to_an_argument_is_reported_where_it_is():
    @T.prim_func
    def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i]  # the-store

    assert not tir.analysis.is_pure_function(copy)
    with pytest.raises(AssertionError, match="stores to buffer B, which it did not allocate") as err:
        tir.analysis.assert_pure_function(copy)
    assert "the-store" in str(err.value)


def test_extern_calls():
    @T.prim_func
    def pure_extern():
        T.evaluate(T.call_pure_extern("fabs_like", T.float32(1), dtype="float32"))

    @T.prim_func
    def impure_extern():
        T.evaluate(T.call_extern("log_event", dtype="int32"))

    assert tir.analysis.is_pure_function(pure_extern)
    assert not tir.analysis.is_pure_function(impure_extern)
    with pytest.raises(AssertionError, match="calls tir.call_extern, which may have any side effect"):
        tir.analysis.assert_pure_function(impure_extern)
    with pytest.raises(TesseraTypeError, match="is_pure_function takes a PrimFunc"):
        tir.analysis.is_pure_function("f")
