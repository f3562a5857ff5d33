"""Intermediate buffers that several kernels share live in device memory: the host allocates them
through the runtime (a workspace freed at the end of the call), never on its own stack."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T

from cuda_support import requires_cuda_build, requires_gpu


@T.prim_func
def two_steps(A: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")):
    E = T.alloc_buffer((1024,))
    for i in range(1024):
        with T.block("E"):
            vi = T.axis.spatial(1024, i)
            E[vi] = T.exp(A[vi])
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i)
            C[vi] = E[1023 - vi] * T.float32(2)


def scheduled():
    sch = tir.Schedule(two_steps)
    for name in ("E", "C"):
        (i,) = sch.get_loops(sch.get_block(name))
        bx, tx = sch.split(i, [None, 128])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
    return sch.mod


@requires_cuda_build
def test_host_allocates_the_intermediate_on_the_device():
    src = ts.build(scheduled(), target="cuda").get_source()
    assert 'TESSERA_CUDA_WORKSPACE E = (float*)tessera_cuda_alloc_workspace(' in src
    assert "float E[" not in src  # not a host array
    assert src.count("(void*)&E") == 2  # passed to both kernels


@requires_gpu
def test_kernels_share_the_intermediate():
    lib = ts.build(scheduled(), target="cuda")
    a = np.random.rand(1024).astype("float32")
    c = ts.nd.empty((1024,), "float32", ts.cuda(0))
    for _ in range(3):  # allocated and freed by every call
        lib(ts.nd.array(a, device=ts.cuda(0)), c)
        np.testing.assert_allclose(c.numpy(), np.exp(a)[::-1] * 2, rtol=1e-5)
