"""unsafe_hide_buffer_access: chosen read or write regions leave the block's region lists."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def gather_scale(X: T.Buffer((64,), "float32"), Idx: T.Buffer((16,), "int32"),
                 W: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32"),
                 Seen: T.Buffer((16,), "int32")):
    for n in range(16):
        with T.block("gather"):
            vn = T.axis.spatial(16, n)
            T.reads(Idx[vn], X[Idx[vn]], W[vn])
            T.writes(Y[vn], Seen[vn])
            Y[vn] = X[Idx[vn]] * W[vn]
            Seen[vn] = Idx[vn]


def test_hide_reads(golden):
    @T.prim_func
    def expected(X: T.Buffer((64,), "float32"), Idx: T.Buffer((16,), "int32"),
                 W: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32"),
                 Seen: T.Buffer((16,), "int32")):
        for n in range(16):
            with T.block("gather"):
                vn = T.axis.spatial(16, n)
                T.reads(X[Idx[vn]])
                T.writes(Y[vn], Seen[vn])
                Y[vn] = X[Idx[vn]] * W[vn]
                Seen[vn] = Idx[vn]

    def apply(sch):
        # indices in any order, repeated: each hidden once
        sch.unsafe_hide_buffer_access(sch.get_block("gather"), "read", [2, 0, 2])
        assert sch.trace.as_python()[-1] == (
            'sch.unsafe_hide_buffer_access(block=b0, buf_type="read", buf_index_array=[2, 0, 2])')

    golden(gather_scale, expected, apply)


def test_hide_write_by_block_name(golden):
    @T.prim_func
    def expected(X: T.Buffer((64,), "float32"), Idx: T.Buffer((16,), "int32"),
                 W: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32"),
                 Seen: T.Buffer((16,), "int32")):
        for n in range(16):
            with T.block("gather"):
                vn = T.axis.spatial(16, n)
                T.reads(Idx[vn], X[Idx[vn]], W[vn])
                T.writes(Y[vn])
                Y[vn] = X[Idx[vn]] * W[vn]
                Seen[vn] = Idx[vn]

    golden(gather_scale, expected, lambda sch: sch.unsafe_hide_buffer_access("gather", "write", [1]))


def test_the_body_still_computes_the_same():
    sch = tir.Schedule(gather_scale)
    sch.unsafe_hide_buffer_access(sch.get_block("gather"), "read", [0])
    f = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(64).astype("float32")
    idx = rng.integers(0, 64, 16).astype("int32")
    w = rng.standard_normal(16).astype("float32")
    y, seen = np.zeros(16, "float32"), np.zeros(16, "int32")
    f(x, idx, w, y, seen)
    np.testing.assert_allclose(y, x[idx] * w, rtol=1e-6)
    np.testing.assert_array_equal(seen, idx)


@pytest.mark.parametrize("kind, indices, fragment", [
    ("opaque", [0], 'not ("opaque", ...)'),
    ("read", [3], "has 3 read regions, so an index must be in [0, 3); got 3"),
    ("write", [-1], "has 2 write regions, so an index must be in [0, 2); got -1"),
])
def test_errors_leave_the_schedule_unchanged(schedule_error, kind, indices, fragment):
    schedule_error(gather_scale,
                   lambda sch: sch.unsafe_hide_buffer_access(sch.get_block("gather"), kind, indices),
                   "unsafe_hide_buffer_access", fragment)


@pytest.mark.parametrize("indices, fragment", [
    (["0"], "buf_index_array must be ints"),
    (0, "buf_index_array must be a list of ints, got int"),
    ("read", "buf_index_array must be a list of ints, got str"),
])
def test_index_array_must_be_a_list_of_integers(indices, fragment):
    sch = tir.Schedule(gather_scale)
    with pytest.raises(TypeError, match=fragment):
        sch.unsafe_hide_buffer_access(sch.get_block("gather"), "read", indices)
    assert len(sch.trace.as_python()) == 1  # only get_block was recorded
