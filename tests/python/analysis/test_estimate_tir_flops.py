"""tir.analysis.estimate_tir_flops: closed-form operation counts."""

import pytest

from tessera import tir
from tessera.compat.meta_schedule.testing.te_workload import create_te_workload
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.ir import IRModule
from tessera.script import tir as T


@T.prim_func
def _axpb(A: T.Buffer((8, 6), "float32"), B: T.Buffer((8, 6), "float32")):
    for i, j in T.grid(8, 6):
        with T.block("axpb"):
            vi, vj = T.axis.remap("SS", [i, j])
            # index arithmetic and the comparison are free; * and + count
            B[vi, vj] = T.Select(vi < 4, A[vi * 2 % 8, vj] * T.float32(2) + T.float32(1), T.float32(0))


def test_loops_multiply_and_branches_take_their_larger_side():
    assert tir.analysis.estimate_tir_flops(IRModule({"main": _axpb})) == 8 * 6 * 2
    assert tir.analysis.estimate_tir_flops(_axpb.body) == 8 * 6 * 2
    assert tir.analysis.estimate_tir_flops(_axpb) == 8 * 6 * 2


def test_triangular_loop_counts_its_longest_trip_and_the_attribute_overrides():
    @T.prim_func
    def tri(A: T.Buffer((16,), "int32")):
        for i in range(4):
            for j in range(i + 2):  # at most 5 iterations
                A[j] = A[j] * 3 - 1

    assert tir.analysis.estimate_tir_flops(IRModule({"main": tri})) == 4 * 5 * 2
    given = IRModule({"main": tri.with_attr("estimated_flops", 7)})
    assert tir.analysis.estimate_tir_flops(given) == 7
    with pytest.raises(TesseraTypeError, match="statement or an IRModule"):
        tir.analysis.estimate_tir_flops(3)


def test_te_workloads_by_tvm_name():
    # GMM 0: a 1 x 128 x 128 x 128 batch matmul, one multiply and one add per step
    assert tir.analysis.estimate_tir_flops(create_te_workload("GMM", 0)) == 2 * 128**3
    # NRM 0: the squared norm of one 256 x 256 matrix (a multiply and an add per element; sqrt
    # is a call of its argument)
    assert tir.analysis.estimate_tir_flops(create_te_workload("NRM", 0)) == 2 * 256 * 256
    with pytest.raises(TesseraValueError, match="'SFM' is not available"):
        create_te_workload("SFM", 0)
    with pytest.raises(TesseraValueError, match="shapes 0..3, not 5"):
        create_te_workload("GMM", 5)


@pytest.mark.parametrize(
    "name, flops",
    [
        # one multiply and one add per output element and reduction step: 2 * outputs * steps
        ("C1D", 2 * (1 * 128 * 128) * (3 * 64)),  # L 256 -> 128 (stride 2), CO 128, k 3, CI 64
        ("C3D", 2 * (1 * 8 * 112 * 112 * 64) * (7 * 7 * 7 * 3)),  # stride 2 halves D, H, W
        ("DEP", 2 * (1 * 112 * 112 * 32) * (3 * 3)),  # one channel per output: 3 x 3 steps
        ("CAP", 2 * (1 * 8 * 8 * 4 * 4 * 32) * (3 * 3 * 4 * 32)),  # 4 x 4 capsules, cap_k 4
        ("T2D", 2 * (1 * 8 * 8 * 256) * (4 * 4 * 512)),  # 4x4 -> 8x8 (stride 2), every step counts
        # the convolution (112 x 112 x 64 outputs, 7 x 7 x 3 steps), then bias, scale, offset
        # and the ReLU's max: one operation each per output element
        ("CBR", 2 * (112 * 112 * 64) * (7 * 7 * 3) + 4 * (112 * 112 * 64)),
    ],
)
def test_convolution_workloads_count_two_operations_per_step(name, flops):
    assert tir.analysis.estimate_tir_flops(IRModule({"main": create_te_workload(name, 0)})) == flops


def test_depthwise_workload_refuses_a_channel_multiplier():
    from tessera.compat.meta_schedule.testing.te_workload import depthwise_conv2d_nhwc

    with pytest.raises(TesseraValueError, match="channel factor of 1"):
        depthwise_conv2d_nhwc(1, 8, 8, 4, 3, factor=2)
