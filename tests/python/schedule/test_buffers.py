"""storage_align, set_scope, transform_layout: buffer layout and placement."""

from tessera import tir
from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


# ---- storage_align ----


def test_storage_align(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"buffer_dim_align": [[0, 0, 128, 1]]})
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.storage_align(sch.get_block("B"), 0, 0, 128, 1))
    # A second call on the same axis replaces the first; a negative axis counts from the end.
    def twice(sch):
        sch.storage_align(sch.get_block("B"), 0, -2, 64, 3)
        sch.storage_align(sch.get_block("B"), 0, 0, 128, 1)

    golden(elementwise, expected, twice)


def test_storage_align_axis_out_of_range(schedule_error):
    schedule_error(elementwise, lambda sch: sch.storage_align(sch.get_block("B"), 0, 2, 16, 1),
                   "storage_align", "The axis 2 is out of range for the 2-dimensional buffer B")


def test_storage_align_invalid_factor_or_offset(schedule_error):
    schedule_error(elementwise, lambda sch: sch.storage_align(sch.get_block("B"), 0, 0, 0, 0),
                   "storage_align", "The factor must be positive, but got 0")
    schedule_error(elementwise, lambda sch: sch.storage_align(sch.get_block("B"), 0, 0, 16, 16),
                   "storage_align", "The offset 16 must be in [0, 16)")


def test_storage_align_buffer_index_out_of_range(schedule_error):
    schedule_error(elementwise, lambda sch: sch.storage_align(sch.get_block("B"), 1, 0, 16, 1),
                   "storage_align", "The write buffer index 1 is out of range")


def test_storage_align_function_parameter(schedule_error):
    schedule_error(elementwise, lambda sch: sch.storage_align(sch.get_block("C"), 0, 0, 16, 1),
                   "storage_align", "is a function parameter")


# ---- set_scope ----


def test_set_scope(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), scope="shared")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.set_scope(sch.get_block("B"), 0, "shared"))


def test_set_scope_invalid(schedule_error):
    schedule_error(elementwise, lambda sch: sch.set_scope(sch.get_block("B"), 0, "sharde"), "set_scope",
                   "Invalid storage scope 'sharde'")
    schedule_error(elementwise, lambda sch: sch.set_scope(sch.get_block("B"), 3, "shared"), "set_scope",
                   "The write buffer index 3 is out of range")
    schedule_error(elementwise, lambda sch: sch.set_scope(sch.get_block("C"), 0, "shared"), "set_scope",
                   "is a function parameter")


# ---- transform_layout ----


def test_transform_layout_transpose(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vj, vi] + T.float32(1)

    golden(elementwise, expected,
           lambda sch: sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i)))


def test_transform_layout_split_axis_of_a_parameter(golden):
    @T.prim_func
    def expected(A: T.Buffer((32, 128, 4), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi // 4, vj, vi % 4] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = golden(elementwise, expected,
                 lambda sch: sch.transform_layout(sch.get_block("B"), "A", lambda i, j: (i // 4, j, i % 4)))
    assert sch.trace.as_python()[-1] == (
        'sch.transform_layout(block=b0, buffer=("read", 0), index_map=lambda i, j: (i // 4, j, i % 4), '
        "pad_value=None, assume_injective_transform=False)")


def test_transform_layout_of_a_tiled_region(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi, 0:16])
                T.writes(B[vi, 0:16])
                for j in T.serial(16):
                    B[vi, j] = A[vi, j]
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj]

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi, 0:16])
                T.writes(B[0:16, vi])
                for j in T.serial(16):
                    B[j, vi] = A[vi, j]
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vj, vi]

    golden(before, expected,
           lambda sch: sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i)))


def test_transform_layout_not_bijective(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i, i)),
                   "transform_layout", "The index map is not bijective")


def test_transform_layout_not_affine(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i * j, j)),
                   "transform_layout", "The index map is not affine")


def test_transform_layout_padding_requires_pad_value(schedule_error):
    @T.prim_func
    def ten(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.alloc_buffer((10,))
        for i in T.serial(10):
            with T.block("B"):
                vi = T.axis.spatial(10, i)
                B[vi] = A[vi]
        for i in T.serial(10):
            with T.block("C"):
                vi = T.axis.spatial(10, i)
                C[vi] = B[vi]

    schedule_error(ten,
                   lambda sch: sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i: (i // 4, i % 4)),
                   "transform_layout", "would introduce padding wherever axis0 == 2 and 2 <= axis1 is true")


def test_transform_layout_buffer_index_out_of_range(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch._sch.transform_layout(sch.get_block("B"), "read", 4, tir.IndexMap(), None),
                   "transform_layout", "The read buffer index 4 is out of range")
