"""Vectorized loops on CUDA: aligned contiguous accesses are one vector memory instruction, the
others go lane by lane; arithmetic is printed per lane. Compile-only tests need NVRTC; the
runtime tests need a GPU (or the emulator)."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T

import vector_kernels as vk
from cuda_support import requires_gpu, requires_nvrtc


def kernel_source(mod):
    lib = ts.build(mod, target="cuda")
    src = lib.imported_modules[0].get_source()
    return lib, src[src.index('extern "C" __global__'):]


@requires_nvrtc
def test_float4_loads_and_store():
    lib, src = kernel_source(vk.schedule_vectorized(vk.axpy_func(256, "float32"), "C", 4))
    assert "float4 A_vec = *(const float4*)(A + ((blockIdx_x * 128) + (threadIdx_x * 4)));" in src
    assert "float4 B_vec = *(const float4*)(B + ((blockIdx_x * 128) + (threadIdx_x * 4)));" in src
    assert re.search(r"\*\(float4\*\)\(C \+ \(\(blockIdx_x \* 128\) \+ \(threadIdx_x \* 4\)\)\) = "
                     r"make_float4\(", src)
    # The arithmetic is per lane, on the lanes of the loaded words.
    assert "A_vec.w" in src and "B_vec.w" in src
    ptx = lib.imported_modules[0].get_source("ptx")
    assert re.search(r"ld\.global(\.nc)?\.v4\.f32", ptx) and "st.global.v4.f32" in ptx


@requires_nvrtc
def test_float2_store_with_strided_loads_per_lane():
    # A[2 * i] is not contiguous: its lanes are loaded one by one; B and C are float2 words.
    _, src = kernel_source(vk.schedule_vectorized(vk.axpy_func(256, "float32", stride=2), "C", 2))
    assert "*(const float2*)(B + " in src and "*(float2*)(C + " in src
    assert "A_vec" not in src
    assert "A[(blockIdx_x * 128) + (threadIdx_x * 4)]" in src
    assert "A[((blockIdx_x * 128) + (threadIdx_x * 4)) + 2]" in src


@requires_nvrtc
def test_unaligned_offset_falls_back_to_lanes():
    # A[i + 1]: the offset is not a multiple of 4, so A is read lane by lane.
    _, src = kernel_source(vk.schedule_vectorized(vk.axpy_func(256, "float32", shift=1), "C", 4))
    assert "float4 A_vec" not in src
    for k in range(1, 5):
        assert f"A[((blockIdx_x * 128) + (threadIdx_x * 4)) + {k}]" in src
    assert "*(const float4*)(B + " in src and "*(float4*)(C + " in src


@requires_nvrtc
def test_buffer_with_small_alignment_falls_back_to_lanes():
    # A buffer that only promises 4-byte alignment gets no 16-byte words.
    @T.prim_func
    def copy(A: T.Buffer((256,), "float32", align=4), C: T.Buffer((256,), "float32")):
        for i in range(256):
            with T.block("C"):
                vi = T.axis.spatial(256, i)
                C[vi] = A[vi]

    _, src = kernel_source(vk.schedule_vectorized(copy, "C", 4))
    assert "A_vec" not in src and "*(float4*)(C + " in src


@requires_nvrtc
@pytest.mark.parametrize("lanes, word", [(2, "unsigned int"), (4, "uint2"), (8, "uint4")])
def test_half_words(lanes, word):
    _, src = kernel_source(vk.schedule_vectorized(vk.axpy_func(512, "float16"), "C", lanes))
    assert f"{word} A_vec = *(const {word}*)(A + " in src
    assert f"*({word}*)(C + " in src
    assert "__tsr_half_lo(" in src and "__tsr_pack_half(" in src


@requires_nvrtc
def test_int4_and_broadcast_scalar():
    _, src = kernel_source(vk.schedule_vectorized(vk.scale_func(256, "int32"), "C", 4))
    assert "int4 A_vec = *(const int4*)(A + " in src
    # s[0] is broadcast: every lane multiplies by it; the lane index i % 4 becomes 0..3.
    assert ("make_int4((v * s[0]) - 0, (v_1 * s[0]) - 1, (v_2 * s[0]) - 2, (v_3 * s[0]) - 3)"
            in src)


@requires_nvrtc
def test_bfloat16_words():
    _, src = kernel_source(vk.schedule_vectorized(vk.scale_func(256, "bfloat16"), "C", 4))
    assert "uint2 A_vec = *(const uint2*)(A + " in src
    assert "__tsr_bf16_hi(A_vec.y)" in src and "__tsr_pack_bf16(" in src


def dev_array(x):
    return ts.nd.array(x, device=ts.cuda(0))


@requires_gpu
@pytest.mark.parametrize("dtype, lanes, shift, stride", [
    ("float32", 4, 0, 1), ("float32", 2, 0, 1), ("float32", 4, 1, 1), ("float32", 2, 0, 2),
    ("float16", 8, 0, 1), ("float16", 4, 0, 1), ("float16", 2, 3, 1), ("float16", 4, 0, 2),
])
def test_axpy_runs(dtype, lanes, shift, stride):
    n = 32 * lanes * 2
    lib = ts.build(vk.schedule_vectorized(vk.axpy_func(n, dtype, shift, stride), "C", lanes),
                   target="cuda")
    a = np.random.rand(stride * n + shift).astype(dtype)
    b = np.random.rand(n).astype(dtype)
    c = ts.nd.empty((n,), dtype, ts.cuda(0))
    lib(dev_array(a), dev_array(b), c)
    expect = a[shift:shift + stride * n:stride] * np.asarray(2, dtype) + b
    np.testing.assert_allclose(c.numpy(), expect, rtol=1e-3 if dtype == "float16" else 1e-6)


@requires_gpu
@pytest.mark.parametrize("dtype, lanes", [("int32", 4), ("float32", 2), ("float16", 8)])
def test_scale_runs(dtype, lanes):
    n = 32 * lanes
    lib = ts.build(vk.schedule_vectorized(vk.scale_func(n, dtype), "C", lanes), target="cuda")
    a = (np.random.rand(n) * 10).astype(dtype)
    s = np.asarray([3], dtype)
    c = ts.nd.empty((n,), dtype, ts.cuda(0))
    lib(dev_array(a), dev_array(s), c)
    expect = a * s[0] - (np.arange(n) % 4).astype(dtype)
    if dtype != "float16":
        np.testing.assert_allclose(c.numpy(), expect, rtol=1e-3)
        return
    # A GPU may contract a * s - k into one fused multiply-add (one rounding) where numpy rounds
    # the product first; near cancellation the two differ by up to half an ulp of the product.
    # Each is within one float16 ulp of the larger of |a * s| and |result| of the exact value.
    exact = a.astype("float64") * float(s[0]) - (np.arange(n) % 4)
    scale = np.maximum(np.abs(a.astype("float64") * float(s[0])), np.abs(exact)).astype("float16")
    assert np.all(np.abs(c.numpy().astype("float64") - exact) <= np.spacing(scale).astype("float64"))


@T.prim_func
def let_bound(A: T.Buffer((512,), "float32"), B: T.Buffer((256,), "float32"),
              C: T.Buffer((256,), "float32")):
    # Lets inside the vectorized body become vector lets: one variable per lane (the float
    # let t; tir.Simplify inlines the integer let j).
    for i in range(256):
        with T.block("C"):
            vi = T.axis.spatial(256, i)
            t = A[vi * 2] * T.float32(2)
            j = vi + 1
            C[vi] = t + t * B[vi] + T.cast(j, "float32")


@requires_nvrtc
def test_vector_lets_are_declared_per_lane():
    _, src = kernel_source(vk.schedule_vectorized(let_bound, "C", 4))
    assert "float v_4 = v * 2.0f;" in src and "float v_7 = v_3 * 2.0f;" in src
    # The integer let j is inlined by tir.Simplify (as TVM's is): each lane's value in place.
    assert "*(const float4*)(B + " in src and "*(float4*)(C + " in src
    assert "(v_7 + (v_7 * v_11)) + ((float)(((blockIdx_x * 128) + (threadIdx_x * 4)) + 4)))" in src


@requires_gpu
def test_vector_lets_run():
    lib = ts.build(vk.schedule_vectorized(let_bound, "C", 4), target="cuda")
    a = np.random.rand(512).astype("float32")
    b = np.random.rand(256).astype("float32")
    c = ts.nd.empty((256,), "float32", ts.cuda(0))
    lib(dev_array(a), dev_array(b), c)
    t = a[::2] * 2
    np.testing.assert_allclose(c.numpy(), t + t * b + np.arange(1, 257), rtol=1e-6)
