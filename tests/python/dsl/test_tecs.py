"""The execution model: the kernel runs on the 4 TECs of a core; get_local_id, get_local_size,
tec_range and barrier; early return ends one TEC; the launcher's TEC pool."""

import threading

import numpy as np

from tessera.dsl import script as S

from _util import build, rand

N = 133  # the acceptance kernel: 133 int32 split across 4 TECs, tail handled with tail_mask


@S.prim_func
def vector_add(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"),
               n: S.i32):
    tid = S.get_local_id()
    tecs = S.get_local_size()
    per_tec = (n + tecs - 1) // tecs
    start = tid * per_tec
    end = start + per_tec
    if end > n:
        end = n
    i = start
    while i < end:
        m = S.tail_mask(end - i, 8)
        va = S.vload(a + i, mask=m)
        vb = S.vload(b + i, mask=m)
        S.vstore(va + vb, c + i, mask=m)
        i += 8


def test_spmd_vector_add_of_133_with_tail_masks():
    a = rand(N, "int32", seed=51)
    b = rand(N, "int32", seed=52)
    c = np.zeros(N + 8, "int32")
    ex = build(vector_add)
    ex(a, b, c, N)
    np.testing.assert_array_equal(c[:N], (a.astype("int64") + b).astype("int32"))
    assert not c[N:].any()  # the masked tail wrote nothing past n
    assert "__vtail_mask(" in ex.c_code and "get_local_id(0)" in ex.c_code


def test_local_id_size_and_tec_range():
    @S.prim_func
    def k(out: S.ptr("int32", "global")):
        tid = S.get_local_id()
        out[tid] = tid * 10 + S.get_local_size()
        for t in S.tec_range(1, 3):          # TECs 1 and 2 only
            out[4 + t] = 100 + t
        for t in S.tec_range(4):
            out[8 + t] = t

    out = np.full(12, -1, "int32")
    ex = build(k)
    ex(out)
    assert out.tolist() == [4, 14, 24, 34, -1, 101, 102, -1, 0, 1, 2, 3]
    assert "int t = get_local_id(0);" in ex.c_code


def test_barrier_separates_two_phases_over_shared_memory():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        tid = S.get_local_id()
        partial = S.alloc_buffer(4 * 8, "int32", scope="shared")
        # Phase 1: each TEC squares its quarter into shared memory.
        va = S.vload(a + tid * 8)
        S.vstore(va * va, partial.addr_of(tid * 8))
        S.barrier()
        # Phase 2: each TEC reads the quarter its neighbour wrote.
        other = (tid + 1) % 4
        S.vstore(S.vload(partial.addr_of(other * 8)) + tid, out + tid * 8)

    a = np.arange(32, dtype="int32") - 10
    out = np.zeros(32, "int32")
    ex = build(k)
    for _ in range(5):
        out[:] = 0
        ex(a, out)
        want = np.concatenate([(a[((t + 1) % 4) * 8:][:8] ** 2) + t for t in range(4)])
        np.testing.assert_array_equal(out, want)


def test_early_return_ends_one_tec_only():
    @S.prim_func
    def k(out: S.ptr("int32", "global")):
        tid = S.get_local_id()
        if tid == 2:
            return
        S.barrier()                 # TEC 2 has returned: the barrier does not wait for it
        out[tid] = tid + 1

    out = np.zeros(4, "int32")
    build(k)(out)
    assert out.tolist() == [1, 2, 0, 4]


def test_concurrent_launches_of_one_kernel_are_serialised():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        s = S.alloc_buffer(4, "int32", scope="shared")
        tid = S.get_local_id()
        s[tid] = a[tid]
        S.barrier()
        out[tid] = s[0] + s[1] + s[2] + s[3]

    ex = build(k)
    errors = []

    def run(seed):
        a = np.full(4, seed, "int32")
        out = np.zeros(4, "int32")
        for _ in range(50):
            ex(a, out)
            if out.tolist() != [4 * seed] * 4:
                errors.append((seed, out.tolist()))

    threads = [threading.Thread(target=run, args=(s,)) for s in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
