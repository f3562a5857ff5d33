"""tessera.tune: the design space, the database, the runners and ts.build with a database."""

import json
import multiprocessing
import os
import random
import subprocess
import sys
import zlib

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T
from tessera.tune import Database, DesignSpace, LocalRunner, TuningRecord, workload_key
from tessera.tune.runner import Result, Runner, Task

N = 48


@T.prim_func
def matmul(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32")):
    for i, j, k in T.grid(N, N, N):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def scale(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i in range(1000):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(3)


@T.prim_func
def crash(A: T.Buffer((4,), "float32")):
    T.evaluate(T.call_extern("int32", "abort"))


@T.prim_func
def hang(A: T.Buffer((4,), "float32")):
    T.evaluate(T.call_extern("int32", "sleep", 30))


LANES = max(1, ts._core.host_vector_bits() // 32)


def check_matmul(lib):
    rng = np.random.default_rng(0)
    a = rng.random((N, N), dtype="float32")
    b = rng.random((N, N), dtype="float32")
    c = np.zeros((N, N), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def trace_text(sch):
    return json.dumps(sch.trace.as_json())


# ---- the design space ----

def test_space_points_replay_and_compute_the_same():
    space = DesignSpace(matmul, LANES)
    rng = random.Random(0)
    for _ in range(4):
        sch, decisions = space.apply(None, seed=rng.randrange(1, 1000))
        again, same = space.apply(decisions)
        assert same == decisions
        assert trace_text(again) == trace_text(sch)
        check_matmul(ts.build(sch.mod))


def test_space_mutation_changes_one_decision_and_stays_valid():
    space = DesignSpace(matmul, LANES)
    rng = random.Random(1)
    _, decisions = space.apply(None, seed=5)
    for _ in range(6):
        sch, mutated = space.mutate(decisions, rng)
        assert len(mutated) == len(decisions)
        check_matmul(ts.build(sch.mod))


def test_injective_space_vectorizes_and_parallelizes():
    sch, decisions = DesignSpace(scale, LANES).apply(None, seed=3)
    assert len(decisions) == 1 and np.prod(decisions[0]) == 1000
    src = ts.build(sch.mod).get_source()
    a = np.arange(1000, dtype="float32")
    b = np.zeros(1000, "float32")
    ts.build(sch.mod)(a, b)
    np.testing.assert_allclose(b, a * 3)
    assert "omp" in src


# ---- the database ----

def record(key, mean, target="c", error=None):
    return TuningRecord(workload=key, target=target, trace="[]", decisions=[[2, 24]],
                        times=[] if error else [mean, mean], error=error)


def test_database_round_trip(tmp_path):
    path = tmp_path / "t.db"
    with Database(str(path)) as db:
        key = db.commit_workload(matmul)
        assert key == workload_key(matmul) and db.has_workload(matmul)
        for m in (3e-3, 1e-3, 2e-3):
            db.commit_record(record(key, m))
        db.commit_record(record(key, 0, error="build: no"))
        db.commit_record(record(key, 5e-4, target="cuda"))
    with Database(str(path)) as db:
        assert len(db) == 5
        assert db.best(matmul, "c").mean == pytest.approx(1e-3)
        assert db.best(matmul, "llvm").mean == pytest.approx(1e-3)  # the same host target
        assert [r.mean for r in db.top_k(matmul, "c", 2)] == pytest.approx([1e-3, 2e-3])
        failed = [r for r in db.records(matmul, "c") if not r.ok]
        assert len(failed) == 1 and failed[0].error == "build: no"
        assert db.best(scale, "c") is None


def test_workload_key_is_structural():
    from tessera.script import from_source

    assert workload_key(from_source(matmul.script())) == workload_key(matmul)
    assert workload_key(scale) != workload_key(matmul)


def _writer(path, key, n, seed):
    db = Database(path)
    for i in range(n):
        db.commit_record(record(key, (seed * 1000 + i + 1) * 1e-6))
    db.close()


def test_database_concurrent_writers(tmp_path):
    path = str(tmp_path / "c.db")
    with Database(path) as db:
        key = db.commit_workload(matmul)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, key, 25, s)) for s in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Database(path) as db:
        recs = db.records(key)
        assert len(recs) == 100
        assert len({r.id for r in recs}) == 100
        assert db.best(key, "c").mean == pytest.approx(1e-6)


# ---- runners ----

def task_for(func, sch=None):
    from tessera.tir import Schedule

    sch = sch or Schedule(func)
    args = []
    for p in func.params:
        buf = next(b for v, b in func.buffer_map if v.same_as(p))
        args.append((tuple(int(s.value) for s in buf.shape), str(buf.dtype)))
    return Task(script=func.script(), trace=trace_text(sch), target="c", args=args)


def test_local_runner_survives_crashes_hangs_and_bad_builds():
    runner = LocalRunner(n_build=2, timeout=3, number=1, repeat=1, min_repeat_ms=0)
    try:
        bad = task_for(scale)
        bad.trace = json.dumps({"insts": [["get_block", [["name", "nope"], ["func_name", "main"]], ["b0"]]],
                                "decisions": []})
        results = runner.run([task_for(crash), task_for(scale), bad, task_for(hang), task_for(scale)])
        crashed, good, unbuilt, hung, good2 = results
        assert "died" in crashed.error and not crashed.times
        assert good.error is None and len(good.times) == 1 and good.times[0] > 0
        assert unbuilt.error.startswith("build:") and "nope" in unbuilt.error
        assert "timed out" in hung.error
        assert good2.error is None  # tuning goes on after a crash and a hang
    finally:
        runner.close()


def test_local_runner_cpu_timer_and_remeasure():
    with pytest.raises(ValueError, match="num_threads=1"):
        LocalRunner(timer="cpu")
    with pytest.raises(ValueError, match="'wall' or 'cpu'"):
        LocalRunner(timer="cycles")
    runner = LocalRunner(n_build=1, number=2, repeat=2, min_repeat_ms=0, num_threads=1, timer="cpu")
    try:
        good, unbuilt = task_for(scale), task_for(scale)
        unbuilt.trace = json.dumps({"insts": [["get_block", [["name", "nope"], ["func_name", "main"]], ["b0"]]],
                                    "decisions": []})
        (res,) = runner.run([good])
        assert res.error is None and len(res.times) == 2 and all(0 < t < 0.1 for t in res.times)
        again, failed = runner.remeasure([good, unbuilt], rounds=3)
        assert again.error is None and len(again.times) == 3  # one median per round
        assert failed.error.startswith("build:") and not failed.times
    finally:
        runner.close()


def test_tune_finds_a_working_schedule_and_build_reproduces_it(tmp_path):
    db_path = str(tmp_path / "tune.db")
    result = ts.tune(matmul, target="c", trials=6, database=db_path, seed=2, progress=False,
                     runner=LocalRunner(n_build=2, number=1, repeat=2, min_repeat_ms=0),
                     plot=str(tmp_path / "tune.png"))
    assert len(result.records) == 6
    assert result.best_seconds > 0 and os.path.getsize(tmp_path / "tune.png") > 1000
    check_matmul(ts.build(result.mod))
    best = Database(db_path).best(matmul, "c")
    assert best.mean == pytest.approx(result.best_seconds)
    expected = ts.build(result.mod).get_source()
    with ts.tune.apply(db_path):
        lib = ts.build(matmul)
    assert lib.get_source() == expected  # exactly the best record's program
    check_matmul(lib)
    with ts.transform.PassContext(config={"tessera.tune.database": db_path}):
        assert ts.build(matmul).get_source() == expected
    # Without the database: the automatic schedule (which tuning measured first).
    auto = ts.build(ts.autoschedule(matmul, target="c").mod).get_source()
    assert ts.build(matmul).get_source() == auto
    first = Database(db_path).records(matmul)[0]  # measured first: the automatic schedule
    assert ts.build(ts.tune.replay(matmul, first).mod).get_source() == auto
    # A second run continues from the records: it does not measure known points again.
    again = ts.tune(matmul, target="c", trials=4, database=db_path, seed=2, progress=False,
                    runner=LocalRunner(n_build=2, number=1, repeat=1, min_repeat_ms=0), confirm=0)
    decisions = [json.dumps(r.decisions) for r in Database(db_path).records(matmul)]
    assert len(decisions) == 10 and len(set(decisions)) == 10
    assert again.best_seconds <= result.best_seconds * 1.0000001


class ScriptedRunner(Runner):
    """Times made up from the trace text (no build): each candidate has a true time, and the
    first measurement of the third candidate is lucky (a tenth of its true time)."""

    def __init__(self):
        self.calls, self.order = {}, []

    def true_time(self, trace):
        return 1e-3 * (1 + zlib.crc32(trace.encode()) % 1000 / 1000)

    def run(self, tasks):
        out = []
        for t in tasks:
            if t.trace not in self.calls:
                self.order.append(t.trace)
            self.calls[t.trace] = self.calls.get(t.trace, 0) + 1
            lucky = self.calls[t.trace] == 1 and self.order.index(t.trace) == 2
            out.append(Result([self.true_time(t.trace) * (0.1 if lucky else 1.0)] * 2))
        return out


def test_tune_picks_by_remeasurement_not_a_lucky_first_time():
    runner = ScriptedRunner()
    result = ts.tune(matmul, target="c", trials=8, runner=runner, progress=False, seed=4)
    lucky = runner.order[2]
    truth = {tr: runner.true_time(tr) for tr in runner.order}
    assert runner.calls[lucky] > 1 and runner.calls[runner.order[0]] > 1  # the default re-measured
    assert result.best_seconds == pytest.approx(min(truth.values()))
    assert json.dumps(result.schedule.trace.as_json()) == min(truth, key=truth.get)
    best = result.database.best(matmul, "c")
    assert best.mean == pytest.approx(result.best_seconds)
    assert [r for r in result.records if r.trace == lucky][0].mean == pytest.approx(truth[lucky])
    # Without the re-measurement the lucky one-shot time wins.
    plain = ts.tune(matmul, target="c", trials=8, runner=ScriptedRunner(), progress=False, seed=4,
                    confirm=0)
    assert plain.best_seconds == pytest.approx(truth[lucky] * 0.1)


def test_tune_searches_the_space_of_its_target_options():
    # "c -mattr=-avx512f" compiles without AVX-512: the first candidate (the automatic schedule)
    # is the point of that target's space, whatever the host.
    from tessera.tune import RuleSpace

    target = "c -mattr=-avx512f"
    runner = ScriptedRunner()
    ts.tune(matmul, target=target, trials=2, runner=runner, progress=False, seed=1, confirm=0)
    sch, _ = RuleSpace(matmul, target).default()
    assert runner.order[0] == json.dumps(sch.trace.as_json())


def test_tune_errors():
    with pytest.raises(ValueError, match="target 'c' or 'llvm'"):
        ts.tune(matmul, target="cuda", trials=2)
    with pytest.raises(ValueError, match="at least 1"):
        ts.tune(matmul, trials=0)
    with pytest.raises(TypeError, match="space must be a design space"):
        ts.tune(matmul, trials=2, space="rules")

    @T.prim_func
    def with_scalar(A: T.Buffer((4,), "float32"), x: T.float32):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = x

    with pytest.raises(ValueError, match="'x' is a scalar"):
        ts.tune(with_scalar, trials=2, progress=False)
    with pytest.raises(TypeError, match="PrimFunc or an IRModule"):
        ts.tune("matmul", trials=2)


RAY_SCRIPT = """
import sys
import tessera as ts
from tessera.tune import RayRunner
sys.path.insert(0, {here!r})
from test_tune import matmul, check_matmul
runner = RayRunner(number=1, repeat=1, min_repeat_ms=0, init_kwargs={{"num_cpus": 2}})
try:
    result = ts.tune(matmul, target="c", trials=4, runner=runner, progress=False, seed=3)
    check_matmul(ts.build(result.mod))
    print("RAY_OK", sum(r.ok for r in result.records))
finally:
    runner.close()
"""


def test_ray_runner_on_a_local_cluster(tmp_path):
    pytest.importorskip("ray")
    here = os.path.dirname(os.path.abspath(__file__))
    script = tmp_path / "ray_tune.py"
    script.write_text(RAY_SCRIPT.format(here=here))
    env = dict(os.environ)
    parent = os.path.dirname(os.path.dirname(os.path.abspath(ts.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [parent, env.get("PYTHONPATH")]))
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert "RAY_OK 4" in out.stdout, out.stdout[-2000:] + out.stderr[-4000:]


def test_space_tiles_a_convolution():
    from tessera import te

    X = te.placeholder((1, 4, 10, 10), "float32", name="X")
    W = te.placeholder((8, 4, 3, 3), "float32", name="W")
    rc = te.reduce_axis((0, 4), name="rc")
    rh = te.reduce_axis((0, 3), name="rh")
    rw = te.reduce_axis((0, 3), name="rw")
    Y = te.compute((1, 8, 8, 8), lambda n, f, y, x: te.sum(X[n, rc, y + rh, x + rw] * W[f, rc, rh, rw],
                                                           axis=[rc, rh, rw]), name="Y")
    func = te.create_prim_func([X, W, Y])
    x = np.random.rand(1, 4, 10, 10).astype("float32")
    w = np.random.rand(8, 4, 3, 3).astype("float32")
    ref = np.zeros((1, 8, 8, 8), "float32")
    for a in range(3):
        for b in range(3):
            ref += np.einsum("nchw,fc->nfhw", x[:, :, a:a + 8, b:b + 8], w[:, :, a, b])
    space = DesignSpace(func, LANES)
    for seed in (1, 2, 3):
        sch, decisions = space.apply(None, seed=seed)
        assert decisions  # the reduction rule applied
        y = np.zeros((1, 8, 8, 8), "float32")
        ts.build(sch.mod)(x, w, y)
        np.testing.assert_allclose(y, ref, rtol=1e-4)
