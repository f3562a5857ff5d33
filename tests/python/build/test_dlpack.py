"""DLPack both ways (numpy >= 1.23 always, torch CPU tensors where torch is installed) and the
tvm.nd-style NDArray API."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint16", "int64", "float16", "bool"])
def test_numpy_from_dlpack_views_the_array(dtype):
    x = (np.arange(12).reshape(3, 4) % 2).astype(dtype)
    a = ts.nd.array(x)
    y = np.from_dlpack(a)
    assert y.dtype == x.dtype and y.shape == (3, 4)
    np.testing.assert_array_equal(y, x)
    # A view, not a copy: a later write through tessera shows.
    a.copyfrom(np.ones((3, 4), dtype))
    np.testing.assert_array_equal(y, np.ones((3, 4), dtype))
    assert a.__dlpack_device__() == (1, 0)


def test_dlpack_capsule_and_copy():
    a = ts.nd.array(np.arange(4, dtype="float32"))
    assert type(a.__dlpack__()).__name__ == "PyCapsule"
    assert type(a.to_dlpack()).__name__ == "PyCapsule"
    with pytest.raises(BufferError, match="cannot export an array of cpu"):
        a.__dlpack__(dl_device=(2, 0))


def test_from_dlpack_imports_a_copy():
    x = np.arange(6, dtype="int32").reshape(2, 3)
    a = ts.nd.from_dlpack(x)
    assert a.shape == (2, 3) and a.dtype == "int32" and a.device == ts.cpu(0)
    x[0, 0] = 99
    assert a.numpy()[0, 0] == 0
    # Strided host arrays are made compact.
    b = ts.nd.from_dlpack(np.arange(8, dtype="float32")[::2])
    np.testing.assert_array_equal(b.numpy(), [0, 2, 4, 6])
    # Round trip through numpy.
    np.testing.assert_array_equal(ts.nd.from_dlpack(np.from_dlpack(a)).numpy(), a.numpy())
    with pytest.raises(TypeError, match="from_dlpack expects a tensor with __dlpack__") as info:
        ts.nd.from_dlpack([1, 2])
    assert isinstance(info.value, TesseraError)


def test_ndarray_api_like_tvm_nd():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    a = ts.nd.array(x)
    assert (a.shape, a.dtype, a.ndim, a.device) == ((2, 3), "float32", 2, ts.cpu(0))
    np.testing.assert_array_equal(a.numpy(), x)
    np.testing.assert_array_equal(a.asnumpy(), x)
    e = ts.nd.empty((2, 3), "float32")
    assert a.copyto(e) is e
    np.testing.assert_array_equal(e.numpy(), x)
    c = a.copyto(ts.cpu(0))
    assert isinstance(c, ts.nd.NDArray) and c is not a
    np.testing.assert_array_equal(c.numpy(), x)
    # copyfrom converts values to the array's dtype, as TVM does; a[:] = v is copyfrom.
    e.copyfrom(np.ones((2, 3), "int64"))
    np.testing.assert_array_equal(e.numpy(), np.ones((2, 3), "float32"))
    e[:] = x * 2
    np.testing.assert_array_equal(e.numpy(), x * 2)
    with pytest.raises(ValueError, match="shape mismatch") as info:
        e.copyfrom(np.ones((3, 2), "float32"))
    assert isinstance(info.value, TesseraError)
    with pytest.raises(TypeError, match="copyto expects an NDArray or a Device"):
        a.copyto("somewhere")
    assert ts.runtime.tensor(x, ts.cpu(0)).shape == (2, 3)
    assert ts.nd.array(x, dtype="float64").dtype == "float64"


def test_built_function_takes_what_dlpack_gives():
    from tessera.script import tir as T

    @T.prim_func
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] * T.float32(2)

    lib = ts.build(double)
    a = ts.nd.array(np.arange(4, dtype="float32"))
    b = ts.nd.empty((4,), "float32")
    lib(a, b)
    np.testing.assert_array_equal(np.from_dlpack(b), [0, 2, 4, 6])


def test_torch_cpu_tensors_both_ways():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    a = ts.nd.array(t)
    assert a.shape == (2, 3) and a.dtype == "float32"
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    b = ts.nd.from_dlpack(t)
    np.testing.assert_array_equal(b.numpy(), t.numpy())
    back = torch.from_dlpack(a)
    assert back.dtype == torch.float32 and back.tolist() == t.tolist()
