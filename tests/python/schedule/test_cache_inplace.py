"""cache_inplace: a buffer a block reads and writes goes through a cache, copied in right before
the block and out right after it."""

from tessera.script import tir as T


@T.prim_func
def ext(D: T.Buffer((32,), "float32")):
    for i0 in range(2):
        with T.block("ext"):
            v = T.axis.spatial(2, i0)
            T.reads(D[v * 16:v * 16 + 16])
            T.writes(D[v * 16:v * 16 + 16])
            T.evaluate(T.call_extern("int32", "scale16", D.data, v * 16))


@T.prim_func
def ext_cached(D: T.Buffer((32,), "float32")):
    D_local = T.alloc_buffer((32,), "float32", scope="local")
    for i0 in range(2):
        for ax0 in range(16):
            with T.block("D_local"):
                v0 = T.axis.spatial(32, i0 * 16 + ax0)
                T.reads(D[v0])
                T.writes(D_local[v0])
                D_local[v0] = D[v0]
        with T.block("ext"):
            v = T.axis.spatial(2, i0)
            T.reads(D_local[v * 16:v * 16 + 16])
            T.writes(D_local[v * 16:v * 16 + 16])
            T.evaluate(T.call_extern("int32", "scale16", D_local.data, v * 16))
        for ax0 in range(16):
            with T.block("D_local"):
                v0 = T.axis.spatial(32, i0 * 16 + ax0)
                T.reads(D_local[v0])
                T.writes(D[v0])
                D[v0] = D_local[v0]


def test_cache_inplace(golden):
    def apply(sch):
        copy_in, copy_out = sch.cache_inplace("ext", 0, "local")
        assert sch.get(copy_in).writes[0].buffer.name == "D_local"
        assert sch.get(copy_out).reads[0].buffer.name == "D_local"

    sch = golden(ext, ext_cached, apply)
    assert sch.trace.as_python()[-1] == (
        'b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, storage_scope="local")')


def test_cache_inplace_needs_read_and_write(schedule_error):
    @T.prim_func
    def read_only(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]

    schedule_error(read_only, lambda sch: sch.cache_inplace("B", 0, "local"), "cache_inplace",
                   "must read and write A")
    schedule_error(ext, lambda sch: sch.cache_inplace("ext", 0, "nowhere"), "cache_inplace",
                   "Invalid storage scope")
