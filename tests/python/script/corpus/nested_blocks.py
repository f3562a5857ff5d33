"""Blocks inside blocks, opaque blocks, block-level buffers and views."""

from tessera.script import tir as T


@T.prim_func
def blockized(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    # An outer block per tile of 16 holds an inner block per element.
    for i0 in range(4):
        with T.block("outer"):
            vi0 = T.axis.spatial(4, i0)
            T.reads(A[vi0 * 16:vi0 * 16 + 16])
            T.writes(B[vi0 * 16:vi0 * 16 + 16])
            for i1 in range(16):
                with T.block("inner"):
                    vi1 = T.axis.spatial(64, vi0 * 16 + i1)
                    B[vi1] = A[vi1] + T.float32(1)


@T.prim_func
def opaque_block(A: T.Buffer((16,), "float32")):
    # A block without iterators may use the enclosing loop variables directly.
    for i in range(16):
        with T.block("opaque"):
            T.reads()
            T.writes(A[i])
            A[i] = T.float32(0)


@T.prim_func
def block_local_buffer(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i0 in range(4):
        with T.block("tile"):
            v0 = T.axis.spatial(4, i0)
            T.reads(A[v0 * 16:v0 * 16 + 16])
            T.writes(B[v0 * 16:v0 * 16 + 16])
            scratch = T.alloc_buffer((16,), scope="local")
            for i1 in range(16):
                scratch[i1] = A[v0 * 16 + i1] * T.float32(2)
            for i1 in range(16):
                B[v0 * 16 + i1] = scratch[i1]


@T.prim_func
def match_region(A: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            sub = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16))
            for x, y in T.grid(16, 16):
                sub[x, y] = T.float32(0)


@T.prim_func
def block_annotations(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            T.block_attr({"schedule_rule": "none", "unroll_depth": 4, "tags": ["x", "y"]})
            A[vi] = T.float32(1)


@T.prim_func
def explicit_root(A: T.Buffer((8,), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"note": "root with annotations prints explicitly"})
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = T.float32(0)


@T.prim_func
def opaque_and_scan_iterators(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("prefix"):
            vi = T.axis.scan(16, i)
            vo = T.axis.opaque(16, i)
            B[vi] = A[vo] + T.if_then_else(vi > 0, B[vi - 1], T.float32(0))


@T.prim_func
def iterator_with_offset_domain(A: T.Buffer((20,), "float32")):
    for i in range(10):
        with T.block("A"):
            vi = T.axis.spatial((5, 15), i + 5)
            A[vi] = T.float32(1)


@T.prim_func
def two_level_nest_with_init(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            for k0 in range(4):
                with T.block("part"):
                    vk0 = T.axis.reduce(4, k0)
                    with T.init():
                        B[vi] = T.float32(0)
                    for k1 in range(8):
                        B[vi] = B[vi] + A[vi, vk0 * 8 + k1]
