"""get_tensorize_loop_mapping / tile_with_tensor_intrin (which loops of a block a tensor
intrinsic covers, and the tiling that exposes them), is_output_block, and the dot-product
intrinsics registered under TVM's names for other targets (portable implementations)."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir.schedule.analysis import TensorizeInfo, get_tensorize_loop_mapping, is_output_block
from tessera.tir.schedule.testing import verify_trace_roundtrip
from tessera.tir.schedule.transform import tile_with_tensor_intrin
from tessera.tir.tensor_intrin import arm_cpu, dot_product_common, hexagon, rocm, x86


@T.prim_func
def dense(X: T.Buffer((8, 32), "uint8"), W: T.Buffer((32, 32), "int8"), Y: T.Buffer((8, 32), "int32")):
    for i, j, k in T.grid(8, 32, 32):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = 0
            Y[vi, vj] = Y[vi, vj] + T.Cast("int32", X[vi, vk]) * T.Cast("int32", W[vj, vk])


@T.prim_func
def dense_tiled(X: T.Buffer((8, 32), "uint8"), W: T.Buffer((32, 32), "int8"), Y: T.Buffer((8, 32), "int32")):
    for i, j_0, k_0, j_1, k_1 in T.grid(8, 2, 8, 16, 4):
        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(32, j_0 * 16 + j_1)
            vk = T.axis.reduce(32, k_0 * 4 + k_1)
            with T.init():
                Y[vi, vj] = 0
            Y[vi, vj] = Y[vi, vj] + T.Cast("int32", X[vi, vk]) * T.Cast("int32", W[vj, vk])


def _main(func):
    return func.with_attr("global_symbol", ts._core.StringImm("main"))


def test_loop_mapping_dense():
    sch = tir.Schedule(_main(dense))
    block = sch.get_block("Y")
    info = get_tensorize_loop_mapping(sch, block, tir.TensorIntrin.get(x86.VNNI_DOT_16x4_INTRIN).desc)
    assert isinstance(info, TensorizeInfo)
    _, j, k = sch.get_loops(block)
    by_desc = {desc_loop: sref for sref, desc_loop in info.loop_map.items()}
    desc_i, desc_k = sorted(by_desc, key=lambda loop: info.desc_loop_indexer[loop])
    assert sch.get(by_desc[desc_i]) == sch.get(j)
    assert sch.get(by_desc[desc_k]) == sch.get(k)
    assert info.block_iter_paddings is None


def test_loop_mapping_follows_permuted_loops():
    sch = tir.Schedule(_main(dense))
    block = sch.get_block("Y")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, i, j)
    info = get_tensorize_loop_mapping(sch, block, tir.TensorIntrin.get(arm_cpu.ARM_DOT_4x4_i8_SDOT_INTRIN).desc)
    assert {sch.get(s) for s in info.loop_map} == {sch.get(j), sch.get(k)}


def test_loop_mapping_needs_divisible_extents_or_padding():
    @T.prim_func
    def odd(X: T.Buffer((8, 30), "uint8"), W: T.Buffer((30, 30), "int8"), Y: T.Buffer((8, 30), "int32")):
        for i, j, k in T.grid(8, 30, 30):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = 0
                Y[vi, vj] = Y[vi, vj] + T.Cast("int32", X[vi, vk]) * T.Cast("int32", W[vj, vk])

    sch = tir.Schedule(_main(odd))
    desc = tir.TensorIntrin.get(x86.VNNI_DOT_16x4_INTRIN).desc
    assert get_tensorize_loop_mapping(sch, sch.get_block("Y"), desc) is None
    info = get_tensorize_loop_mapping(sch, sch.get_block("Y"), desc, allow_padding=True)
    assert info.block_iter_paddings == [1, 16, 4]
    assert tile_with_tensor_intrin(sch, sch.get_block("Y"), x86.VNNI_DOT_16x4_INTRIN) is None


def test_tile_with_tensor_intrin_golden_and_runs():
    sch = tir.Schedule(_main(dense), debug_mask="all")
    block = sch.get_block("Y")
    inner = tile_with_tensor_intrin(sch, block, x86.VNNI_DOT_16x4_INTRIN)
    assert_structural_equal(sch.mod["main"], _main(dense_tiled))
    assert sch.get(inner) == sch.get(sch.get_loops(block)[3])
    verify_trace_roundtrip(sch, _main(dense))
    sch.decompose_reduction(block, sch.get_loops(block)[2])
    sch.tensorize(inner, x86.VNNI_DOT_16x4_INTRIN)
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (8, 32), dtype="uint8")
    w = rng.integers(-128, 128, (32, 32), dtype="int8")
    out = ts.nd.array(np.zeros((8, 32), "int32"))
    lib(ts.nd.array(x), ts.nd.array(w), out)
    np.testing.assert_array_equal(out.numpy(), x.astype("int32") @ w.astype("int32").T)


def test_tile_with_unknown_intrin():
    sch = tir.Schedule(_main(dense))
    with pytest.raises(ValueError):
        tile_with_tensor_intrin(sch, sch.get_block("Y"), "no_such_intrin")


def test_is_output_block():
    @T.prim_func
    def two(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] * 2.0
        for i in range(8):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi] + 1.0

    sch = tir.Schedule(two)
    assert is_output_block(sch, sch.get_block("C"))
    assert not is_output_block(sch, sch.get_block("B"))
    with pytest.raises(TypeError):
        is_output_block(sch, sch.get_loops(sch.get_block("B"))[0])


# Two of them compiled and run (a C build each, ~1 s); the others tensorized only.
@pytest.mark.parametrize("intrin,dtype_a,dtype_b,dtype_c,run", [
    (arm_cpu.ARM_DOT_4x4_i8_SDOT_INTRIN, "int8", "int8", "int32", True),
    (arm_cpu.ARM_DOT_4x4_u8_UDOT_INTRIN, "uint8", "uint8", "uint32", False),
    (hexagon.VRMPY_u8i8i32_INTRIN, "uint8", "int8", "int32", False),
    (hexagon.VDMPY_i16i16i32_INTRIN, "int16", "int16", "int32", True),
])
def test_row_dot_intrinsics_tensorize_and_run(intrin, dtype_a, dtype_b, dtype_c, run):
    m, n, k = 4, 64, 16

    @T.prim_func
    def mm(X: T.Buffer((m, k), dtype_a), W: T.Buffer((n, k), dtype_b), Y: T.Buffer((m, n), dtype_c)):
        for i, j, r in T.grid(m, n, k):
            with T.block("Y"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    Y[vi, vj] = T.Cast(dtype_c, 0)
                Y[vi, vj] = Y[vi, vj] + T.Cast(dtype_c, X[vi, vr]) * T.Cast(dtype_c, W[vj, vr])

    sch = tir.Schedule(mm)
    block = sch.get_block("Y")
    inner = tile_with_tensor_intrin(sch, block, intrin)
    assert inner is not None
    sch.decompose_reduction(block, sch.get_loops(block)[2])
    sch.tensorize(inner, intrin)
    assert "Y_update_o" in [b.name_hint for b in _nodes(sch.mod["main"].body) if isinstance(b, tir.Block)]
    if not run:
        return
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(5)
    lo_a, lo_b = (0 if dtype_a.startswith("u") else -100), (0 if dtype_b.startswith("u") else -100)
    x = rng.integers(lo_a, 100, (m, k)).astype(dtype_a)
    w = rng.integers(lo_b, 100, (n, k)).astype(dtype_b)
    out = ts.nd.array(np.zeros((m, n), dtype_c))
    lib(ts.nd.array(x), ts.nd.array(w), out)
    np.testing.assert_array_equal(out.numpy(), (x.astype("int64") @ w.astype("int64").T).astype(dtype_c))


@pytest.mark.parametrize("intrin", [rocm.AMDGPU_SDOT4_INTRIN, dot_product_common.DP4A_U8S8S32_INTRIN])
def test_dp4a_description_matches_a_four_element_reduction(intrin):
    desc = tir.TensorIntrin.get(intrin).desc
    (loop,) = [n for n in _nodes(desc.body) if isinstance(n, tir.For)]
    assert int(loop.extent) == 4
    with pytest.raises(ValueError, match="uint8 operands"):
        dot_product_common.get_dp4a_intrin("int8", "uint8", "uint32")


def _nodes(stmt):
    out = []
    tir.stmt_functor.pre_order_visit(stmt, lambda n: out.append(n) or True)
    return out


def test_pre_order_visit_skips_children_on_false():
    desc = tir.TensorIntrin.get(x86.VNNI_DOT_16x4_INTRIN).desc
    loops = []

    def visit(node):
        if isinstance(node, tir.For):
            loops.append(node)
            return False
        return True

    tir.stmt_functor.pre_order_visit(desc.body, visit)
    assert len(loops) == 1  # the inner loop is under the outer one
    assert len([n for n in _nodes(desc.body) if isinstance(n, tir.For)]) == 2


def test_expr_deep_equal():
    from tessera.tir.analysis import expr_deep_equal

    x, y = tir.Var("x", "int32"), tir.Var("x", "int32")
    assert expr_deep_equal(x + 1, x + 1)
    assert not expr_deep_equal(x + 1, y + 1)


@T.prim_func
def unpack_desc(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (1,), "int32", offset_factor=1)
    B = T.match_buffer(b, (4,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:1])
        T.writes(B[0:4])
        for i in range(4):
            with T.block("unpack"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.bitwise_and(T.shift_right(A[vi // 4], vi % 4 * 8), 255)


@T.prim_func
def unpack_impl(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (1,), "int32", offset_factor=1)
    B = T.match_buffer(b, (4,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:1])
        T.writes(B[0:4])
        for i in T.unroll(4):
            B[i] = T.bitwise_and(T.shift_right(A[0], i * 8), 255)


tir.TensorIntrin.register("tessera_test_unpack4", unpack_desc, unpack_impl, override=True)


def test_tensorize_index_arithmetic_equal_over_the_domains():
    # The blockized body reads A[(vo * 4 + v) // 4] and shifts by (vo * 4 + v) % 4 * 8; the
    # description writes A[v // 4] and v % 4 * 8: equal for v < 4.
    @T.prim_func
    def unpack(A: T.Buffer((8,), "int32"), B: T.Buffer((32,), "int32")):
        for i in range(32):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.bitwise_and(T.shift_right(A[vi // 4], vi % 4 * 8), 255)

    sch = tir.Schedule(_main(unpack), debug_mask="all")
    _, inner = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
    sch.tensorize(inner, "tessera_test_unpack4")
    verify_trace_roundtrip(sch, _main(unpack))
    lib = ts.build(sch.mod, target="c")
    a = np.arange(8, dtype="int64") * 0x01020304 % (1 << 31)
    out = ts.nd.array(np.zeros(32, "int32"))
    lib(ts.nd.array(a.astype("int32")), out)
    expected = (a.astype("int32")[np.arange(32) // 4] >> (np.arange(32) % 4 * 8)) & 255
    np.testing.assert_array_equal(out.numpy(), expected)


def test_tensorize_still_refuses_different_index_arithmetic():
    @T.prim_func
    def shifted(A: T.Buffer((8,), "int32"), B: T.Buffer((32,), "int32")):
        for i in range(32):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.bitwise_and(T.shift_right(A[vi // 4], (vi + 1) % 4 * 8), 255)

    sch = tir.Schedule(_main(shifted))
    _, inner = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
    with pytest.raises(tir.ScheduleError, match="expressions differ"):
        sch.tensorize(inner, "tessera_test_unpack4")
