"""The CPU emulator of CUDA devices (TESSERA_CUDA_EMULATOR=1): hand-written CUDA C kernels run
through _core.CudaEmulatorProgram on numpy arrays, checked against numpy."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tessera as ts
from tessera import _core, tir
from tessera.script import tir as T

import cuda_kernels as kernels
from cuda_support import requires_emulator

pytestmark = requires_emulator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ts.__file__)))


def program(source):
    return _core.CudaEmulatorProgram(source)


def test_the_emulated_device():
    assert ts.cuda(0).exist
    assert _core.cuda_compute_capability(0) == 80
    with pytest.raises(RuntimeError, match=r"cuda\(1\) does not exist; the CUDA emulator"):
        ts.nd.empty((4,), "float32", ts.cuda(1))
    assert _core.cuda_emulator_kernel_names(
        'extern "C" __global__ __launch_bounds__(64) void a(float* x) {}\n'
        'extern "C" __global__ void b_2(int n) {}\n') == ["a", "b_2"]


REVERSE = r"""
extern "C" __global__ void reverse(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[256];
  int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  s[t] = in[base + t];
  BARRIER
  out[base + t] = s[blockDim.x - 1 - t];
}
"""


def test_syncthreads_orders_shared_memory():
    x = np.arange(512, dtype="float32") + 1
    out = np.zeros_like(x)
    program(REVERSE.replace("BARRIER", "__syncthreads();")).launch("reverse", [2], [256], [x, out])
    np.testing.assert_array_equal(out, x.reshape(2, 256)[:, ::-1].reshape(-1))
    # Without the barrier the first threads read slots the last ones have not written yet.
    wrong = np.zeros_like(x)
    program(REVERSE.replace("BARRIER", "")).launch("reverse", [2], [256], [x, wrong])
    assert not np.array_equal(wrong, out)


def test_barriers_in_a_loop_scan():
    # Hillis-Steele inclusive scan: a barrier between every read and write phase.
    src = r"""
extern "C" __global__ void scan(const int* __restrict__ in, int* __restrict__ out, int n) {
  __shared__ int buf[2][128];
  int t = threadIdx.x, cur = 0;
  buf[0][t] = in[blockIdx.x * n + t];
  __syncthreads();
  for (int d = 1; d < n; d *= 2) {
    int v = buf[cur][t];
    if (t >= d) v += buf[cur][t - d];
    buf[1 - cur][t] = v;
    cur = 1 - cur;
    __syncthreads();
  }
  out[blockIdx.x * n + t] = buf[cur][t];
}
"""
    x = np.random.randint(-50, 50, size=(3, 128)).astype("int32")
    out = np.zeros_like(x)
    program(src).launch("scan", [3], [128], [x, out, 128])
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))


def test_warp_shuffles():
    src = r"""
extern "C" __global__ void shuffles(const float* __restrict__ in, float* __restrict__ out) {
  int t = threadIdx.x, lane = t % 32, i = blockIdx.x * blockDim.x + t;
  float v = in[i];
  float down = v;
  for (int off = 16; off > 0; off /= 2) down += __shfl_down_sync(0xffffffffu, down, off);
  float butterfly = v;
  for (int m = 16; m > 0; m /= 2) butterfly += __shfl_xor_sync(0xffffffffu, butterfly, m);
  float scan = v;
  for (int d = 1; d < 32; d *= 2) {
    float y = __shfl_up_sync(0xffffffffu, scan, d);
    if (lane >= d) scan += y;
  }
  float bcast = __shfl_sync(0xffffffffu, v, 3);
  float seg = __shfl_down_sync(0xffffffffu, v, 1, 8);  // within groups of 8 lanes
  out[i * 5 + 0] = lane == 0 ? down : -1.0f;
  out[i * 5 + 1] = butterfly;
  out[i * 5 + 2] = scan;
  out[i * 5 + 3] = bcast;
  out[i * 5 + 4] = seg;
}
"""
    x = np.random.randint(0, 100, size=128).astype("float32")  # integers: sums are exact
    out = np.zeros((128, 5), "float32")
    program(src).launch("shuffles", [2], [64], [x, out])
    warps = x.reshape(4, 32)
    lane = np.arange(128) % 32
    np.testing.assert_array_equal(out[lane == 0, 0], warps.sum(axis=1))
    np.testing.assert_array_equal(out[:, 1], np.repeat(warps.sum(axis=1), 32))
    np.testing.assert_array_equal(out[:, 2], np.cumsum(warps, axis=1).reshape(-1))
    np.testing.assert_array_equal(out[:, 3], np.repeat(warps[:, 3], 32))
    groups = x.reshape(16, 8)
    expect_seg = np.concatenate([groups[:, 1:], groups[:, 7:]], axis=1).reshape(-1)
    np.testing.assert_array_equal(out[:, 4], expect_seg)


def test_divergent_shuffles_with_partial_masks():
    # The two halves of a warp shuffle in different branches, each naming only its own lanes.
    src = r"""
