"""tensorize of a workload indexed in int64 with an intrinsic written in int32 (as TVM does): the
implementation's indices widen to int64 (its match buffers, loops, offsets and the constants
combined with them), so the module stays well typed, prints as TVM prints it and builds."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def add4_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (4,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:4], B[0:4])
        T.writes(C[0:4])
        for i in range(4):
            with T.block("add"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]


@T.prim_func
def add4_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (4,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:4], B[0:4])
        T.writes(C[0:4])
        for i in range(2):
            for j in range(2):
                C[i * 2 + j] = A[i * 2 + j] + B[T.Cast("int32", i * 2 + j)]


tir.TensorIntrin.register("tessera_test_add4_int32_impl", add4_desc, add4_impl, override=True)


@T.prim_func
def add64(A: T.Buffer((T.int64(16),), "float32"), B: T.Buffer((T.int64(16),), "float32"),
          C: T.Buffer((T.int64(16),), "float32")):
    for i in range(T.int64(16)):
        with T.block("add"):
            vi = T.axis.spatial(T.int64(16), i)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def add64_tensorized(A: T.Buffer((T.int64(16),), "float32"), B: T.Buffer((T.int64(16),), "float32"),
                     C: T.Buffer((T.int64(16),), "float32")):
    for i_0 in range(T.int64(4)):
        with T.block("add_o"):
            vi_o = T.axis.spatial(T.int64(4), i_0)
            T.reads(A[vi_o * T.int64(4):vi_o * T.int64(4) + T.int64(4)],
                    B[vi_o * T.int64(4):vi_o * T.int64(4) + T.int64(4)])
            T.writes(C[vi_o * T.int64(4):vi_o * T.int64(4) + T.int64(4)])
            A_elem_offset = T.int64()
            B_elem_offset = T.int64()
            C_elem_offset = T.int64()
            A_1 = T.match_buffer(A[vi_o * T.int64(4):vi_o * T.int64(4) + T.int64(4)], (T.int64(4),),
                                 elem_offset=A_elem_offset, offset_factor=1)
            B_1 = T.match_buffer(B[vi_o * T.int64(4):vi_o * T.int64(4) + T.int64(4)], (T.int64(4),),
                                 elem_offset=B_elem_offset, offset_factor=1)
            C_1 = T.match_buffer(C[vi_o * T.int64(4):vi_o * T.int64(4) + T.int64(4)], (T.int64(4),),
                                 elem_offset=C_elem_offset, offset_factor=1)
            for i in range(T.int64(2)):
                for j in range(T.int64(2)):
                    C_1[i * T.int64(2) + j] = A_1[i * T.int64(2) + j] + B_1[i * T.int64(2) + j]


def _tensorize(sch):
    (i,) = sch.get_loops(sch.get_block("add"))
    _, inner = sch.split(i, [None, 4])
    sch.tensorize(inner, "tessera_test_add4_int32_impl")


def test_an_int32_implementation_widens_to_the_int64_workload(golden):
    sch = golden(add64, add64_tensorized, _tensorize)
    lib = ts.build(sch.mod, target="c")
    a = np.random.default_rng(0).standard_normal(16).astype("float32")
    b = np.random.default_rng(1).standard_normal(16).astype("float32")
    c = ts.nd.array(np.zeros(16, "float32"))
    lib(ts.nd.array(a), ts.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)


def test_an_int32_workload_keeps_the_implementation_as_written():
    @T.prim_func
    def add32(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("add"):
                vi = T.axis.spatial(16, i)
                C[vi] = A[vi] + B[vi]

    sch = tir.Schedule(add32)
    _tensorize(sch)
    text = sch.mod.script()
    assert "T.int64" not in text
    assert 'T.Cast("int32", i * 2 + j)' in text
