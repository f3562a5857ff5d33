"""The CUDA ldmatrix/mma and AMD MFMA tensor intrinsics (registered under TVM's names) and the
GEMM schedules of tessera.testing.tir that tensorize with them: the fragment layouts are
bijections, the intrinsics tensorize a scheduled matmul, `a, b = T.meta_var((x, y))` unpacks."""

import itertools

import pytest

from tessera import te, tir
from tessera.error import DiagnosticError
from tessera.tir.schedule.testing import assert_structural_equal_ignore_global_symbol as assert_structural_equal
from tessera.script import tir as T
from tessera.testing.tir import mfma_schedule, mma_schedule
from tessera.tir.schedule.tensor_intrin import TensorIntrin
from tessera.tir.tensor_intrin import cuda, rocm


def _as_int(e):
    return e if isinstance(e, int) else int(e.value)


@pytest.mark.parametrize("layout,rows,cols,lanes,slots", [
    (cuda.shared_16x16_to_ldmatrix_32x8_layout, 16, 16, 32, 8),
    (cuda.shared_16x32_to_ldmatrix_32x16_layout, 16, 32, 32, 16),
    (cuda.shared_32x16_to_ldmatrix_32x16_layout, 32, 16, 32, 16),
    (rocm.shared_16x16_to_local_64x4_layout_A, 16, 16, 64, 4),
    (rocm.shared_16x16_to_local_64x4_layout_B, 16, 16, 64, 4),
    (rocm.shared_16x4_to_local_64x1_layout_A, 16, 4, 64, 1),
    (rocm.shared_4x16_to_local_64x1_layout_B, 4, 16, 64, 1),
])
def test_fragment_layouts_are_bijections(layout, rows, cols, lanes, slots):
    seen = {tuple(_as_int(x) for x in layout(i, j)) for i, j in itertools.product(range(rows), range(cols))}
    assert seen == set(itertools.product(range(lanes), range(slots)))


@pytest.mark.parametrize("forward,inverse,rows,cols", [
    (cuda.shared_16x16_to_ldmatrix_32x8_layout, cuda.ldmatrix_32x8_to_shared_16x16_layout, 16, 16),
    (rocm.shared_16x16_to_local_64x4_layout_A, rocm.thread_id_shared_access_64x4_to_16x16_layout_A, 16, 16),
    (rocm.shared_16x16_to_local_64x4_layout_C, rocm.thread_id_shared_access_64x4_to_16x16_layout_C, 16, 16),
    (rocm.shared_16x4_to_local_64x1_layout_A, rocm.thread_id_shared_access_64x1_to_16x4_layout_A, 16, 4),
    (rocm.shared_4x16_to_local_64x1_layout_B, rocm.thread_id_shared_access_64x1_to_4x16_layout_B, 4, 16),
])
def test_inverse_layouts(forward, inverse, rows, cols):
    for i, j in itertools.product(range(rows), range(cols)):
        t, s = (_as_int(x) for x in forward(i, j))
        assert tuple(_as_int(x) for x in inverse(t, s)) == (i, j)


def test_intrinsics_registered_under_tvm_names():
    for name in (cuda.LDMATRIX_f16_A_INTRIN, cuda.LDMATRIX_i8_B_TRANS_INTRIN, cuda.LDMATRIX_e4m3_A_INTRIN,
                 cuda.MMA_f16f16f32_INTRIN, cuda.MMA_e5m2e5m2f32_TRANS_B_INTRIN, cuda.MMA_fill_16x16_i32_INTRIN,
                 cuda.MMA_store_16x16_f16_global_INTRIN, rocm.ROCM_MFMA_f32f32f32_INTRIN,
                 rocm.ROCM_MFMA_LOAD_16x4_B_SHARED_f32_INTRIN, rocm.ROCM_MFMA_STORE_16x16_s32_INTRIN):
        intrin = TensorIntrin.get(name)
        assert intrin.desc is not None and intrin.impl is not None
    assert cuda.MMA_f16f16f32_INTRIN == "mma_f16f16f32"
    assert rocm.ROCM_MFMA_fill_16x16_f32_INTRIN == "ROCM_mfma_fill_16x16_f32"


def test_bad_intrinsic_parameters():
    with pytest.raises(ValueError, match="k_dim must be 16 or 32"):
        cuda.get_mma_intrin(8)
    with pytest.raises(ValueError, match="cannot be transposed"):
        cuda.get_ldmatrix_intrin(32, "int8", "A", True)
    with pytest.raises(ValueError, match="k_dim must be 4 or 16"):
        rocm.get_mfma_intrin(8)