extern "C" __global__ void halves(const int* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x, v = in[t];
  if (t < 16) {
    v = __shfl_xor_sync(0x0000ffffu, v, 1);
  } else {
    __syncwarp(0xffff0000u);
    v = __shfl_sync(0xffff0000u, v, 16);
  }
  out[t] = v;
}
"""
    x = np.arange(32, dtype="int32") * 10
    out = np.zeros_like(x)
    program(src).launch("halves", [1], [32], [x, out])
    np.testing.assert_array_equal(out[:16], x[np.arange(16) ^ 1])
    np.testing.assert_array_equal(out[16:], np.full(16, x[16]))


def test_warp_votes():
    src = r"""
extern "C" __global__ void votes(const int* __restrict__ in, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned b = __ballot_sync(0xffffffffu, in[t] > 0);
  int any = __any_sync(0xffffffffu, in[t] > 0);
  int all = __all_sync(0xffffffffu, in[t] > 0);
  __syncwarp();
  if (t % 32 == 0) {
    out[(t / 32) * 3 + 0] = b;
    out[(t / 32) * 3 + 1] = any;
    out[(t / 32) * 3 + 2] = all;
  }
}
"""
    x = np.zeros(96, "int32")
    x[[0, 5, 31]] = 1  # warp 0: some; warp 1: none; warp 2: all
    x[64:] = 1
    out = np.zeros(9, "uint32")
    program(src).launch("votes", [1], [96], [x, out])
    assert out.tolist() == [(1 << 0) | (1 << 5) | (1 << 31), 1, 0, 0, 0, 0, 0xFFFFFFFF, 1, 1]


def bf16_round(f32):
    """float32 -> bfloat16 bits, rounding to nearest even (nan stays nan)."""
    bits = np.asarray(f32, "float32").view("uint32").astype("uint64")
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("uint16")
    nan = np.isnan(f32)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype("uint16")
    return rounded


def bf16_value(bits):
    return (bits.astype("uint32") << 16).view("float32")


HALF_SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halves(const float* __restrict__ f, const half* __restrict__ a,
                                  const half* __restrict__ b, half* __restrict__ h,
                                  const nv_bfloat16* __restrict__ c, const nv_bfloat16* __restrict__ d,
                                  nv_bfloat16* __restrict__ g, float* __restrict__ back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  h[i * 6 + 0] = __float2half(f[i]);
  h[i * 6 + 1] = a[i] + b[i];
  h[i * 6 + 2] = a[i] * b[i];
  h[i * 6 + 3] = a[i] / b[i];
  h[i * 6 + 4] = a[i] - b[i];
  h[i * 6 + 5] = __hmax(a[i], b[i]);
  g[i * 5 + 0] = __float2bfloat16(f[i]);
  g[i * 5 + 1] = c[i] + d[i];
  g[i * 5 + 2] = c[i] * d[i];
  g[i * 5 + 3] = c[i] / d[i];
  g[i * 5 + 4] = (nv_bfloat16)3;
  back[i * 2 + 0] = __half2float(a[i]) + (float)(a[i] < b[i]);
  back[i * 2 + 1] = __bfloat162float(c[i]);
}
"""


def test_half_and_bfloat16_round_like_numpy():
    n = 4096
    rng = np.random.default_rng(0)
    f = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 20, n))).astype("float32")
    f[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65519.0, 65520.0, 2.0 ** -25 * 3]
    a = (rng.standard_normal(n) * 100).astype("float16")
    b = (rng.standard_normal(n) * 10).astype("float16")
    c = bf16_value(bf16_round(rng.standard_normal(n).astype("float32") * 1e3))
    d = bf16_value(bf16_round(rng.standard_normal(n).astype("float32")))
    h = np.zeros((n, 6), "float16")
    g = np.zeros((n, 5), "uint16")
    back = np.zeros((n, 2), "float32")
    c_bits, d_bits = bf16_round(c), bf16_round(d)
    program(HALF_SRC).launch("halves", [n // 128], [128], [f, a, b, h, c_bits, d_bits, g, back, n])

    def same_half(got, want):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok].view("uint16"), want[ok].view("uint16"))

    with np.errstate(all="ignore"):
        same_half(h[:, 0], f.astype("float16"))
        same_half(h[:, 1], a + b)
        same_half(h[:, 2], a * b)
        same_half(h[:, 3], a / b)
        same_half(h[:, 4], a - b)
        same_half(h[:, 5], np.fmax(a, b))
    np.testing.assert_array_equal(g[:, 0], bf16_round(f))
    np.testing.assert_array_equal(g[:, 1], bf16_round(c + d))
    np.testing.assert_array_equal(g[:, 2], bf16_round(c * d))
    np.testing.assert_array_equal(g[:, 3], bf16_round(c / d))
    assert (bf16_value(g[:, 4]) == 3).all()
    np.testing.assert_array_equal(back[:, 0], a.astype("float32") + (a < b))
    np.testing.assert_array_equal(back[:, 1], c)


