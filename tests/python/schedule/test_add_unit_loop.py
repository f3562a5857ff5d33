"""add_unit_loop: a loop of extent 1 above a block or a loop."""

from tessera.script import tir as T


@T.prim_func
def single(A: T.Buffer((), "float32"), B: T.Buffer((), "float32")):
    with T.block("root"):  # a lone block without iterators would be the root itself
        with T.block("B"):
            B[()] = A[()] + T.float32(1)


@T.prim_func
def elementwise(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)


def test_add_unit_loop_above_a_block(golden):
    @T.prim_func
    def expected(A: T.Buffer((), "float32"), B: T.Buffer((), "float32")):
        for u in T.serial(1):
            with T.block("B"):
                B[()] = A[()] + T.float32(1)

    def apply(sch):
        loop = sch.add_unit_loop(sch.get_block("B"))
        assert sch.get(loop).extent.value == 1
        assert len(sch.get_loops(sch.get_block("B"))) == 1

    golden(single, expected, apply)


def test_add_unit_loop_above_a_loop(golden):
    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for u, i in T.grid(1, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi] + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.add_unit_loop(sch.get_loops(sch.get_block("B"))[0]))


def test_add_unit_loop_above_the_root_block(schedule_error):
    def apply(sch):
        root = sch.get_block("root")
        sch.add_unit_loop(root)

    schedule_error(elementwise, apply, "add_unit_loop", "Cannot add a loop above the root block")
