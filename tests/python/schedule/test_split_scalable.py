"""split by factors of T.vscale() (TVM's SVE schedules): on a target with scalable vectors the
analyzer proves the factors cover the loop by trying each value vscale can take there; the
split keeps a predicate unless disable_predication=True; elsewhere the proof fails with TVM's
warning and the split is refused."""

import pytest

from tessera import arith, tir
from tessera.error import TesseraTypeError
from tessera.ir import Range
from tessera.script import tir as T
from tessera.target import Target

SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+sve"


def fill(n):
    @T.prim_func
    def func(A: T.Buffer((n,), "float32")):
        for i in T.serial(n):
            with T.block("A"):
                v = T.axis.spatial(n, i)
                A[v] = T.float32(1)

    return func


def test_scalable_split_keeps_a_predicate(golden):
    with Target(SVE):
        outer = arith.Analyzer().simplify(T.ceildiv(100, 8 * T.vscale()))

        @T.prim_func
        def expected(A: T.Buffer((100,), "float32")):
            for i_0, i_1 in T.grid(outer, T.vscale() * 8):
                with T.block("A"):
                    v = T.axis.spatial(100, i_0 * (T.vscale() * 8) + i_1)
                    T.where(i_0 * (T.vscale() * 8) + i_1 < 100)
                    A[v] = T.float32(1)

        def apply(sch):
            (i,) = sch.get_loops(sch.get_block("A"))
            sch.split(i, factors=[outer, 8 * T.vscale()])

        golden(fill(100), expected, apply)


def test_scalable_split_without_predication(golden):
    with Target(SVE):
        outer = arith.Analyzer().simplify(T.ceildiv(64, 4 * T.vscale()))

        @T.prim_func
        def expected(A: T.Buffer((64,), "float32")):
            for i_0, i_1 in T.grid(outer, T.vscale() * 4):
                with T.block("A"):
                    v = T.axis.spatial(64, i_0 * (T.vscale() * 4) + i_1)
                    A[v] = T.float32(1)

        def apply(sch):
            (i,) = sch.get_loops(sch.get_block("A"))
            sch.split(i, factors=[outer, 4 * T.vscale()], disable_predication=True)

        golden(fill(64), expected, apply)


def test_scalable_factors_need_a_scalable_target(schedule_error, capfd):
    def apply(sch):
        (i,) = sch.get_loops(sch.get_block("A"))
        sch.split(i, factors=[T.ceildiv(64, 4 * T.vscale()), 4 * T.vscale()])

    schedule_error(fill(64), apply, "split",
                   "the split factors may not cover the loop tir.For#0")
    err = capfd.readouterr().err
    assert ("Warning: a comparison over T.vscale() was not checked against the possible vscale "
            "values: they are known only for a VLA target (SVE), and the target is None") in err


def test_analyzer_proves_vscale_conditions_only_on_scalable_targets(capfd):
    vscale = T.vscale()
    cond = T.ceildiv(100, 8 * vscale) * (8 * vscale) >= 100
    ana = arith.Analyzer()
    with Target(SVE):
        assert ana.can_prove(cond)
        assert not ana.can_prove(vscale * 4 >= 40)  # false for vscale < 10
    with Target("llvm"):
        assert not ana.can_prove(cond)
    assert "and the target is llvm" in capfd.readouterr().err


def test_analyzer_basics():
    i = tir.Var("i", "int32")
    ana = arith.Analyzer()
    ana.bind(i, Range(0, 16))
    assert ana.can_prove(i < 16) and not ana.can_prove(i < 15)
    assert ana.const_int_bound(i * 2 + 1) == (1, 31)
    assert ana.modular_set(i * 4 + 2) == (4, 2)
    assert str(ana.simplify(i * 2 + i)) == "i * 3"
    assert ana.can_prove_equal((i * 8) // 4, i * 2)
    with pytest.raises(TesseraTypeError, match="expected a Var"):
        ana.bind("i", 3)
