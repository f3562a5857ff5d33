"""unsafe_set_dtype: a buffer allocated in the function gets another element type."""

from tessera.script import tir as T


@T.prim_func
def element_wise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def subregion(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], (), offset_factor=1)
            B0[()] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1 = T.match_buffer(B[vi, vj], (), offset_factor=1)
            C[vi, vj] = B1[()] + T.float32(1)


def test_set_dtype(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float16")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.cast(A[vi, vj] * T.float32(2), "float16")
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.cast(B[vi, vj], "float32") + T.float32(1)

    def apply(sch):
        sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16")
        assert sch.trace.as_python()[-1] == (
            'sch.unsafe_set_dtype(block=b0, buffer_index=0, dtype="float16")')

    golden(element_wise, expected, apply)


def test_set_dtype_through_match_buffers(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float16")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B0 = T.match_buffer(B[vi, vj], (), "float16", offset_factor=1)
                B0[()] = T.cast(A[vi, vj] * T.float32(2), "float16")
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                B1 = T.match_buffer(B[vi, vj], (), "float16", offset_factor=1)
                C[vi, vj] = T.cast(B1[()], "float32") + T.float32(1)

    golden(subregion, expected, lambda sch: sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16"))


def test_same_dtype_is_a_no_op(golden):
    golden(element_wise, element_wise,
           lambda sch: sch.unsafe_set_dtype(sch.get_block("B"), 0, "float32"))


def test_output_buffer_fails(schedule_error):
    schedule_error(element_wise, lambda sch: sch.unsafe_set_dtype(sch.get_block("C"), 0, "float16"),
                   "unsafe_set_dtype", "the buffer C is not allocated by any block")


def test_index_out_of_range_fails(schedule_error):
    for index in (1, -1):
        schedule_error(element_wise,
                       lambda sch: sch.unsafe_set_dtype(sch.get_block("B"), index, "float64"),
                       "unsafe_set_dtype",
                       f"the write buffer index {index} is out of range: the block tir.Block#0 "
                       "has 1 write buffers")