def test_half_math_functions():
    src = r"""
#include <cuda_fp16.h>
extern "C" __global__ void hmath(const half* __restrict__ a, half* __restrict__ out) {
  int i = threadIdx.x;
  out[i * 4 + 0] = hexp(a[i]);
  out[i * 4 + 1] = hsqrt(a[i]);
  out[i * 4 + 2] = hfloor(a[i]);
  out[i * 4 + 3] = hrsqrt(a[i]);
}
"""
    a = np.linspace(0.1, 8, 64).astype("float16")
    out = np.zeros((64, 4), "float16")
    program(src).launch("hmath", [1], [64], [a, out])
    x = a.astype("float32")
    np.testing.assert_array_equal(out[:, 0], np.exp(x).astype("float16"))
    np.testing.assert_array_equal(out[:, 1], np.sqrt(x).astype("float16"))
    np.testing.assert_array_equal(out[:, 2], np.floor(x).astype("float16"))
    np.testing.assert_allclose(out[:, 3].astype("float32"), 1 / np.sqrt(x), rtol=1e-3)


def test_three_dimensional_blocks_and_grids():
    src = r"""
extern "C" __global__ void coords(int* __restrict__ out) {
  int block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int* o = out + (block * blockDim.x * blockDim.y * blockDim.z + thread) * 6;
  o[0] = blockIdx.x; o[1] = blockIdx.y; o[2] = blockIdx.z;
  o[3] = threadIdx.x; o[4] = threadIdx.y; o[5] = threadIdx.z;
}
"""
    grid, block = (2, 3, 2), (4, 2, 3)
    out = np.full((2, 3, 2, 3, 2, 4, 6), -1, "int32")  # bz, by, bx, tz, ty, tx
    program(src).launch("coords", list(grid), list(block), [out])
    bz, by, bx, tz, ty, tx = np.meshgrid(*(np.arange(k) for k in (2, 3, 2, 3, 2, 4)), indexing="ij")
    np.testing.assert_array_equal(out, np.stack([bx, by, bz, tx, ty, tz], axis=-1))


def test_barrier_under_a_branch_is_a_deadlock():
    src = r"""
extern "C" __global__ void stuck(float* __restrict__ x) {
  if (threadIdx.x < 16) {
    __syncthreads();
  }
  x[threadIdx.x] = 1.0f;
}
"""
    x = np.zeros(32, "float32")
    with pytest.raises(RuntimeError, match=r"the CUDA kernel stuck deadlocked in block \(0, 0, 0\): "
                       r"16 of 32 threads wait at __syncthreads while 16 exited"):
        program(src).launch("stuck", [1], [32], [x])


def test_shuffle_with_missing_lanes_is_a_deadlock():
    src = r"""
extern "C" __global__ void half_warp(float* __restrict__ x) {
  float v = x[threadIdx.x];
  if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffffu, v, 1);
  x[threadIdx.x] = v;
}
"""
    with pytest.raises(RuntimeError, match=r"half_warp deadlocked .* 16 exited and 16 wait at a "
                       r"warp-level sync"):
        program(src).launch("half_warp", [1], [32], [np.zeros(32, "float32")])


