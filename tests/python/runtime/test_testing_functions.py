"""TVM's FFI test functions (tvm.testing.echo, testing.Accepts*, ErrorTest, ...) and the
operator error classes: the values and exception types TVM's runtime tests expect."""

import os

import pytest

import tessera as ts
import tessera.testing
from tessera import error


def test_registered_as_global_functions():
    for name in ("testing.echo", "testing.AcceptsBool", "testing.AcceptsMapOfPrimExpr", "testing.ErrorTest"):
        assert ts.runtime.get_global_func(name) is not None
    assert ts.runtime.get_global_func("testing.echo") is tessera.testing.echo


def test_values_come_back_as_the_runtime_converts_them():
    get = ts.runtime.get_global_func
    s = ts.runtime.String("xyz")
    assert get("testing.echo")(s) is s
    assert get("testing.AcceptsBool")(1) is True and get("testing.AcceptsBool")(0) is False
    assert type(get("testing.AcceptsInt")(True)) is int
    assert get("testing.AcceptsObjectRefArray")(["hello", 1]) == "hello"
    assert get("testing.AcceptsMapReturnsValue")({"a": 3, "b": 4}, "b") == 4
    assert get("testing.AcceptsMapReturnsMap")({"a": False}) == {"a": False}
    e = get("testing.AcceptsPrimExpr")(True)
    assert isinstance(e, ts.tir.IntImm) and e.dtype == "bool" and e.value == 1
    arr = get("testing.AcceptsArrayOfPrimExpr")([7, False])
    assert [(x.dtype, x.value) for x in arr] == [("int32", 7), ("bool", 0)]
    m = get("testing.AcceptsMapOfPrimExpr")({"a": 1, "b": True})
    assert (m["a"].dtype, m["a"].value, m["b"].dtype) == ("int32", 1, "bool")


def test_error_helpers_raise_tessera_error_classes():
    with pytest.raises(error.OpNotImplemented, match="myop") as info:
        tessera.testing.test_raise_error("OpNotImplemented", "myop")
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, error.TVMError)
    with pytest.raises(ValueError, match="not an error class"):
        tessera.testing.test_raise_error("Nothing", "x")
    check = tessera.testing.test_check_eq_callback("sizes differ")
    check(2, 2)
    with pytest.raises(error.InternalError, match="2 == 3: sizes differ"):
        check(2, 3)
    tessera.testing.ErrorTest(0, 0)
    with pytest.raises(ValueError, match="got 0 and 1"):
        tessera.testing.ErrorTest(0, 1)
    with pytest.raises(error.InternalError):
        tessera.testing.ErrorTest(1, 1)


def test_wrapped_callback_keeps_the_original_exception():
    def fail():
        raise KeyError("inner")

    wrapped = tessera.testing.test_wrap_callback(tessera.testing.test_wrap_callback(fail))
    with pytest.raises(KeyError, match="inner"):
        wrapped()


def test_operator_error_classes():
    assert issubclass(error.OpAttributeRequired, AttributeError)
    assert issubclass(error.OpAttributeInvalid, AttributeError)
    assert issubclass(error.OpAttributeUnImplemented, NotImplementedError)
    assert all(issubclass(c, error.OpError) for c in (error.OpNotImplemented, error.OpAttributeInvalid))


def test_native_library_names_the_extension():
    assert os.path.samefile(error._LIB._name, ts._core.__file__)
