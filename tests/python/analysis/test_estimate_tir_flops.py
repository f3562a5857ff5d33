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
    with pytest.raises(TesseraValueError, match="'C1D' is not available"):
        create_te_workload("C1D", 0)
    with pytest.raises(TesseraValueError, match="shapes 0..2, not 5"):
        create_te_workload("GMM", 5)