def test_launch_errors():
    src = 'extern "C" __global__ void k(float* __restrict__ x) { x[threadIdx.x] = 1.0f; }\n'
    p = program(src)
    x = np.zeros(4096, "float32")
    with pytest.raises(RuntimeError, match=r"cannot launch k: a block of 2048 x 1 x 1 = 2048 threads "
                       r"exceeds the limit of 1024 threads per block"):
        p.launch("k", [1], [2048], [x])
    with pytest.raises(RuntimeError, match="launch extent 0 of the grid is out of range"):
        p.launch("k", [0], [32], [x])
    with pytest.raises(RuntimeError, match="takes 1 arguments, 2 were given"):
        p.launch("k", [1], [32], [x, x])
    with pytest.raises(RuntimeError, match=r"the CUDA module has no kernel named 'missing' "
                       r"\(its kernels: k\)"):
        p.launch("missing", [1], [32], [x])
    big = 'extern "C" __global__ void big(float* x) { __shared__ float s[16384]; s[0] = 1; }\n'
    with pytest.raises(RuntimeError, match="declares 65536 bytes of static shared memory; the limit "
                       "is 49152"):
        program(big).launch("big", [1], [1], [x])
    assert p.kernels == ["k"]


def test_compile_errors_show_the_compiler_output():
    with pytest.raises(ts.error.BuildError, match=r"C\+\+ compilation failed(.|\n)*undefined_thing"):
        program('extern "C" __global__ void k(float* x) { undefined_thing(); }\n')
    with pytest.raises(ts.error.BuildError, match="found no kernel in the source"):
        program("int x;\n")


def test_dlpack_export_is_refused():
    a = ts.nd.array(np.arange(4, dtype="float32"), device=ts.cuda(0))
    with pytest.raises(RuntimeError, match=r"cannot export an array of cuda\(0\) through DLPack: under "
                       "the CUDA emulator"):
        a.__dlpack__()


def test_generated_bfloat16_and_half_math_kernels_run():
    lib = ts.build(kernels.bind_1d(kernels.math_fp16, "B", 64), target="cuda")
    a = np.linspace(0.5, 2, 256).astype("float16")
    out = ts.nd.empty((256,), "float16", ts.cuda(0))
    lib(ts.nd.array(a, device=ts.cuda(0)), out)
    x = a.astype("float32")
    np.testing.assert_allclose(out.numpy().astype("float32"), np.exp(x) + np.sqrt(x) + np.tanh(x),
                               rtol=5e-3)


def test_build_without_nvrtc_runs_and_has_no_ptx():
    code = (
        "import numpy as np, sys, tessera as ts\n"
        "sys.path.insert(0, 'tests/python/cuda')\n"
        "import cuda_kernels as kernels\n"
        "lib = ts.build(kernels.bind_1d(kernels.vector_add), target='cuda')\n"
        "a = np.arange(1024, dtype='float32')\n"
        "c = ts.nd.empty((1024,), 'float32', ts.cuda(0))\n"
        "lib(ts.nd.array(a, device=ts.cuda(0)), ts.nd.array(a, device=ts.cuda(0)), c)\n"
        "print('sum', float(c.numpy().sum()) == float(2 * a.sum()))\n"
        "try:\n"
        "    lib.imported_modules[0].get_source('ptx')\n"
        "except ValueError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, TESSERA_NVRTC_PATH="/nonexistent/libnvrtc.so", TESSERA_CUDA_EMULATOR="1",
               PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert "sum True" in out.stdout, out.stdout + out.stderr
    assert "this build has no PTX" in out.stdout, out.stdout + out.stderr


def run_python(code, **env_changes):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]))
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    return out.stdout + out.stderr


def test_enable_from_python_and_choose_the_arch():
    code = (
        "import numpy as np, tessera as ts\n"
        "from tessera import _core\n"
        "_core.cuda_emulator_enable()\n"
        "print('exist', ts.cuda(0).exist, _core.cuda_compute_capability(0))\n"
        "a = ts.nd.array(np.arange(3, dtype='float32'), device=ts.cuda(0))\n"
        "print('values', a.numpy().tolist())\n"
    )
    out = run_python(code, TESSERA_CUDA_EMULATOR=None, TESSERA_CUDA_EMULATOR_ARCH="sm_90")
    assert "exist True 90" in out and "values [0.0, 1.0, 2.0]" in out, out
    out = run_python("import tessera as ts\nfrom tessera import _core\n"
                     "print(_core.cuda_compute_capability(0))\n",
                     TESSERA_CUDA_EMULATOR="1", TESSERA_CUDA_EMULATOR_ARCH="volta")
    assert "TESSERA_CUDA_EMULATOR_ARCH=volta is not a GPU architecture; write it like sm_80" in out, out


