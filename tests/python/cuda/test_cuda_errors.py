"""Errors of the CUDA target that need no GPU."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tessera as ts
from tessera import _core

import cuda_kernels as kernels
from cuda_support import GPU_OK, requires_nvrtc


@requires_nvrtc
def test_unbound_loop_is_rejected_by_verify_memory():
    # Without the automatic schedule (which would bind the loop of this unscheduled function).
    with pytest.raises(Exception, match="Did you forget to bind?") as info, \
            ts.transform.PassContext(disabled_pass=["tir.AutoSchedule"]):
        ts.build(kernels.vector_add, target="cuda")
    assert "tir.VerifyMemory" in str(info.value)


def test_build_without_nvrtc_says_so():
    code = (
        "import tessera as ts, sys\n"
        "sys.path.insert(0, 'tests/python/cuda')\n"
        "import cuda_kernels as kernels\n"
        "try:\n"
        "    ts.build(kernels.bind_1d(kernels.vector_add), target='cuda')\n"
        "except Exception as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, TESSERA_NVRTC_PATH="/nonexistent/libnvrtc.so")
    env.pop("TESSERA_CUDA_EMULATOR", None)  # the emulator builds without NVRTC
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert "NVRTC not found" in out.stdout, out.stdout + out.stderr


@pytest.mark.skipif(GPU_OK, reason="checks the behaviour without a GPU driver")
def test_cuda_arrays_without_a_driver_raise_a_clear_error():
    with pytest.raises(RuntimeError, match="CUDA driver not found: tessera needs an NVIDIA GPU"):
        ts.nd.array(np.ones(4, "float32"), device=ts.cuda(0))
    assert not ts.cuda(0).exist
    # The CPU keeps working.
    a = ts.nd.array(np.ones(4, "float32"))
    assert a.numpy().sum() == 4


@requires_nvrtc
def test_cpu_arrays_are_rejected_by_a_cuda_module():
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    a = np.zeros(1024, "float32")
    with pytest.raises(RuntimeError, match=r"vector_add.A.device_type has an unsatisfied constraint: 2 =="):
        lib(a, a, a)
