"""The TensorIR tutorial's GPU step: bind blockIdx.x / threadIdx.x, build for CUDA, run.

Building needs NVRTC (the CUDA toolkit) but no GPU; running needs an NVIDIA GPU and driver.
"""

import numpy as np

import tessera as ts
from tessera import _core, tir
from tessera.script import ir as I
from tessera.script import tir as T


@I.ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
             C: T.Buffer((1024,), "float32")):
        for i in range(1024):
            with T.block("C"):
                vi = T.axis.spatial(1024, i)
                C[vi] = A[vi] + B[vi]


sch = tir.Schedule(MyModule)
(i,) = sch.get_loops(sch.get_block("C"))
i0, i1 = sch.split(i, [None, 128])
sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
print(sch.mod.script())

nvrtc_ok, why = _core.nvrtc_status()
if not nvrtc_ok and not _core.cuda_emulator_enabled():
    print(f"skipped the CUDA build: NVRTC not available ({why})")
    raise SystemExit(0)
lib = ts.build(sch.mod, target="cuda")
print(lib.imported_modules[0].get_source())

if not ts.cuda(0).exist:
    print("skipped running: no CUDA GPU/driver available "
          "(TESSERA_CUDA_EMULATOR=1 runs it on the CPU emulator)")
    raise SystemExit(0)
dev = ts.cuda(0)
a = np.random.rand(1024).astype("float32")
b = np.random.rand(1024).astype("float32")
a_nd, b_nd = ts.nd.array(a, device=dev), ts.nd.array(b, device=dev)
c_nd = ts.nd.empty((1024,), "float32", dev)
lib(a_nd, b_nd, c_nd)
np.testing.assert_allclose(c_nd.numpy(), a + b, rtol=1e-6)
print("C = A + B on", dev, "matches numpy")
