"""compute_inline, reverse_compute_inline: fold a block into its consumers (its producer)."""

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


def test_compute_inline(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.compute_inline(sch.get_block("B")))


def test_compute_inline_into_a_transposed_use_and_a_reduction(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for i, k in T.grid(16, 16):
            with T.block("D"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    D[vi] = T.float32(0)
                D[vi] = D[vi] + B[vk, vi]

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 16):
            with T.block("D"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    D[vi] = T.float32(0)
                D[vi] = D[vi] + (A[vk, vi] + T.float32(1))

    golden(before, expected, lambda sch: sch.compute_inline(sch.get_block("B")))


def test_reverse_compute_inline(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))


def test_reverse_compute_inline_with_a_transposed_store(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 32), "float32"), C: T.Buffer((32, 16), "float32")):
        B = T.alloc_buffer((16, 32))
        for i, j in T.grid(16, 32):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j, i in T.grid(32, 16):
            with T.block("C"):
                vj, vi = T.axis.remap("SS", [j, i])
                C[vj, vi] = B[vi, vj] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16, 32), "float32"), C: T.Buffer((32, 16), "float32")):
        for i, j in T.grid(16, 32):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vj, vi] = A[vi, vj] * T.float32(2) + T.float32(1)

    golden(before, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))


# ---- checks ----


def test_compute_inline_output_block(schedule_error):
    schedule_error(elementwise, lambda sch: sch.compute_inline(sch.get_block("C")), "compute_inline",
                   "Cannot operate on an output block")


def test_compute_inline_root_block(schedule_error):
    schedule_error(elementwise, lambda sch: sch.compute_inline(sch.get_block("root")), "compute_inline",
                   "Cannot inline the root block")


def test_compute_inline_reduction(schedule_error):
    @T.prim_func
    def reduction(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i, k in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    schedule_error(reduction, lambda sch: sch.compute_inline(sch.get_block("B")), "compute_inline",
                   "has an init statement")


def test_compute_inline_body_form(schedule_error):
    @T.prim_func
    def shifted(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(15):
            with T.block("B"):
                vi = T.axis.spatial(15, i)
                B[vi + 1] = A[vi]
        for i in T.serial(15):
            with T.block("C"):
                vi = T.axis.spatial(15, i)
                C[vi] = B[vi + 1]

    schedule_error(shifted, lambda sch: sch.compute_inline(sch.get_block("B")), "compute_inline",
                   "must be one store A[i, j, ...] = f(i, j, ...)")


def test_compute_inline_block_writing_two_buffers(schedule_error):
    @T.prim_func
    def two_outputs(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        D = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
                D[vi] = A[vi]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi] + D[vi]

    schedule_error(two_outputs, lambda sch: sch.compute_inline(sch.get_block("B")), "compute_inline",
                   "must be one store")


def test_compute_inline_block_with_predicate(schedule_error):
    @T.prim_func
    def ragged(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.alloc_buffer((10,))
        for i_0, i_1 in T.grid(3, 4):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < 10)
                B[vi] = A[vi]
        for i in T.serial(10):
            with T.block("C"):
                vi = T.axis.spatial(10, i)
                C[vi] = B[vi]

    schedule_error(ragged, lambda sch: sch.compute_inline(sch.get_block("B")), "compute_inline",
                   "has a non-trivial predicate")


def test_compute_inline_opaque_access(schedule_error):
    @T.prim_func
    def opaque(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        with T.block("C"):
            T.reads(B[0:16])
            T.writes(C[0:16])
            Bv = T.match_buffer(B[0:16], (16,))
            for i in T.serial(16):
                C[i] = Bv[i]

    schedule_error(opaque, lambda sch: sch.compute_inline(sch.get_block("B")), "compute_inline",
                   "is accessed opaquely or written by another block")


def test_reverse_compute_inline_two_producers(schedule_error):
    @T.prim_func
    def two_inputs(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        D = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        for i in T.serial(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                D[vi] = A[vi]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi] + D[vi]

    schedule_error(two_inputs, lambda sch: sch.reverse_compute_inline(sch.get_block("C")),
                   "reverse_compute_inline", "must read exactly one")


def test_reverse_compute_inline_shifted_load(golden):
    # As TVM: the consumer's iterator is the producer's minus the shift, and the producer runs
    # only where that is in the consumer's domain.
    @T.prim_func
    def shifted(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        for i in T.serial(15):
            with T.block("C"):
                vi = T.axis.spatial(15, i)
                C[vi] = B[vi + 1]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.where(1 <= i)
                C[vi - 1] = A[vi]

    golden(shifted, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))


def test_reverse_compute_inline_loads_at_different_indices(schedule_error):
    @T.prim_func
    def two_loads(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        for i in T.serial(15):
            with T.block("C"):
                vi = T.axis.spatial(15, i)
                C[vi] = B[vi] + B[vi + 1]

    schedule_error(two_loads, lambda sch: sch.reverse_compute_inline(sch.get_block("C")),
                   "reverse_compute_inline", "differ in their indices")


def test_reverse_compute_inline_of_an_input_producer(schedule_error):
    @T.prim_func
    def copy_out(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
                 C: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    schedule_error(copy_out, lambda sch: sch.reverse_compute_inline(sch.get_block("C")),
                   "reverse_compute_inline", "Cannot operate on an output block")


def test_compute_inline_block_declaring_two_written_buffers(schedule_error):
    @T.prim_func
    def declared(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        D = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi])
                T.writes(B[vi], D[vi])
                B[vi] = A[vi]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    schedule_error(declared, lambda sch: sch.compute_inline(sch.get_block("B")), "compute_inline",
                   "The block tir.Block#0 writes 2 buffers; an inlined block should write exactly one")
