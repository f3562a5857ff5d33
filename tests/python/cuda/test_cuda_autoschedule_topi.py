"""Operators of the operator library built for "cuda" with no schedule (the automatic schedule
binds their threads) against numpy, on a GPU or the CPU emulator (TESSERA_CUDA_EMULATOR=1).
The whole library runs for "cuda" with
``TESSERA_CUDA_EMULATOR=1 TESSERA_TOPI_TARGET=cuda pytest tests/python/topi`` (slow: not in CI);
here are the operators that needed a rule of their own."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

from cuda_support import EMULATED, GPU_OK, requires_cuda_build

requires_runtime = pytest.mark.skipif(
    not GPU_OK and not EMULATED, reason="needs a CUDA GPU or the emulator (TESSERA_CUDA_EMULATOR=1)")


def run_cuda(inputs, outputs, arrays):
    lib = ts.build(te.create_prim_func(list(inputs) + list(outputs)), target="cuda")
    dev = ts.cuda(0)
    args = [ts.nd.array(a, device=dev) for a in arrays]
    outs = [ts.nd.empty(tuple(int(s) for s in o.shape), o.dtype, dev) for o in outputs]
    lib(*args, *outs)
    return [o.numpy() for o in outs]


@requires_runtime
def test_scans_one_thread_per_line():
    # topi.cumsum / cumprod are te.externs whose lines run in a parallel loop: on "cuda" each
    # line is a thread (5 lines: fewer threads than a block's; 1 line of 185; 37 lines), beside
    # an ordinary block that the rules schedule (its own kernel). One function, one compile.
    x = np.random.default_rng(0).integers(-9, 9, size=(5, 37)).astype("float32")
    a = te.placeholder(x.shape, "float32", name="A")
    outs = [topi.cumsum(a, axis=1), topi.cumsum(a, axis=None), topi.cumsum(a, axis=0, exclusive=True),
            topi.cumprod(topi.multiply(a, 0.5), axis=0)]
    rows, flat, cols, prod = run_cuda([a], outs, [x])
    np.testing.assert_array_equal(rows, np.cumsum(x, axis=1))
    np.testing.assert_array_equal(flat, np.cumsum(x))
    np.testing.assert_array_equal(cols, np.cumsum(x, axis=0) - x)
    np.testing.assert_allclose(prod, np.cumprod(x * 0.5, axis=0), rtol=1e-6)


@requires_cuda_build
def test_extern_is_scheduled_and_bound():
    # 300 lines: two blocks of 256 threads, the second guarded; the producer inlined.
    a = te.placeholder((300, 3), "float32", name="A")
    f = te.create_prim_func([a, topi.cumsum(topi.exp(a), axis=1)])
    assert ts.autoschedule.carries_no_schedule(f)[0]
    text = ts.lower(f, target="cuda", stage="split", auto_schedule=True).script()
    assert '"tessera.thread_extents": ["blockIdx.x", 2, "threadIdx.x", 256]' in text
    assert "if blockIdx_x * 256 + threadIdx_x < 300:" in text
    assert "acc_1[0] + T.exp(A_1[" in text