def test_generated_bfloat16_kernel_matches_numpy_bit_for_bit():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tessera.script import tir as T

    @T.prim_func
    def f(A: T.Buffer((256,), "bfloat16"), B: T.Buffer((256,), "bfloat16"),
          C: T.Buffer((256,), "bfloat16")):
        for i in range(256):
            with T.block("C"):
                vi = T.axis.spatial(256, i)
                C[vi] = T.max(A[vi], B[vi]) + T.exp(A[vi]) * T.bfloat16(0.5) - T.min(A[vi], T.bfloat16(1))

    lib = ts.build(kernels.bind_1d(f, "C", 64), target="cuda")
    bf16 = ml_dtypes.bfloat16
    a = np.linspace(-2, 2, 256).astype(bf16)
    b = np.cos(np.linspace(-2, 2, 256)).astype(bf16)
    c = ts.nd.empty((256,), "bfloat16", ts.cuda(0))
    lib(ts.nd.array(a, device=ts.cuda(0)), ts.nd.array(b, device=ts.cuda(0)), c)

    def r(x):  # every bf16 operation rounds its float result
        return np.asarray(x, "float32").astype(bf16).astype("float32")

    x, y = a.astype("float32"), b.astype("float32")
    want = r(r(np.maximum(x, y) + r(r(np.exp(x)) * 0.5)) - np.minimum(x, 1))
    np.testing.assert_array_equal(c.numpy().view("uint16"), want.astype(bf16).view("uint16"))


def test_a_missing_barrier_gives_wrong_results_deterministically():
    # Threads run until they reach a barrier, so a schedule whose shared-memory tiles are read
    # before every thread has written them fails every time (on a GPU it would fail by chance).
    n = 64
    a, b = np.random.rand(n, n).astype("float32"), np.random.rand(n, n).astype("float32")
    for disabled, ok in (([], True), (["tir.ThreadSync"], False)):
        with ts.transform.PassContext(disabled_pass=disabled):
            lib = ts.build(kernels.schedule_tiled_matmul(n), target="cuda")
        assert ("__syncthreads()" in lib.imported_modules[0].get_source()) == ok
        c = ts.nd.empty((n, n), "float32", ts.cuda(0))
        lib(ts.nd.array(a, device=ts.cuda(0)), ts.nd.array(b, device=ts.cuda(0)), c)
        assert np.allclose(c.numpy(), a @ b, rtol=1e-4) == ok


@T.prim_func
def shifted_copy(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), s: T.int32):
    for i in range(1024):
        with T.block("B"):
            vi = T.axis.spatial(1024, i)
            B[vi] = A[vi + s]


@T.prim_func
def shifted_reverse(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), s: T.int32):
    # Through shared memory, so that the threads are fibers meeting at a barrier.
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        ptr = T.allocate([128], "float32", "shared")
        S = T.decl_buffer((128,), "float32", data=ptr, scope="shared")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            S[tx] = A[bx * 128 + tx]
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            B[bx * 128 + tx + s] = S[127 - tx]


def test_out_of_bounds_accesses_are_errors_not_crashes():
    sch = tir.Schedule(shifted_copy)
    (i,) = sch.get_loops(sch.get_block("B"))
    bx, tx = sch.split(i, [None, 128])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    lib = ts.build(sch.mod, target="cuda")
    a = ts.nd.array(np.arange(1024, dtype="float32"), device=ts.cuda(0))
    b = ts.nd.empty((1024,), "float32", ts.cuda(0))
    # One element past the end: the last thread of the last block.
    with pytest.raises(RuntimeError, match=r"the CUDA kernel shifted_copy_kernel made an invalid memory "
                       r"access \(at address 0x[0-9a-f]+\) in thread \(127, 0, 0\) of block \(7, 0, 0\)"):
        lib(a, b, 1)
    for s in (3000, -20000):  # far outside, either way
        with pytest.raises(RuntimeError, match="made an invalid memory access"):
            lib(a, b, s)
    lib(a, b, 0)  # the device still works
    np.testing.assert_array_equal(b.numpy(), np.arange(1024, dtype="float32"))


def test_out_of_bounds_store_between_barriers():
    lib = ts.build(shifted_reverse, target="cuda")
    assert "__syncthreads()" in lib.imported_modules[0].get_source()
    a = ts.nd.array(np.arange(256, dtype="float32"), device=ts.cuda(0))
    b = ts.nd.empty((256,), "float32", ts.cuda(0))
    with pytest.raises(RuntimeError, match=r"invalid memory access .* in thread \(127, 0, 0\) of block \(1, 0, 0\)"):
        lib(a, b, 1)
    lib(a, b, 0)
    np.testing.assert_array_equal(b.numpy(), np.concatenate([np.arange(127, -1, -1), np.arange(255, 127, -1)]))
