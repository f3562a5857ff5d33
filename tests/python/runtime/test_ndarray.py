"""NDArray as TVM's runtime Tensor: views (_create_view), byte_offset, strides, copies and the
dtypes arrays hold, checked against numpy."""

import gc

import ml_dtypes
import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def test_view_shares_memory_and_reads_its_window():
    base = ts.nd.array(np.arange(24, dtype="int32"))
    view = base._create_view([2, 3], relative_byte_offset=6 * 4)
    np.testing.assert_array_equal(view.numpy(), np.arange(6, 12).reshape(2, 3))
    assert view.shape == (2, 3) and view.dtype == "int32"
    assert view.byte_offset == 24 and base.byte_offset == 0
    # A write through the view shows in the base, and the other way round.
    view.copyfrom(np.full((2, 3), -1, "int32"))
    expect = np.arange(24, dtype="int32")
    expect[6:12] = -1
    np.testing.assert_array_equal(base.numpy(), expect)
    base.copyfrom(np.zeros(24, "int32"))
    np.testing.assert_array_equal(view.numpy(), np.zeros((2, 3), "int32"))


def test_subview_offsets_add_up():
    data = np.arange(64, dtype="float32")
    base = ts.nd.array(data)
    view = base._create_view([32], relative_byte_offset=16 * 4)
    sub = view._create_view([4, 2], relative_byte_offset=8 * 4)
    assert sub.byte_offset == (16 + 8) * 4
    np.testing.assert_array_equal(sub.numpy(), data[24:32].reshape(4, 2))


def test_view_with_another_dtype_reinterprets_the_bytes():
    data = np.array([1.0, -2.5, 3.25, 0.0], "float32")
    base = ts.nd.array(data)
    bits = base._create_view([4], dtype="uint32")
    np.testing.assert_array_equal(bits.numpy(), data.view("uint32"))
    halves = base._create_view([8], dtype="int16")
    np.testing.assert_array_equal(halves.numpy(), data.view("int16"))


def test_view_keeps_the_memory_alive():
    base = ts.nd.array(np.arange(8, dtype="int64"))
    view = base._create_view([4], relative_byte_offset=4 * 8)
    del base
    gc.collect()
    np.testing.assert_array_equal(view.numpy(), np.arange(4, 8))


@pytest.mark.parametrize("shape, offset, span", [
    ([2048], 0, "0 <= i_byte < 8192"),
    ([1024], 2048 * 4, "8192 <= i_byte < 12288"),
    ([1024], 512 * 4, "2048 <= i_byte < 6144"),
])
def test_view_outside_the_array_is_a_value_error(shape, offset, span):
    base = ts.nd.array(np.arange(1024, dtype="int32"))
    with pytest.raises(ValueError, match=span) as info:
        base._create_view(shape, relative_byte_offset=offset)
    assert "only contains 4096 bytes" in str(info.value)


def test_subview_is_checked_against_its_own_view():
    base = ts.nd.array(np.arange(1024, dtype="int32"))
    view = base._create_view([512])
    with pytest.raises(ValueError, match="2048 <= i_byte < 4096.*only contains 2048 bytes"):
        view._create_view([512], relative_byte_offset=512 * 4)


def test_view_arguments_are_checked():
    base = ts.nd.array(np.arange(8, dtype="int32"))
    with pytest.raises(ValueError, match="before its array"):
        base._create_view([2], relative_byte_offset=-4)
    with pytest.raises(ValueError, match=">= 0"):
        base._create_view([-1])
    with pytest.raises(TypeError, match="dimension 0 must be an integer"):
        base._create_view(["a"])
    with pytest.raises(TypeError, match="relative_byte_offset must be an integer"):
        base._create_view([2], relative_byte_offset=1.5)


@T.prim_func
def _add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i] + T.float32(1)


def test_built_function_reads_and_writes_through_views():
    lib = ts.build(_add_one)
    data = np.arange(16, dtype="float32")
    a = ts.nd.array(data)
    out = ts.nd.array(np.zeros(16, "float32"))
    lib(a._create_view([4], relative_byte_offset=8 * 4), out._create_view([4], relative_byte_offset=4 * 4))
    expect = np.zeros(16, "float32")
    expect[4:8] = data[8:12] + 1
    np.testing.assert_array_equal(out.numpy(), expect)
    # The view's descriptor is unchanged by the call: a second call writes the same place.
    view = out._create_view([4], relative_byte_offset=12 * 4)
    lib(a._create_view([4]), view)
    lib(a._create_view([4]), view)
    expect[12:16] = data[0:4] + 1
    np.testing.assert_array_equal(out.numpy(), expect)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float16", "float32", "float64"])
def test_numpy_dtypes_round_trip(dtype):
    rng = np.random.default_rng(5)
    data = (rng.integers(0, 2, (3, 5)) if dtype == "bool" else rng.integers(0, 100, (3, 5))).astype(dtype)
    a = ts.nd.array(data)
    assert a.dtype == dtype and a.shape == (3, 5) and a.ndim == 2 and a.strides is None
    out = a.numpy()
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, data)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e3m4"])
def test_ml_dtypes_round_trip(dtype):
    data = np.array([[0.5, -1.0, 2.0], [4.0, 0.25, -8.0]], dtype=getattr(ml_dtypes, dtype))
    a = ts.nd.array(data)
    assert a.dtype == dtype
    out = a.numpy()
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(out.astype("float32"), data.astype("float32"))


def test_vector_dtype_reads_as_a_trailing_lanes_axis():
    a = ts.nd.empty((3,), "float32x4")
    data = np.arange(12, dtype="float32").reshape(3, 4)
    a.copyfrom(data)
    np.testing.assert_array_equal(a.numpy(), data)
    with pytest.raises(ValueError, match=r"\(3,\) into \(3, 4\)"):
        a.copyfrom(np.zeros(3, "float32"))


def test_copies_and_their_errors():
    a = ts.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    b = ts.nd.empty((2, 3), "float32")
    assert a.copyto(b) is b
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    c = a.copyto(ts.cpu(0))
    assert c is not a and c.same_as(c) and not c.same_as(a)
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    b.copyfrom([[1, 2, 3], [4, 5, 6]])  # converted to the array's dtype
    np.testing.assert_array_equal(b.numpy(), np.array([[1, 2, 3], [4, 5, 6]], "float32"))
    with pytest.raises(ValueError, match="shape mismatch"):
        b.copyfrom(np.zeros((3, 2), "float32"))
    with pytest.raises(TypeError, match="NDArray or a Device"):
        a.copyto("cpu")
    with pytest.raises(ValueError, match="whole array"):
        b[0] = 1


def test_dlpack_of_a_view_is_its_window():
    base = ts.nd.array(np.arange(12, dtype="float64"))
    view = base._create_view([2, 2], relative_byte_offset=4 * 8)
    shared = np.from_dlpack(view)
    np.testing.assert_array_equal(shared, [[4, 5], [6, 7]])
    base.copyfrom(np.zeros(12))
    np.testing.assert_array_equal(shared, np.zeros((2, 2)))  # no copy: the same memory
    copied = ts.nd.from_dlpack(view)
    assert copied.byte_offset == 0
    np.testing.assert_array_equal(copied.numpy(), np.zeros((2, 2)))


def test_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="arrays of float4_e2m1fn are not supported"):
        ts.nd.empty((4,), "float4_e2m1fn")
