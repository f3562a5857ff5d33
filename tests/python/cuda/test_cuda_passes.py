"""The GPU passes, seen through ts.lower(..., target="cuda") (no GPU or NVRTC needed)."""

import pytest

import tessera as ts
from tessera.tir import transform as tt

import cuda_kernels as kernels


def test_unify_thread_binding_gives_each_tag_one_variable():
    mod = ts.lower(kernels.schedule_tiled_matmul(64), target="cuda", stage="normalize")
    text = mod.script()
    # The copies and the compute loops, bound to the same tags, share two variables.
    assert text.count('for threadIdx_y in T.thread_binding(16, thread="threadIdx.y")') == 3
    assert text.count('for threadIdx_x in T.thread_binding(16, thread="threadIdx.x")') == 3


def test_shared_allocations_are_placed_inside_the_block_loops():
    mod = ts.lower(kernels.schedule_tiled_matmul(64), target="cuda", stage="normalize")
    text = mod.script()
    assert 'T.alloc_buffer((16, 16), scope="shared")' in text


def test_thread_sync_orders_the_tree_reduction():
    mod = ts.lower(kernels.block_sum, target="cuda", stage="split")
    kernel = mod.lookup("block_sum_kernel").script()
    assert kernel.count('T.tvm_storage_sync("shared")') == 3
    host = mod.lookup("block_sum").script()
    assert "tvm_storage_sync" not in host


def test_split_host_device_outlines_one_kernel_per_bound_loop_nest():
    mod = ts.lower(kernels.schedule_softmax(), target="cuda", stage="split")
    names = sorted(gv.name_hint for gv, _ in mod.functions)
    assert names == ["main", "softmax_kernel"]
    kernel = mod.lookup("softmax_kernel")
    assert kernel.attrs["calling_conv"].value == "device_kernel"
    assert "tessera.launch_kernel" in mod.lookup("main").script()


def test_verify_memory_accepts_bound_code_and_rejects_host_access():
    ok = ts.lower(kernels.bind_1d(kernels.vector_add), target="cuda", stage="cleanup")
    tt.VerifyMemory()(ok)
    bad = ts.lower(kernels.vector_add, target="cuda", stage="cleanup")
    with pytest.raises(Exception, match="Did you forget to bind"):
        tt.VerifyMemory()(bad)


def test_host_target_is_unchanged_by_the_gpu_passes():
    lib = ts.build(kernels.vector_add, target="c")
    assert "__syncthreads" not in lib.get_source() and lib.imported_modules == []
