"""compute_at where the consumer's tile covers a fractional number of the producer's groups
(20 channels per tile, 8 per group): the region's start and extent simplify under the tile
loop's bounds as TVM's do (c_o * 2 and 3, not (c_o * 5) // 2 and a difference of divisions)."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


@T.prim_func
def grouped(X: T.Buffer((40,), "float32"), Y: T.Buffer((40,), "float32")):
    B = T.alloc_buffer((5,), "float32")
    for i in T.serial(5):
        with T.block("init"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.Cast("float32", vi)
    for c in T.serial(40):
        with T.block("compute"):
            vc = T.axis.remap("S", [c])
            Y[vc] = X[vc] + B[vc // 8]


def tile_and_compute_at(sch):
    c_o, _ = sch.split(sch.get_loops(sch.get_block("compute"))[0], factors=[2, 20])
    sch.compute_at(sch.get_block("init"), c_o)


def test_region_of_uneven_groups(golden):
    @T.prim_func
    def expected(X: T.Buffer((40,), "float32"), Y: T.Buffer((40,), "float32")):
        B = T.alloc_buffer((5,), "float32")
        for c_o in T.serial(2):
            for ax0 in T.serial(3):
                with T.block("init"):
                    vi = T.axis.spatial(5, c_o * 2 + ax0)
                    B[vi] = T.Cast("float32", vi)
            for c_i in T.serial(20):
                with T.block("compute"):
                    vc = T.axis.spatial(40, c_o * 20 + c_i)
                    Y[vc] = X[vc] + B[vc // 8]

    sch = golden(grouped, expected, tile_and_compute_at)
    lib = ts.build(sch.mod, target="c")
    x = np.random.RandomState(3).rand(40).astype("float32")
    y = ts.nd.array(np.zeros((40,), "float32"))
    lib(ts.nd.array(x), y)
    np.testing.assert_allclose(y.numpy(), x + np.arange(40) // 8, rtol=1e-6)
