"""The automatic schedule for "cuda": every operator builds with no schedule (threads bound by
the rules) and matches numpy on the GPU or the CPU emulator (TESSERA_CUDA_EMULATOR=1)."""

import os
import sys

import numpy as np
import pytest

import tessera as ts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cuda"))
from cuda_support import EMULATED, GPU_OK, NVRTC_OK

from test_autoschedule import CASES

requires_runtime = pytest.mark.skipif(
    not GPU_OK and not EMULATED,
    reason="needs a CUDA GPU or the emulator (TESSERA_CUDA_EMULATOR=1)")
requires_build = pytest.mark.skipif(not NVRTC_OK and not EMULATED, reason="needs NVRTC or the emulator")

# The long elementwise case is slow on the emulator; the short ones cover the same rule.
CUDA_CASES = [c for c in CASES if c[0] != "elementwise_long"]
CUDA_IDS = [c[0] for c in CUDA_CASES]


@requires_runtime
@pytest.mark.parametrize("name,func,inputs,expected", CUDA_CASES, ids=CUDA_IDS)
def test_cuda_without_schedule_matches_numpy(name, func, inputs, expected):
    lib = ts.build(func, target="cuda")
    dev = ts.cuda(0)
    args = [ts.nd.array(x, device=dev) for x in inputs]
    out = ts.nd.empty(expected.shape, "float32", dev)
    lib(*args, out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=2e-4, atol=1e-5)


@requires_build
def test_cuda_rules_bind_threads():
    import ops

    kinds = lambda sch: "\n".join(sch.trace.as_python())
    ew = kinds(ts.autoschedule(ops.elementwise_chain((1000,)), target="cuda"))
    assert 'thread_axis="blockIdx.x"' in ew and 'thread_axis="threadIdx.x"' in ew
    mm = kinds(ts.autoschedule(ops.matmul(64, 64, 64), target="cuda"))
    assert mm.count('storage_scope="shared"') == 2 and 'thread_axis="threadIdx.y"' in mm
    sm = ts.autoschedule(ops.softmax(8, 128), target="cuda")
    # A row per thread block; each reduction across the block's threads.
    assert "compute_at" in kinds(sm)
    lowered = ts.lower(sm.mod, target="cuda", stage="split")
    assert "tvm_thread_allreduce" in lowered.script() or "shfl" in lowered.script() or \
        "red_buf" in lowered.script()
    assert ts.autoschedule.target_facts("cuda")["max_threads_per_block"] == 1024
