"""annotate_buffer_access: explicit read/write regions, marked in the block's annotations."""

from tessera import tir
from tessera.script import tir as T


@T.prim_func
def two_stage(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_read_region(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi - 1 : vi - 1 + 2, vj - 1 : vj - 1 + 2])
                T.writes(B[vi, vj])
                T.block_attr({"explicit_read_region": [T.int32(0)]})
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    def apply(sch):
        sch.annotate_buffer_access(sch.get_block("B"), 0, "read",
                                   lambda vi, vj: ((vi - 1, vi + 1), (vj - 1, vj + 1)))
        assert sch.trace.as_python()[-1] == (
            'sch.annotate_buffer_access(block=b0, buffer_index=0, buf_type="read", '
            "gen_new_ranges=lambda vi, vj: [(vi - 1, vi + 1), (vj - 1, vj + 1)])")

    golden(two_stage, expected, apply)


def test_read_and_write_regions(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi : vi + 2, vj])
                T.block_attr({"explicit_write_region": [T.int32(0)]})
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    def apply(sch):
        block = sch.get_block("B")
        sch.annotate_buffer_access(block, 0, "write", lambda vi, vj: ((vi, vi + 2), vj))
        # Annotating again keeps one index in the annotation.
        sch.annotate_buffer_access(block, 0, "write", lambda vi, vj: ((vi, vi + 2), vj))

    golden(two_stage, expected, apply)


def test_out_of_range_fails(schedule_error):
    schedule_error(two_stage, lambda sch: sch.annotate_buffer_access(
        sch.get_block("B"), 2, "read", lambda vi, vj: (vi, vj)), "annotate_buffer_access",
        "the read buffer index 2 is out of range: the block tir.Block#0 has 1 read buffers")


def test_region_slice_extent_is_simplified():
    # As TVM's Buffer.__getitem__: the extent of `A[i - 2 : i + 3]` is 5, not (i + 3) - (i - 2).
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi - 2 : vi + 3])
                T.writes(B[vi])
                B[vi] = A[vi]

    block = f.body.block.body.body.block
    extent = block.reads[0].region[0].extent
    assert isinstance(extent, tir.IntImm) and extent.value == 5
