"""Running CUDA builds: needs an NVIDIA GPU and driver, or the CPU emulator (TESSERA_CUDA_EMULATOR=1;
skipped otherwise)."""

import numpy as np
import pytest

import tessera as ts

import cuda_kernels as kernels
from cuda_support import not_emulated, requires_cuda_build, requires_gpu

pytestmark = [requires_cuda_build, requires_gpu]


def dev_array(x):
    return ts.nd.array(x, device=ts.cuda(0))


def test_arrays_copy_both_ways():
    x = np.random.rand(3, 5).astype("float32")
    a = dev_array(x)
    assert a.device == ts.cuda(0) and a.shape == (3, 5)
    np.testing.assert_array_equal(a.numpy(), x)
    a.copyfrom(x * 2)
    np.testing.assert_array_equal(a.numpy(), x * 2)
    b = ts.nd.empty((3, 5), "float32", ts.cuda(0))
    b.copyfrom(a)
    np.testing.assert_array_equal(b.numpy(), x * 2)


def test_vector_add():
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    a, b = np.random.rand(1024).astype("float32"), np.random.rand(1024).astype("float32")
    c = ts.nd.empty((1024,), "float32", ts.cuda(0))
    lib(dev_array(a), dev_array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def test_tiled_matmul():
    n = 256
    lib = ts.build(kernels.schedule_tiled_matmul(n), target="cuda")
    a, b = np.random.rand(n, n).astype("float32"), np.random.rand(n, n).astype("float32")
    c = ts.nd.empty((n, n), "float32", ts.cuda(0))
    lib(dev_array(a), dev_array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)


def test_reduction_and_softmax():
    x = np.random.rand(256, 128).astype("float32")
    lib = ts.build(kernels.schedule_row_sum(), target="cuda")
    out = ts.nd.empty((256,), "float32", ts.cuda(0))
    lib(dev_array(x), out)
    np.testing.assert_allclose(out.numpy(), x.sum(axis=1), rtol=1e-5)
    lib = ts.build(kernels.schedule_softmax(), target="cuda")
    out = ts.nd.empty((256, 128), "float32", ts.cuda(0))
    lib(dev_array(x), out)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_shared_memory_tree_reduction():
    lib = ts.build(kernels.block_sum, target="cuda")
    x = np.random.rand(256).astype("float32")
    out = ts.nd.empty((2,), "float32", ts.cuda(0))
    lib(dev_array(x), out)
    np.testing.assert_allclose(out.numpy(), x.reshape(2, 128).sum(axis=1), rtol=1e-5)


def test_symbolic_sizes():
    lib = ts.build(kernels.bind_1d(kernels.scale_dynamic, "B", 64), target="cuda")
    for n in (1, 100, 1000):
        x = np.random.rand(n).astype("float32")
        out = ts.nd.empty((n,), "float32", ts.cuda(0))
        lib(dev_array(x), out)
        np.testing.assert_allclose(out.numpy(), 2 * x, rtol=1e-6)


def test_fp16_vector_add():
    lib = ts.build(kernels.bind_1d(kernels.vector_add_fp16), target="cuda")
    a, b = np.random.rand(1024).astype("float16"), np.random.rand(1024).astype("float16")
    c = ts.nd.empty((1024,), "float16", ts.cuda(0))
    lib(dev_array(a), dev_array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b * np.float16(2), rtol=1e-2)


def test_export_and_load(tmp_path):
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    path = lib.export_library(tmp_path / "add.so")
    loaded = ts.runtime.load_module(path)
    assert loaded.type_key == "cuda"
    assert "vector_add_kernel" in loaded.imported_modules[0].get_source()
    a = np.random.rand(1024).astype("float32")
    c = ts.nd.empty((1024,), "float32", ts.cuda(0))
    loaded(dev_array(a), dev_array(a), c)
    np.testing.assert_allclose(c.numpy(), 2 * a, rtol=1e-6)


def test_time_evaluator_synchronises():
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    a = dev_array(np.ones(1024, "float32"))
    c = ts.nd.empty((1024,), "float32", ts.cuda(0))
    result = lib.time_evaluator("vector_add", ts.cuda(0), number=5)(a, a, c)
    assert result.mean > 0


@not_emulated
def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    a = torch.rand(1024, device="cuda")
    c = torch.empty(1024, device="cuda")
    lib(a, a, c)  # torch tensors are passed without copies
    torch.cuda.synchronize()
    assert torch.allclose(c, 2 * a)
    t = torch.from_dlpack(dev_array(np.arange(4, dtype="float32")))
    assert t.device.type == "cuda" and t.tolist() == [0, 1, 2, 3]
    back = ts.nd.from_dlpack(t)
    np.testing.assert_array_equal(back.numpy(), np.arange(4, dtype="float32"))


@not_emulated
def test_dlpack_with_cupy():
    cupy = pytest.importorskip("cupy")
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    a = cupy.random.rand(1024, dtype=cupy.float32)
    c = cupy.empty(1024, dtype=cupy.float32)
    lib(a, a, c)
    cupy.cuda.Device().synchronize()
    assert cupy.allclose(c, 2 * a)
    x = cupy.from_dlpack(dev_array(np.arange(4, dtype="float32")))
    assert x.tolist() == [0, 1, 2, 3]
