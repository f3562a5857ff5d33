"""reorder_block_iter_var: permute a block's iterators and their bindings."""

import pytest

from tessera.script import tir as T


@T.prim_func
def matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
           C: T.Buffer((128, 128), "float32")):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def test_reorder(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 C: T.Buffer((128, 128), "float32")):
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vk, vj, vi = T.axis.remap("RSS", [k, j, i])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    def apply(sch):
        block = sch.get_block("C")
        sch.reorder_block_iter_var(block, [2, 1, 0])
        assert sch.trace.as_python()[-1] == "sch.reorder_block_iter_var(block=b0, new_order=[2, 1, 0])"
        # The handle still names the block.
        assert [iv.var.name for iv in sch.get(block).iter_vars] == ["vk", "vj", "vi"]

    golden(matmul, expected, apply)


@pytest.mark.parametrize("order", [[2, 1], [-1, 3, 2], [0, 0, 2]])
def test_invalid_orders_fail(schedule_error, order):
    schedule_error(matmul, lambda sch: sch.reorder_block_iter_var(sch.get_block("C"), order),
                   "reorder_block_iter_var",
                   f"{order} is not a permutation of the 3 iterator indices of tir.Block#0")
