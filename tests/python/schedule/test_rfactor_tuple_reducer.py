"""rfactor of a reduction over two buffers at once (argmax / argmin over an (index, value) pair,
a pair of sums): each buffer gets its rfactor buffer, and both blocks update the pair through
one LetStmt per buffer, as TVM writes them."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def argmin_rows(idx: T.Buffer((6, 12), "int32"), val: T.Buffer((6, 12), "float32"),
                out_i: T.Buffer((6,), "int32"), out_v: T.Buffer((6,), "float32")):
    for i, k0, k1 in T.grid(6, 3, 4):
        with T.block("argmin"):
            vi = T.axis.spatial(6, i)
            vk = T.axis.reduce(12, k0 * 4 + k1)
            T.reads(idx[vi, vk], val[vi, vk])
            T.writes(out_i[vi], out_v[vi])
            with T.init():
                out_v[vi] = T.max_value("float32")
                out_i[vi] = -1
            new_i: T.int32 = T.Select(out_v[vi] < val[vi, vk]
                                      or out_v[vi] == val[vi, vk] and out_i[vi] < idx[vi, vk],
                                      out_i[vi], idx[vi, vk])
            new_v: T.float32 = T.Select(out_v[vi] < val[vi, vk], out_v[vi], val[vi, vk])
            out_v[vi] = new_v
            out_i[vi] = new_i


def test_rfactor_argmin_first_index(golden):
    @T.prim_func
    def expected(idx: T.Buffer((6, 12), "int32"), val: T.Buffer((6, 12), "float32"),
                 out_i: T.Buffer((6,), "int32"), out_v: T.Buffer((6,), "float32")):
        out_i_rf = T.alloc_buffer((4, 6), "int32")
        out_v_rf = T.alloc_buffer((4, 6))
        for i, k0, k1 in T.grid(6, 3, 4):
            with T.block("argmin_rf"):
                vk1, vi, vk0 = T.axis.remap("SSR", [k1, i, k0])
                T.reads(idx[vi, vk0 * 4 + vk1], val[vi, vk0 * 4 + vk1])
                T.writes(out_i_rf[vk1, vi], out_v_rf[vk1, vi])
                with T.init():
                    out_i_rf[vk1, vi] = -1
                    out_v_rf[vk1, vi] = T.max_value("float32")
                a: T.int32 = T.Select(
                    out_v_rf[vk1, vi] < val[vi, vk0 * 4 + vk1]
                    or out_v_rf[vk1, vi] == val[vi, vk0 * 4 + vk1]
                    and out_i_rf[vk1, vi] < idx[vi, vk0 * 4 + vk1],
                    out_i_rf[vk1, vi], idx[vi, vk0 * 4 + vk1])
                b: T.float32 = T.Select(out_v_rf[vk1, vi] < val[vi, vk0 * 4 + vk1],
                                        out_v_rf[vk1, vi], val[vi, vk0 * 4 + vk1])
                out_i_rf[vk1, vi] = a
                out_v_rf[vk1, vi] = b
        for i, k1 in T.grid(6, 4):
            with T.block("argmin"):
                vk1, vi = T.axis.remap("RS", [k1, i])
                T.reads(out_i_rf[vk1, vi], out_v_rf[vk1, vi])
                T.writes(out_i[vi], out_v[vi])
                with T.init():
                    out_i[vi] = -1
                    out_v[vi] = T.max_value("float32")
                c: T.int32 = T.Select(
                    out_v[vi] < out_v_rf[vk1, vi]
                    or out_v[vi] == out_v_rf[vk1, vi] and out_i[vi] < out_i_rf[vk1, vi],
                    out_i[vi], out_i_rf[vk1, vi])
                d: T.float32 = T.Select(out_v[vi] < out_v_rf[vk1, vi], out_v[vi], out_v_rf[vk1, vi])
                out_i[vi] = c
                out_v[vi] = d

    def apply(sch):
        rf = sch.rfactor(sch.get_loops(sch.get_block("argmin"))[2], 0)
        assert sch.get(rf).same_as(sch.get(sch.get_block("argmin_rf")))

    sch = golden(argmin_rows, expected, apply)
    lib = ts.build(sch.mod["main"], target="c")
    rng = np.random.default_rng(3)
    val = rng.integers(-3, 4, size=(6, 12)).astype("float32")  # small range: ties
    idx = np.broadcast_to(np.arange(12, dtype="int32"), (6, 12)).copy()
    out_i, out_v = ts.nd.array(np.zeros(6, "int32")), ts.nd.array(np.zeros(6, "float32"))
    lib(ts.nd.array(idx), ts.nd.array(val), out_i, out_v)
    np.testing.assert_array_equal(out_i.numpy(), np.argmin(val, axis=1))
    np.testing.assert_array_equal(out_v.numpy(), val.min(axis=1))


def test_rfactor_pair_of_sums_runs():
    @T.prim_func
    def sums(A: T.Buffer((5, 16), "float32"), S: T.Buffer((5,), "float32"),
             Q: T.Buffer((5,), "float32")):
        for i, k in T.grid(5, 16):
            with T.block("moments"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                    Q[vi] = T.float32(0)
                s_new: T.float32 = S[vi] + A[vi, vk]
                q_new: T.float32 = Q[vi] + A[vi, vk] * A[vi, vk]
                S[vi] = s_new
                Q[vi] = q_new

    sch = tir.Schedule(sums, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("moments"))
    _, ki = sch.split(k, [None, 4])
    sch.rfactor(ki, 1)
    lib = ts.build(sch.mod["main"], target="c")
    a = np.random.uniform(-1, 1, size=(5, 16)).astype("float32")
    s, q = ts.nd.array(np.zeros(5, "float32")), ts.nd.array(np.zeros(5, "float32"))
    lib(ts.nd.array(a), s, q)
    np.testing.assert_allclose(s.numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q.numpy(), (a * a).sum(axis=1), rtol=1e-5, atol=1e-6)


def test_rfactor_tuple_reducer_needs_its_identity(schedule_error):
    @T.prim_func
    def bad_init(idx: T.Buffer((6, 12), "int32"), val: T.Buffer((6, 12), "float32"),
                 out_i: T.Buffer((6,), "int32"), out_v: T.Buffer((6,), "float32")):
        for i, k in T.grid(6, 12):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    out_i[vi] = -1
                    out_v[vi] = T.float32(0)
                new_i: T.int32 = T.Select(out_v[vi] >= val[vi, vk], out_i[vi], idx[vi, vk])
                new_v: T.float32 = T.Select(out_v[vi] >= val[vi, vk], out_v[vi], val[vi, vk])
                out_i[vi] = new_i
                out_v[vi] = new_v

    schedule_error(bad_init, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("argmax"))[1], 0),
                   "rfactor", "is not the identity", "of its argmax update")


def test_rfactor_tuple_reducer_of_an_unknown_combiner(schedule_error):
    @T.prim_func
    def odd(idx: T.Buffer((6, 12), "int32"), val: T.Buffer((6, 12), "float32"),
            out_i: T.Buffer((6,), "int32"), out_v: T.Buffer((6,), "float32")):
        for i, k in T.grid(6, 12):
            with T.block("odd"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    out_i[vi] = -1
                    out_v[vi] = T.min_value("float32")
                new_i: T.int32 = T.Select(out_v[vi] >= val[vi, vk], out_i[vi], idx[vi, vk])
                new_v: T.float32 = T.Select(out_v[vi] >= val[vi, vk], val[vi, vk], out_v[vi])
                out_i[vi] = new_i
                out_v[vi] = new_v

    schedule_error(odd, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("odd"))[1], 0),
                   "rfactor", "is not a known reducer", "argmax / argmin")


def test_rfactor_tuple_reducer_buffers_of_different_shapes(schedule_error):
    @T.prim_func
    def shapes(idx: T.Buffer((6, 12), "int32"), val: T.Buffer((6, 12), "float32"),
               out_i: T.Buffer((7,), "int32"), out_v: T.Buffer((6,), "float32")):
        for i, k in T.grid(6, 12):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    out_i[vi] = -1
                    out_v[vi] = T.min_value("float32")
                new_i: T.int32 = T.Select(out_v[vi] >= val[vi, vk], out_i[vi], idx[vi, vk])
                new_v: T.float32 = T.Select(out_v[vi] >= val[vi, vk], out_v[vi], val[vi, vk])
                out_i[vi] = new_i
                out_v[vi] = new_v

    schedule_error(shapes, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("argmax"))[1], 0),
                   "rfactor", "whose shapes differ")


def test_rfactor_tuple_reducer_folding_a_new_value_is_refused(schedule_error):
    @T.prim_func
    def chained(idx: T.Buffer((6, 12), "int32"), val: T.Buffer((6, 12), "float32"),
                out_i: T.Buffer((6,), "int32"), out_v: T.Buffer((6,), "float32")):
        for i, k in T.grid(6, 12):
            with T.block("pair"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    out_i[vi] = 0
                    out_v[vi] = T.float32(0)
                new_i: T.int32 = out_i[vi] + idx[vi, vk]
                new_v: T.float32 = out_v[vi] + T.Cast("float32", new_i)
                out_i[vi] = new_i
                out_v[vi] = new_v

    schedule_error(chained, lambda sch: sch.rfactor(sch.get_loops(sch.get_block("pair"))[1], 0),
                   "rfactor", "is not a known reducer")
