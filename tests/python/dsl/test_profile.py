"""Executor.profile and S.perf_tick_begin/end: the generated code reads the host's monotonic
clock at each marker, and the executor reports the ticks per custom id and TEC."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S


@S.prim_func
def _kernel(a: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    tid = S.get_local_id()
    S.perf_tick_begin(3)
    acc = 0
    for i in range(n):
        acc += a[i % 8] * i
    c[tid] = acc
    S.perf_tick_end(3)
    for _ in range(2):
        S.perf_tick_begin(4)
        S.perf_tick_end(4)
    S.perf_tick_end(5)  # no begin: dropped


def test_profile_reports_ticks_per_id_and_tec():
    ex = BuildManager().build(_kernel)
    assert "__perf_tick_begin(3)" in ex.c_code and "__perf_tick_end(3)" in ex.c_code
    a = np.arange(8, dtype="int32")
    c = np.zeros(4, "int32")
    total_small = ex.profile(a, c, 4)
    small = ex.perf_records[3]["ticks"]
    assert list(c) == [sum(a[i % 8] * i for i in range(4))] * 4  # the kernel still computes
    total = ex.profile(a, c, 3_000_000)
    rec = ex.perf_records
    assert set(rec) == {3, 4}
    assert rec[3]["count"] == [1, 1, 1, 1] and rec[4]["count"] == [2, 2, 2, 2]
    assert ex.perf_dropped == 4  # perf_tick_end(5) on every TEC
    # The long loop takes measurably longer than the short one, and no more than the whole call.
    assert min(rec[3]["ticks"]) > 10 * max(small)
    assert max(rec[3]["ticks"]) <= total
    assert total > 0 and total_small > 0
    # Records start afresh at each profile call; a plain call leaves them alone.
    ex(a, c, 4)
    assert ex.profile(a, c, 4) > 0 and ex.perf_records[3]["count"] == [1, 1, 1, 1]


def test_has_perf_record_tick():
    from tessera.dsl.analysis import has_perf_record_tick

    @S.prim_func
    def plain(a: S.ptr("int32", "global")):
        a[0] = 1

    assert has_perf_record_tick(BuildManager().lower(_kernel))
    assert not has_perf_record_tick(BuildManager().lower(plain))
    with pytest.raises(TypeError, match="IRModule or a PrimFunc"):
        has_perf_record_tick("not a module")