def _matmul(n, in_dtype, out_dtype, b_transposed):
    a = te.placeholder((n, n), name="A", dtype=in_dtype)
    b = te.placeholder((n, n), name="B", dtype=in_dtype)
    k = te.reduce_axis((0, n), name="k")

    def cast(v):
        return tir.Cast(out_dtype, v) if in_dtype != out_dtype else v

    c = te.compute((n, n), lambda i, j: te.sum(cast(a[i, k]) * cast(b[j, k] if b_transposed else b[k, j]), axis=[k]),
                   name="C")
    return te.create_prim_func([a, b, c])


def _tiled(layout, rows=16, cols=16):
    return lambda i, j: (i // rows, j // cols, *layout(i % rows, j % cols))


def _calls(func):
    names = []

    def visit(node):
        if isinstance(node, tir.Call):
            names.append(str(node.op.name))

    tir.stmt_functor.post_order_visit(func.body, visit)
    return names


def test_mma_schedule_f16():
    layout = _tiled(cuda.shared_16x16_to_ldmatrix_32x8_layout)
    sch = mma_schedule(_matmul(64, "float16", "float32", False), 16, "float16", False, [1, 2, 1, 2, 1],
                       [1, 1, 2, 2, 1], [2, 2, 1], layout, layout, layout, cuda.LDMATRIX_f16_A_INTRIN,
                       cuda.LDMATRIX_f16_B_INTRIN, cuda.MMA_f16f16f32_INTRIN, cuda.MMA_fill_16x16_f32_INTRIN,
                       cuda.MMA_store_16x16_f32_global_INTRIN)
    calls = _calls(sch.mod["main"])
    assert calls.count("tir.ptx_ldmatrix") == 2
    assert calls.count("tir.ptx_mma") == 2
    assert calls.count("tir.mma_fill") == 1 and calls.count("tir.mma_store") == 1


def test_mma_schedule_int8_transposed_b():
    layout_ab = _tiled(cuda.shared_16x32_to_ldmatrix_32x16_layout, 16, 32)
    layout_c = _tiled(cuda.shared_16x16_to_ldmatrix_32x8_layout)
    sch = mma_schedule(_matmul(64, "int8", "int32", True), 32, "int8", True, [1, 2, 1, 2, 1], [1, 1, 2, 2, 1],
                       [1, 2, 1], layout_ab, layout_ab, layout_c, cuda.LDMATRIX_i8_A_INTRIN,
                       cuda.LDMATRIX_i8_B_TRANS_INTRIN, cuda.MMA_i8i8i32_TRANS_B_INTRIN,
                       cuda.MMA_fill_16x16_i32_INTRIN, cuda.MMA_store_16x16_i32_global_INTRIN)
    assert _calls(sch.mod["main"]).count("tir.ptx_mma") == 2


def test_mfma_schedule_f32():
    sch = mfma_schedule(_matmul(64, "float32", "float32", False), 4, "float32", False, [1, 2, 1, 2, 1],
                        [1, 1, 2, 2, 1], [8, 2, 1], _tiled(rocm.shared_16x4_to_local_64x1_layout_A, 16, 4),
                        _tiled(rocm.shared_4x16_to_local_64x1_layout_B, 4, 16),
                        _tiled(rocm.shared_16x16_to_local_64x4_layout_C), rocm.ROCM_MFMA_LOAD_16x4_A_SHARED_f32_INTRIN,
                        rocm.ROCM_MFMA_LOAD_16x4_B_SHARED_f32_INTRIN, rocm.ROCM_MFMA_f32f32f32_INTRIN,
                        rocm.ROCM_MFMA_fill_16x16_f32_INTRIN, rocm.ROCM_MFMA_STORE_16x16_f32_INTRIN)
    names = [b.name_hint for b in _blocks(sch.mod["main"])]
    # Every tile-level block was replaced by its intrinsic's implementation: no 16x16 inner
    # blocks of the description remain.
    assert "C" not in names and "C_init" not in names


def _blocks(func):
    found = []
    tir.stmt_functor.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Block) else None)
    return found


def test_meta_var_tuple_unpacks():
    def swap(i, j):
        return j, i

    @T.prim_func
    def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                r, c = T.meta_var(swap(vi, vj))
                B[r, c] = A[vi, vj]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj]

    assert_structural_equal(transpose, expected)


def test_meta_var_wrong_arity_is_an_error():
    with pytest.raises(DiagnosticError, match="cannot unpack 3 values into 2 names"):
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    a, b = T.meta_var((vi, vi, vi))
                    A[a] = T.float32(0)
