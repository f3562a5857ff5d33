"""The description shared by the CUDA mma and ROCm MFMA store intrinsics: a 16x16 accumulator
held as ``(lanes, local_size)`` warp-scope slots, written to a 16x16 tile of ``scope`` memory
through ``layout(row, col) -> (lane, slot)``."""

from ...script import tir as T


def fragment_store_desc(lanes, local_size, dtype, scope, layout):
    """The description PrimFunc of storing a 16x16 accumulator fragment (see the module doc)."""

    @T.prim_func
    def desc(a: T.handle, c: T.handle):
        C_warp = T.match_buffer(a, (lanes, local_size), dtype, scope="warp")
        C = T.match_buffer(c, (16, 16), dtype, scope=scope)
        with T.block("root"):
            T.reads(C_warp[0:lanes, 0:local_size])
            T.writes(C[0:16, 0:16])
            for i0, i1 in T.grid(16, 16):
                with T.block("C_warp"):
                    v0, v1 = T.axis.remap("SS", [i0, i1])
                    t, s = T.meta_var(layout(v0, v1))
                    T.reads(C_warp[t, s])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_warp[t, s]

    return desc
