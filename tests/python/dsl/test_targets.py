"""Targets: every target of the reference's table builds and runs, with its core count and memory
sizes; X1 is refused with the supported targets named; an unknown name lists the known ones."""

import numpy as np
import pytest

from tessera import _core
from tessera.dsl import BuildManager, script as S

TABLE = {  # name: (cores, lsram per TEC, shared per core)
    "X2_1204": (1, 32, 256), "X2_1204MP3": (3, 32, 256),
    "X3P_1304": (1, 32, 128), "X3S_1304": (1, 32, 128),
    "X3P_1304MP2": (2, 32, 128), "X3S_1304MP2": (2, 32, 128),
    "X3P_1304MP4": (4, 32, 128), "X3S_1304MP4": (4, 32, 128),
}


@S.prim_func
def add_tid(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    for t in S.tec_range(4):
        S.vstore(S.vload(a + t * 8) + t, out + t * 8)


@pytest.mark.parametrize("name", list(TABLE))
def test_every_target_builds_and_runs(name):
    bm = BuildManager(target=name)
    cores, lsram, shared = TABLE[name]
    t = bm.target
    assert (t.name, t.cores, t.tecs_per_core) == (name, cores, 4)
    assert t.lsram_bytes_per_tec == lsram * 1024 and t.shared_bytes_per_core == shared * 1024
    assert t.is_x3 == name.startswith("X3")
    a = np.arange(32, dtype="int32")
    out = np.zeros(32, "int32")
    bm.build(add_tid)(a, out)
    np.testing.assert_array_equal(out, a + np.repeat(np.arange(4), 8))


def test_default_target_and_x1():
    assert BuildManager().target.name == "X2_1204"
    x1 = next(t for t in _core.dsl_targets() if t.name == "X1_1204")
    assert x1.shared_bytes_per_core == 2 * 512 * 1024
    with pytest.raises(ValueError) as info:
        BuildManager(target="X1_1204")
    assert isinstance(info.value, AssertionError)  # the exception Compass raises
    message = str(info.value)
    assert "the DSL does not support X1 targets" in message
    for name in TABLE:
        assert name in message


def test_unknown_target_lists_the_known_ones():
    with pytest.raises(ValueError, match='unknown target "X9_9999"; known targets: X2_1204, X2_1204MP3') as info:
        BuildManager(target="X9_9999")
    assert not isinstance(info.value, AssertionError)
