"""The "Blitz Course to TensorIR" (TVM's tutorial, the seed of issue 12), with only its import
lines changed: ``import tvm`` -> ``import tessera as tvm`` and so on."""

import numpy as np
import pytest

import tessera as tvm
from tessera import _core
from tessera.ir import IRModule, assert_structural_equal
from tessera.script import tir as T

GPU = _core.cuda_driver_status()[0] or _core.cuda_emulator_enabled()


@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        # We exchange data between function by handles, which are similar to pointer.
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # Create buffer from handles.
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            # A block is an abstraction for computation.
            with T.block("B"):
                # Define a spatial block iterator and bind it to value i.
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


@T.prim_func
def expected_te(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0 in range(8):
        with T.block("B"):
            v_i0 = T.axis.spatial(8, i0)
            T.reads(A[v_i0])
            T.writes(B[v_i0])
            B[v_i0] = A[v_i0] + T.float32(1)


def test_create_and_build_an_irmodule(capsys):
    ir_module = MyModule
    print(type(ir_module))
    print(ir_module.script())
    mod = tvm.build(ir_module, target="llvm")  # The module for CPU backends.
    print(type(mod))
    a = tvm.nd.array(np.arange(8).astype("float32"))
    b = tvm.nd.array(np.zeros((8,)).astype("float32"))
    mod(a, b)
    print(a)
    print(b)
    out = capsys.readouterr().out
    assert "B[vi] = A[vi] + T.float32(1" in out and "T.reads(A[vi])" in out
    np.testing.assert_array_equal(a.numpy(), np.arange(8))
    np.testing.assert_array_equal(b.numpy(), np.arange(8) + 1)


def test_te_compute_with_star_indices():
    from tessera import te

    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected_te"), expected_te)


def test_irmodule_from_te(capsys):
    from tessera import te

    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    ir_module_from_te = IRModule({"main": func})
    print(ir_module_from_te.script())
    assert "v_i0 = T.axis.spatial(8, i0)" in capsys.readouterr().out


def _schedule(capsys):
    ir_module = MyModule
    sch = tvm.tir.Schedule(ir_module)
    print(type(sch))
    # Get block by its name
    block_b = sch.get_block("B")
    # Get loops surrounding the block
    (i,) = sch.get_loops(block_b)
    # Tile the loop nesting.
    i_0, i_1, i_2 = sch.split(i, factors=[2, 2, 2])
    print(sch.mod.script())
    assert "for i_0, i_1, i_2 in T.grid(2, 2, 2):" in capsys.readouterr().out
    sch.reorder(i_0, i_2, i_1)
    print(sch.mod.script())
    out = capsys.readouterr().out
    assert "for i_0, i_2, i_1 in T.grid(2, 2, 2):" in out
    assert "vi = T.axis.spatial(8, i_0 * 4 + i_1 * 2 + i_2)" in out
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_2, "threadIdx.x")
    print(sch.mod.script())
    return sch


def test_transform_an_irmodule(capsys):
    sch = _schedule(capsys)
    out = capsys.readouterr().out
    assert sch.mod["main"].body is not None
    assert 'thread="blockIdx.x"' in out and 'thread="threadIdx.x"' in out


def test_bound_loops_print_as_tvm_does(capsys):
    _schedule(capsys)
    out = capsys.readouterr().out
    assert 'for i_0 in T.thread_binding(2, thread="blockIdx.x"):' in out
    assert 'for i_2 in T.thread_binding(2, thread="threadIdx.x"):' in out


@pytest.mark.skipif(not GPU, reason="needs a CUDA GPU or the CUDA emulator (TESSERA_CUDA_EMULATOR=1)")
def test_transform_to_a_gpu_program(capsys):
    sch = _schedule(capsys)
    ctx = tvm.cuda(0)
    cuda_mod = tvm.build(sch.mod, target="cuda")
    cuda_a = tvm.nd.array(np.arange(8).astype("float32"), ctx)
    cuda_b = tvm.nd.array(np.zeros((8,)).astype("float32"), ctx)
    cuda_mod(cuda_a, cuda_b)
    print(cuda_a)
    print(cuda_b)
    np.testing.assert_array_equal(cuda_a.numpy(), np.arange(8))
    np.testing.assert_array_equal(cuda_b.numpy(), np.arange(8) + 1)
