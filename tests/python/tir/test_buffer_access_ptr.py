"""Buffer.access_ptr: the tir.tvm_access_ptr call over a buffer, inside TVMScript and outside."""

import pytest

from tessera import tir
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T


def test_access_ptr_in_script_prints_as_the_call():
    @T.prim_func
    def with_method(x: T.Buffer((4, 8), "float32")):
        T.evaluate(x.access_ptr("r", extent=8))
        T.evaluate(x.access_ptr("rw", offset=8))

    @T.prim_func
    def with_call(x: T.Buffer((4, 8), "float32")):
        T.evaluate(T.tvm_access_ptr(T.type_annotation("float32"), x.data, 0, 8, 1))
        T.evaluate(T.tvm_access_ptr(T.type_annotation("float32"), x.data, 8, 24, 3))

    assert_structural_equal(with_method.body, with_call.body, map_free_vars=True)


def test_access_ptr_default_extent_is_the_buffer_size():
    buf = tir.decl_buffer((3, 5), "int8", name="q")
    call = buf.access_ptr("w")
    assert call.op.name == "tir.tvm_access_ptr"
    assert [int(a) for a in call.args[2:]] == [0, 15, 2]
    assert call.dtype == "handle"


def test_access_ptr_bad_mask():
    buf = tir.decl_buffer((4,), "float32", name="a")
    with pytest.raises(TesseraValueError, match="access mask 'x'"):
        buf.access_ptr("x")
    with pytest.raises(TesseraTypeError, match="access mask"):
        buf.access_ptr(1.5)
