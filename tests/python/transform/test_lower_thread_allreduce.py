"""tir.LowerThreadAllreduce with TVM v0.23's rules: warp shuffles where the target allows them
(one round for groups up to a warp, two rounds through shared memory for several warps), a
shared-memory tree otherwise; the result buffer's allocation becomes the buffer holding the
result. (tessera's pipeline runs its own variant, tir.LowerBlockAllreduce; see
tests/python/cuda/test_cuda_allreduce.py.)"""

import pytest

from tessera.script import tir as T

from conftest import run_pass


def test_groups_of_eight_lanes_reduce_with_max(golden):
    # threadIdx.x (8, reduced) below threadIdx.y (4, the group): one warp round of three shuffles,
    # then lane 8 * y (the group's first lane) broadcasts.
    @T.prim_func
    def before(A: T.Buffer((32,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        ty = T.launch_thread("threadIdx.y", 4)
        res = T.allocate([1], "float32", "local")
        tx = T.launch_thread("threadIdx.x", 8)
        res_1 = T.Buffer((1,), data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: T.max(a, b), [T.float32(-1e30)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[ty * 8 + tx], T.bool(True), res_1[0], tx)
        B[ty] = res_1[0] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        ty = T.launch_thread("threadIdx.y", 4)
        acc = T.allocate([1], "float32", "local")
        tx = T.launch_thread("threadIdx.x", 8)
        acc_1 = T.Buffer((1,), data=acc, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: T.max(a, b), [T.float32(-1e30)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            lanes = T.decl_buffer([1], "uint32", scope="local")
            other = T.decl_buffer([1], "float32", scope="local")
            acc_1[0] = A[ty * 8 + tx]
            lanes[0] = T.tvm_warp_activemask()
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 4, 32, 32)
            acc_1[0] = T.max(acc_1[0], other[0])
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 2, 32, 32)
            acc_1[0] = T.max(acc_1[0], other[0])
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 1, 32, 32)
            acc_1[0] = T.max(acc_1[0], other[0])
            acc_1[0] = T.tvm_warp_shuffle(lanes[0], acc_1[0], 8 * ty, 32, 32)
        B[ty] = acc_1[0] * T.float32(2)

    golden("LowerThreadAllreduce", before, expected)


def test_partial_group_guards_the_first_shuffle_and_selects_the_identity(golden):
    # One group of 24 threads (not a divisor of the warp): the shuffle by 16 reaches past the
    # group, so its fold is guarded; the condition picks the identity.
    @T.prim_func
    def before(A: T.Buffer((24,), "int32"), B: T.Buffer((1,), "int32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 24)
        res = T.allocate([1], "int32", "local")
        res_1 = T.Buffer((1,), "int32", data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [0]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[tx], tx < 20, res_1[0], tx)
        B[0] = res_1[0]

    @T.prim_func
    def expected(A: T.Buffer((24,), "int32"), B: T.Buffer((1,), "int32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 24)
        acc = T.allocate([1], "int32", "local")
        acc_1 = T.Buffer((1,), "int32", data=acc, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [0]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            lanes = T.decl_buffer([1], "uint32", scope="local")
            other = T.decl_buffer([1], "int32", scope="local")
            acc_1[0] = T.Select(tx < 20, A[tx], 0)
            lanes[0] = T.tvm_warp_activemask()
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 16, 32, 32)
            if tx + 16 < 24:
                acc_1[0] = acc_1[0] + other[0]
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 8, 32, 32)
            acc_1[0] = acc_1[0] + other[0]
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 4, 32, 32)
            acc_1[0] = acc_1[0] + other[0]
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 2, 32, 32)
            acc_1[0] = acc_1[0] + other[0]
            other[0] = T.tvm_warp_shuffle_down(lanes[0], acc_1[0], 1, 32, 32)
            acc_1[0] = acc_1[0] + other[0]
            acc_1[0] = T.tvm_warp_shuffle(lanes[0], acc_1[0], 0, 32, 32)
        B[0] = acc_1[0]

    golden("LowerThreadAllreduce", before, expected)


def test_two_warps_stage_through_shared_memory(golden):
    # 64 threads: each warp reduces, lane 0 of each stages its value, the first two lanes fold
    # the two warps' values, thread 0 publishes the result in shared memory.
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 64)
        res = T.allocate([1], "float32", "local")
        res_1 = T.Buffer((1,), data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), res_1[0], tx)
        B[0] = res_1[0]

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 64)
        out = T.allocate([1], "float32", "shared")
        T.attr(out, "volatile_scope", 1)
        out_1 = T.Buffer((1,), data=out, scope="shared")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            acc2 = T.decl_buffer([1], "float32", scope="local")
            lanes2 = T.decl_buffer([1], "uint32", scope="local")
            other2 = T.decl_buffer([1], "float32", scope="local")
            acc1 = T.decl_buffer([1], "float32", scope="local")
            lanes1 = T.decl_buffer([1], "uint32", scope="local")
            other1 = T.decl_buffer([1], "float32", scope="local")
            staged = T.decl_buffer([2], "float32", scope="shared")
            acc1[0] = A[tx]
            lanes1[0] = T.tvm_warp_activemask()
            other1[0] = T.tvm_warp_shuffle_down(lanes1[0], acc1[0], 16, 32, 32)
            acc1[0] = acc1[0] + other1[0]
            other1[0] = T.tvm_warp_shuffle_down(lanes1[0], acc1[0], 8, 32, 32)
            acc1[0] = acc1[0] + other1[0]
            other1[0] = T.tvm_warp_shuffle_down(lanes1[0], acc1[0], 4, 32, 32)
            acc1[0] = acc1[0] + other1[0]
            other1[0] = T.tvm_warp_shuffle_down(lanes1[0], acc1[0], 2, 32, 32)
            acc1[0] = acc1[0] + other1[0]
            other1[0] = T.tvm_warp_shuffle_down(lanes1[0], acc1[0], 1, 32, 32)
            acc1[0] = acc1[0] + other1[0]
            if tx % 32 == 0:
                staged[tx // 32] = acc1[0]
            T.tvm_storage_sync("shared")
            if tx < 2:
                acc2[0] = staged[tx]
            lanes2[0] = T.tvm_warp_activemask()
            other2[0] = T.tvm_warp_shuffle_down(lanes2[0], acc2[0], 1, 32, 32)
            acc2[0] = acc2[0] + other2[0]
            if tx == 0:
                out_1[0] = acc2[0]
            T.tvm_storage_sync("shared")
        B[0] = out_1[0]

    golden("LowerThreadAllreduce", before, expected)


def test_reduction_over_the_slower_dimension_uses_a_shared_tree(golden):
    # Reduced threadIdx.y (4) above a spatial threadIdx.x (2): a group's threads are not
    # consecutive, so the values go through one shared slot per thread and a tree whose every
    # step is guarded and followed by a barrier; the result allocation becomes the tree buffer.
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((2,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        ty = T.launch_thread("threadIdx.y", 4)
        tx = T.launch_thread("threadIdx.x", 2)
        res = T.allocate([1], "float32", "local")
        res_1 = T.Buffer((1,), data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[ty * 2 + tx], T.bool(True), res_1[0], ty)
        B[tx] = res_1[0]

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((2,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        ty = T.launch_thread("threadIdx.y", 4)
        tx = T.launch_thread("threadIdx.x", 2)
        tree = T.allocate([8], "float32", "shared")
        T.attr(tree, "volatile_scope", 1)
        tree_1 = T.Buffer((8,), data=tree, scope="shared")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_storage_sync("shared")
            tree_1[tx * 4 + ty] = A[ty * 2 + tx]
            T.tvm_storage_sync("shared")
            if ty < 2:
                tree_1[tx * 4 + ty] = tree_1[tx * 4 + ty] + tree_1[tx * 4 + ty + 2]
            T.tvm_storage_sync("shared")
            if ty < 1:
                tree_1[tx * 4 + ty] = tree_1[tx * 4 + ty] + tree_1[tx * 4 + ty + 1]
            T.tvm_storage_sync("shared")
        B[tx] = tree_1[tx * 4]

    golden("LowerThreadAllreduce", before, expected)


def test_one_byte_values_take_the_tree_with_warp_steps(golden):
    # int8 cannot be shuffled: the tree over 8 threads folds within the first warp, each step's
    # value bound first and stored between two warp barriers over the lanes in the branch.
    @T.prim_func
    def before(A: T.Buffer((8,), "int8"), B: T.Buffer((1,), "int8")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 8)
        res = T.allocate([1], "int8", "local")
        res_1 = T.Buffer((1,), "int8", data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.int8(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), res_1[0], tx)
        B[0] = res_1[0]

    @T.prim_func
    def expected(A: T.Buffer((8,), "int8"), B: T.Buffer((1,), "int8")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 8)
        tree = T.allocate([8], "int8", "shared")
        T.attr(tree, "volatile_scope", 1)
        tree_1 = T.Buffer((8,), "int8", data=tree, scope="shared")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.int8(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_storage_sync("shared")
            tree_1[tx] = A[tx]
            T.tvm_storage_sync("shared")
            if tx < 4:
                with T.LetStmt(tree_1[tx] + tree_1[tx + 4]) as s4:
                    T.tvm_storage_sync("warp", T.uint32(15))
                    tree_1[tx] = s4
                    T.tvm_storage_sync("warp", T.uint32(15))
                with T.LetStmt(tree_1[tx] + tree_1[tx + 2]) as s2:
                    T.tvm_storage_sync("warp", T.uint32(15))
                    tree_1[tx] = s2
                    T.tvm_storage_sync("warp", T.uint32(15))
                s1: T.int8 = tree_1[tx] + tree_1[tx + 1]
                T.tvm_storage_sync("warp", T.uint32(15))
                tree_1[tx] = s1
                T.tvm_storage_sync("warp", T.uint32(15))
            T.tvm_storage_sync("shared")
        B[0] = tree_1[0]

    golden("LowerThreadAllreduce", before, expected)


def test_a_target_without_warps_takes_the_tree(golden):
    # The "c" target has no warp shuffles: even one group of 4 threads goes through shared memory.
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")):
        T.func_attr({"target": T.target("c")})
        tx = T.launch_thread("threadIdx.x", 4)
        res = T.allocate([1], "float32", "local")
        res_1 = T.Buffer((1,), data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), res_1[0], tx)
        B[0] = res_1[0]

    text = run_pass("LowerThreadAllreduce", before).script()
    assert "tvm_warp_shuffle" not in text
    assert 'T.allocate([4], "float32", "shared")' in text
    assert "B[0] = red_buf0_1[0]" in text  # the read of the result goes to the tree's slot 0
    assert "volatile_scope" in text


def test_two_values_reduce_together_argmax():
    # A tuple reducer: both values shuffle at each step and fold with one combiner.
    @T.prim_func
    def before(V: T.Buffer((32,), "float32"), B: T.Buffer((1,), "int32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 32)
        i = T.allocate([1], "int32", "local")
        v = T.allocate([1], "float32", "local")
        i_1 = T.Buffer((1,), "int32", data=i, scope="local")
        v_1 = T.Buffer((1,), data=v, scope="local")
        with T.attr(T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0),
                                                           T.Select(x1 >= y1, x1, y1)),
                                   [-1, T.float32(-1e30)]),
                    "reduce_scope", T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(2), tx, V[tx], T.bool(True), i_1[0], v_1[0], tx)
        B[0] = i_1[0]

    text = run_pass("LowerThreadAllreduce", before).script()
    assert text.count("T.tvm_warp_shuffle_down(") == 10
    assert text.count("T.tvm_warp_shuffle(") == 2


def test_missing_target_is_an_error():
    @T.prim_func
    def func(A: T.Buffer((32,), "float32")):
        tx = T.launch_thread("threadIdx.x", 32)
        res = T.allocate([1], "float32", "local")
        res_1 = T.Buffer((1,), data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), res_1[0], tx)

    with pytest.raises(ValueError, match="needs the function's \"target\" attribute"):
        run_pass("LowerThreadAllreduce", func)


def test_call_without_its_reducer_is_an_error():
    @T.prim_func
    def func(A: T.Buffer((32,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 32)
        res = T.allocate([1], "float32", "local")
        res_1 = T.Buffer((1,), data=res, scope="local")
        T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), res_1[0], tx)

    with pytest.raises(ValueError, match="must sit under attr"):
        run_pass("LowerThreadAllreduce", func)


def test_thread_not_launched_around_the_call_is_an_error():
    @T.prim_func
    def func(A: T.Buffer((32,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 32)
        for k in range(2):
            res = T.allocate([1], "float32", "local")
            res_1 = T.Buffer((1,), data=res, scope="local")
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                        T.reinterpret("handle", T.uint64(0))):
                T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), res_1[0], k)

    with pytest.raises(ValueError, match="is not launched"):
        run_pass("LowerThreadAllreduce", func)


def test_value_count_must_match_the_reducer():
    @T.prim_func
    def func(A: T.Buffer((32,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 32)
        res = T.allocate([1], "float32", "local")
        res_1 = T.Buffer((1,), data=res, scope="local")
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            T.tvm_thread_allreduce(T.uint32(2), A[tx], T.bool(True), res_1[0], tx)

    with pytest.raises(ValueError, match="value count"):
        run_pass("LowerThreadAllreduce", func)
