"""The multi-level tiling rule's parallel loop on several cores: the first outer loop of tiles
whose iterations, dealt to the cores in whole iterations, keep at least 95% of the cores' turns
busy; where one loop does not (7 rows of tiles on 2 cores run as 4 + 3; a batch of 2 on 4 cores
leaves 2 idle), the next outer loops are fused into it. The register tile of C stays a small
array of each iteration (tir.PlanBufferAllocationDown sees that the fused loop's digits keep
the iterations' tiles apart) and the fused loop's digits are C's `/` and `%`. Every result is
checked against numpy, on shapes with and without the fusion, in the dtypes the rule tiles."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def _conv(shape, dtype):
    n, c, h, w, f = shape
    X = te.placeholder((n, c, h, w), dtype, name="X")
    W = te.placeholder((f, c, 3, 3), dtype, name="W")
    return te.create_prim_func([X, W, topi.nn.conv2d_nchw(X, W, 1, 0, 1)])


def _bmm(shape, dtype):
    b, m, k, n = shape
    A = te.placeholder((b, m, k), dtype, name="A")
    B = te.placeholder((b, k, n), dtype, name="B")
    return te.create_prim_func([A, B, topi.nn.batch_matmul(A, B, transpose_b=False)])


def _data(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-20, 20, shape).astype(dtype)


def _conv_ref(x, w):
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    wide = np.float64 if x.dtype.kind == "f" else np.int64
    y = sum(np.einsum("nchw,fc->nfhw", x[:, :, ky:ky + oh, kx:kx + ow].astype(wide),
                      w[:, :, ky, kx].astype(wide)) for ky in range(3) for kx in range(3))
    return y


def _parallel(sch):
    """(the fused loops' count, or 0: none fused, or None: nothing parallel)."""
    lines = str(sch.trace).splitlines()
    par = [line for line in lines if "sch.parallel(" in line]
    if not par:
        return None
    fused = [line for line in lines if "sch.fuse(" in line]
    assert len(par) == 1, lines
    if not fused:
        return 0
    target = par[0].split("loop=")[1].rstrip(")")
    fuse = [line for line in fused if line.strip().startswith(target + " = ")]
    assert len(fuse) == 1, lines
    args = fuse[0].split("sch.fuse(")[1].rstrip(")").split(", ")
    return len([a for a in args if "=" not in a])


def _run_conv(shape, dtype, cores):
    sch = ts.autoschedule(_conv(shape, dtype), target="c", facts={"cores": cores})
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(sum(shape) * cores)
    x = _data(rng, shape[:4], dtype)
    w = _data(rng, (shape[4], shape[1], 3, 3), dtype)
    y = np.zeros((shape[0], shape[4], shape[2] - 2, shape[3] - 2), dtype)
    lib(x, w, y)
    want = _conv_ref(x, w)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    else:
        np.testing.assert_array_equal(y, want.astype(dtype))
    return sch, lib.get_source()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16"])
def test_seven_rows_of_tiles_on_two_cores_fuse_with_the_columns(dtype):
    # 28 x 28 outputs: rows of 4 (7 tiles) and columns of tiles fused, 49 iterations
    sch, src = _run_conv((1, 16, 30, 30, 16), dtype, cores=2)
    if "tessera.mask_tail" in str(sch.trace):
        # (float32 on AVX-512: the 28 columns are one masked tile of 8-lane vectors, its rows
        # one output row each: 28 rows of tiles, balanced on 2 cores, the row loop alone)
        assert _parallel(sch) == 0, sch.trace
    else:
        assert _parallel(sch) == 3, sch.trace  # the tile rows, the unit batch loop, the tile columns
    assert "#pragma omp parallel for" in src
    # the register tile stays an array of each iteration (no workspace of the whole output)
    assert "tessera_alloc_workspace" not in src, src
    assert "__floordiv" not in src and "__floormod" not in src


def test_fourteen_rows_of_tiles_on_two_cores_stay_one_loop():
    sch, src = _run_conv((1, 16, 58, 58, 16), "float32", cores=2)
    assert _parallel(sch) == 0, sch.trace
    assert "tessera_alloc_workspace" not in src


def test_fourteen_rows_of_tiles_on_four_cores_fuse():
    sch, src = _run_conv((1, 16, 58, 58, 16), "float32", cores=4)
    assert _parallel(sch) == 3, sch.trace
    assert "tessera_alloc_workspace" not in src


@pytest.mark.parametrize("cores", [2, 4, 8])
def test_a_batch_of_two(cores):
    # the batch loop alone on 2 cores; with the rows and channels of tiles on 4 and 8 (three
    # digits of the fused loop: batch, tile row, tile channel)
    sch, src = _run_conv((2, 16, 30, 30, 16), "float32", cores=cores)
    # (one masked tile of the 28 columns, see above: the batch and the 28 rows of tiles)
    fused = 2 if "tessera.mask_tail" in str(sch.trace) else 3
    assert _parallel(sch) == (0 if cores == 2 else fused), sch.trace
    assert "tessera_alloc_workspace" not in src, src


def test_one_core_has_no_parallel_loop():
    sch, _ = _run_conv((1, 16, 30, 30, 16), "float32", cores=1)
    assert _parallel(sch) is None


@pytest.mark.parametrize("shape", [(3, 8, 13, 19, 24), (1, 5, 11, 40, 12), (2, 3, 17, 9, 7)])
@pytest.mark.parametrize("cores", [2, 3, 4])
def test_odd_convolutions_match_numpy(shape, cores):
    _run_conv(shape, "float32", cores)


@pytest.mark.parametrize("cores", [2, 4])
def test_a_batched_product_fuses_its_batch_loops_when_they_do_not_balance(cores):
    # batch 6 of 128 x 64 x 96 products (6 on 4 cores: 2 + 2 + 1 + 1)
    shape = (6, 128, 64, 96)
    sch = ts.autoschedule(_bmm(shape, "float32"), target="c", facts={"cores": cores})
    fused = _parallel(sch)
    assert fused == (0 if cores == 2 else 2), sch.trace
    lib = ts.build(sch.mod, target="c")
    src = lib.get_source()
    assert "tessera_alloc_workspace" not in src, src
    rng = np.random.default_rng(cores)
    a, b = _data(rng, shape[:3], "float32"), _data(rng, (6, 64, 96), "float32")
    c = np.zeros((6, 128, 96), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
