"""Tuning: search the design space of a workload by measuring candidates on the machine.

>>> result = tessera.tune(func, target="c", trials=64, database="tuning.db")
>>> result.best_seconds, print(result.trace)
>>> with tessera.tune.apply("tuning.db"):
...     lib = tessera.build(func)          # the best record's schedule

The search is evolutionary, guided by a cost model (xgboost) trained online on the features of
the measured candidates' lowered programs: each round mutates the fastest candidates (one
sampling decision drawn again), adds random points of the space, ranks them with the model and
measures the most promising, plus a few random ones. Records go to a SQLite database; runners
measure locally (:class:`LocalRunner`) or on a Ray cluster (:class:`RayRunner`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import sys
import threading
import time
import types
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _core
from .cost_model import XGBModel
from .database import Database, TuningRecord, workload_key
from .features import features
from .runner import LocalRunner, RayRunner, Result, Runner, Task
from .space import DesignSpace, RuleSpace

__all__ = ["Database", "DesignSpace", "RuleSpace", "LocalRunner", "RayRunner", "Runner", "TuneResult",
           "TuningRecord", "apply", "tune", "workload_key"]


@dataclasses.dataclass
class TuneResult:
    """What tuning found: the best schedule (a tir.Schedule, replayable and editable), its
    measured seconds per run, and every trial in order."""

    schedule: Any
    best_seconds: float
    records: List[TuningRecord]
    database: Database
    wall_seconds: float
    history: List[float]

    @property
    def trace(self) -> Any:
        return self.schedule.trace

    @property
    def mod(self) -> Any:
        return self.schedule.mod

    def plot(self, path: str) -> str:
        """Save the best time so far against the trial number (matplotlib)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        best, ys = float("inf"), []
        for s in self.history:
            best = min(best, s) if s == s else best
            ys.append(best * 1e3 if best != float("inf") else float("nan"))
        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.plot(range(1, len(ys) + 1), ys, drawstyle="steps-post")
        ax.set_xlabel("trial")
        ax.set_ylabel("best time so far (ms)")
        ax.set_title("tessera.tune")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path

    def __repr__(self) -> str:
        ok = sum(1 for r in self.records if r.ok)
        return (f"TuneResult(best={self.best_seconds * 1e3:.4f} ms, trials={len(self.records)}, "
                f"ok={ok}, wall={self.wall_seconds:.1f} s)")


def _single_func(func_or_mod: Any) -> Any:
    if isinstance(func_or_mod, _core.PrimFunc):
        return func_or_mod
    if isinstance(func_or_mod, _core.IRModule):
        funcs = [f for _, f in func_or_mod.functions if isinstance(f, _core.PrimFunc)]
        if len(funcs) != 1:
            raise ValueError(f"tessera.tune tunes one function at a time; this module has {len(funcs)}: "
                             "tune each PrimFunc (mod['name']) separately")
        return funcs[0]
    raise TypeError(f"tessera.tune expects a PrimFunc or an IRModule, got {type(func_or_mod).__name__}")


def _arg_specs(func: Any) -> List[Tuple[Tuple[int, ...], str]]:
    specs = []
    for p in func.params:
        buf = next((b for v, b in func.buffer_map if v.same_as(p)), None)
        if buf is None:
            raise ValueError(f"tessera.tune measures functions whose parameters are all buffers; "
                             f"'{p.name}' is a scalar")
        shape = []
        for s in buf.shape:
            if not isinstance(s, _core.IntImm):
                raise ValueError(f"tessera.tune needs static shapes; buffer '{buf.name}' has "
                                 f"dimension {s}")
            shape.append(int(s.value))
        specs.append((tuple(shape), str(buf.dtype)))
    return specs


def _target_text(target: Any) -> str:
    return " ".join(str(getattr(target, "kind", target) or "c").split())


def _target_kind(tname: str) -> str:
    """The kind of a target string ("llvm -mcpu=skylake" is "llvm"), as the C++ Target parses it."""
    from .. import _core

    return str(_core.Target(tname).kind)


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="tessera.tune", unit="trial", file=sys.stderr, leave=True)


def tune(func_or_mod: Any, target: Any = "c", trials: int = 64,
         database: Union[None, str, Database] = None, runner: Optional[Runner] = None,
         batch_size: Optional[int] = None, seed: int = 0, progress: bool = True,
         plot: Optional[str] = None, num_threads: Optional[int] = None,
         parallel: bool = True, space: Optional[Any] = None, confirm: int = 4,
         confirm_rounds: int = 5) -> TuneResult:
    """Tune one function for a host target with at most ``trials`` measurements.

    ``database``: a SQLite path or a :class:`Database` (default: one in memory); records of
    earlier runs of the same workload seed the search and count toward the best result.
    ``runner``: :class:`LocalRunner` (default) or :class:`RayRunner`. ``num_threads`` limits the
    measured code's threads; ``parallel=False`` searches single-threaded schedules. ``plot``
    saves the best time against trials. Progress (trials, best time, ETA) shows with tqdm.
    ``space``: the design space searched, by default :class:`RuleSpace` (the automatic
    schedule's rules with their choices sampled; its first point measured is the automatic
    schedule itself); :class:`DesignSpace` is the tuner's own smaller space.
    ``confirm``: at the end, the ``confirm`` fastest records and the automatic schedule are
    measured again, ``confirm_rounds`` rounds taking them in turn, and the pick is by that
    re-measurement (a one-shot measurement that was lucky does not win; 0: no re-measurement).
    The re-measured times replace the records' times in the database, so ``ts.build`` with
    the database applies the same pick."""
    tname = _target_text(target)
    kind = _target_kind(tname)
    if kind not in ("c", "llvm"):
        raise ValueError(f"tessera.tune measures on this machine's CPU: target 'c' or 'llvm', got '{tname}'")
    if trials < 1:
        raise ValueError("trials must be at least 1")
    func = _single_func(func_or_mod)
    db = database if isinstance(database, Database) else Database(database or ":memory:")
    key = db.commit_workload(func)
    script = func.script()
    specs = _arg_specs(func)
    if space is None:
        # the target's own facts: "c -mattr=-avx512f" searches the AVX2 space it compiles for
        space = RuleSpace(func, tname, parallel=parallel)
    elif not all(callable(getattr(space, m, None)) for m in ("apply", "mutate")):
        raise TypeError(f"space must be a design space with apply() and mutate() (RuleSpace, "
                        f"DesignSpace), got {type(space).__name__}")
    own_runner = runner is None
    runner = runner or LocalRunner(num_threads=num_threads)
    model = XGBModel(seed=seed)
    rng = random.Random(seed)
    batch = batch_size or max(2, min(16, trials // 4 or 1))
    start = time.perf_counter()

    seen: Dict[str, Optional[float]] = {}
    measured: List[Tuple[List[Any], float]] = []
    history: List[float] = []
    new_records: List[TuningRecord] = []
    for rec in db.records(key, _record_target(tname)):  # earlier runs: known points, and training data
        dkey = repr(rec.decisions)
        seen[dkey] = rec.mean
        if rec.ok and rec.decisions != ["auto"]:
            measured.append((rec.decisions, rec.mean or 0.0))

    def lowered_features(sch: Any, decisions: List[Any]) -> List[float]:
        from .. import driver

        mod = driver.lower(sch.mod, target=kind, stage="loop")
        f = [f for _, f in mod.functions][0]
        return features(f, decisions)

    def candidates(n: int) -> List[Tuple[Any, List[Any]]]:
        pool: Dict[str, Tuple[Any, List[Any]]] = {}
        elites = sorted(measured, key=lambda m: m[1])[:8]
        tries = 0
        while len(pool) < n and tries < n * 6:
            tries += 1
            try:
                if elites and rng.random() < 0.7:
                    sch, dec = space.mutate(rng.choice(elites)[0], rng)
                else:
                    sch, dec = space.apply(None, seed=rng.randrange(1, 2**30))
            except Exception:
                continue
            dkey = repr(dec)
            if dkey in seen or dkey in pool:
                continue
            pool[dkey] = (sch, dec)
        return list(pool.values())

    # The automatic schedule is the first candidate: tuning never ends slower than it.
    auto_sch, auto_dec = _default_point(space, func, tname, parallel)
    default_rec: Optional[TuningRecord] = None
    if auto_sch is not None and repr(auto_dec) not in seen and (trials > 1 or not seen):
        task = Task(script=script, trace=_trace_text(auto_sch), target=tname, args=specs)
        res = runner.run([task])[0]
        rec = TuningRecord(workload=key, target=_record_target(tname), trace=task.trace,
                           decisions=auto_dec, times=list(res.times), error=res.error)
        db.commit_record(rec)
        new_records.append(rec)
        default_rec = rec
        seen[repr(auto_dec)] = rec.mean
        history.append(rec.mean if rec.ok and rec.mean is not None else float("nan"))
        if rec.ok and rec.mean is not None and auto_dec != ["auto"]:
            measured.append((auto_dec, rec.mean))
        trials -= 1

    neighbours = getattr(space, "neighbours", None)
    sweep: List[Tuple[Any, List[Any]]] = []
    swept: set = set()
    sweep_budget = trials // 2
    bar = _progress(trials, progress)
    best = min([m[1] for m in measured] + [r.mean for r in new_records if r.ok and r.mean],
               default=float("inf"))
    done = 0
    try:
        while done < trials:
            want = min(batch, trials - done)
            # First the neighbours of the fastest point (each choice set to each other
            # candidate), while they take at most half the trials: a one-choice change of the
            # automatic schedule (loop order, another register tile) is often the win, and
            # random mutations find it only by chance.
            if neighbours is not None and measured and sweep_budget > 0 and not sweep:
                top_dec = min(measured, key=lambda m: m[1])[0]
                if repr(top_dec) not in swept:
                    swept.add(repr(top_dec))
                    sweep.extend(p for p in neighbours(top_dec) if repr(p[1]) not in seen)
            if sweep and sweep_budget > 0:
                pool = []
                while sweep and len(pool) < min(want, sweep_budget):
                    p = sweep.pop(0)
                    if repr(p[1]) not in seen and all(repr(p[1]) != repr(q[1]) for q in pool):
                        pool.append(p)
                sweep_budget -= len(pool)
            else:
                pool = []
            if pool:
                feats = [lowered_features(s, d) for s, d in pool]
                chosen = list(range(len(pool)))
            else:
                pool = candidates(want * (6 if model.trained else 1))
                if not pool:
                    break
                feats = [lowered_features(s, d) for s, d in pool]
                scores = model.predict(feats)
                order = sorted(range(len(pool)), key=lambda i: -scores[i])
                n_explore = max(1, want // 5) if model.trained else 0
                chosen = order[:want - n_explore]
                rest = order[want - n_explore:]
                rng.shuffle(rest)
                chosen += rest[:n_explore]
            tasks = [Task(script=script, trace=_trace_text(pool[i][0]), target=tname, args=specs)
                     for i in chosen]
            results: List[Result] = runner.run(tasks)
            batch_feats, batch_secs = [], []
            for i, task, res in zip(chosen, tasks, results):
                dec = pool[i][1]
                rec = TuningRecord(workload=key, target=_record_target(tname), trace=task.trace,
                                   decisions=dec, times=list(res.times), error=res.error)
                db.commit_record(rec)
                new_records.append(rec)
                seen[repr(dec)] = rec.mean
                secs = rec.mean if rec.ok else None
                history.append(secs if secs is not None else float("nan"))
                if secs is not None:
                    measured.append((dec, secs))
                    best = min(best, secs)
                batch_feats.append(feats[i])
                batch_secs.append(secs)
            model.update(batch_feats, batch_secs)
            done += len(chosen)
            if bar is not None:
                bar.update(len(chosen))
                if best != float("inf"):
                    bar.set_postfix_str(f"best {best * 1e3:.3f} ms")
        if confirm > 0:
            if default_rec is None and auto_sch is not None:  # measured by an earlier run
                default_rec = next((r for r in reversed(db.records(key, _record_target(tname)))
                                    if r.ok and r.decisions == auto_dec), None)
            _confirm_best(runner, db, key, tname, script, specs, confirm, confirm_rounds,
                          [default_rec] if default_rec is not None and default_rec.ok else [])
    finally:
        if bar is not None:
            bar.close()
        if own_runner:
            runner.close()

    if confirm > 0:  # the re-measured times
        fresh = {r.id: r for r in db.records(key, _record_target(tname))}
        new_records = [fresh.get(r.id, r) for r in new_records]
    top = db.best(key, _record_target(tname))
    if top is None:
        errors = [r.error for r in new_records if r.error][:3]
        raise RuntimeError("tessera.tune: no candidate built and ran; first errors:\n" + "\n".join(errors))
    schedule = replay(func, top)
    result = TuneResult(schedule, top.mean or 0.0, new_records, db, time.perf_counter() - start, history)
    if plot:
        result.plot(plot)
    return result


def _confirm_best(runner: Runner, db: Database, key: str, tname: str, script: str,
                  specs: List[Tuple[Tuple[int, ...], str]], top: int, rounds: int,
                  extra: List[TuningRecord]) -> None:
    """Measure the ``top`` fastest records and ``extra`` again (``rounds`` interleaved rounds)
    and store the re-measured times; again while the fastest record is one not re-measured
    (its time came from one measurement only), at most a few times."""
    target = _record_target(tname)
    confirmed: set = set()
    todo = list(extra) + db.top_k(key, target, top)
    for _ in range(4):
        unique: Dict[int, TuningRecord] = {}
        for r in todo:
            if r.id is not None and r.id not in confirmed:
                unique.setdefault(r.id, r)
        if not unique:
            return
        recs = list(unique.values())
        tasks = [Task(script=script, trace=r.trace, target=tname, args=specs) for r in recs]
        for r, res in zip(recs, runner.remeasure(tasks, rounds)):
            confirmed.add(r.id)
            db.update_times(r, res.times if not res.error else [], res.error)
        best = db.best(key, target)
        if best is None or best.id in confirmed:
            return
        todo = db.top_k(key, target, max(1, top // 2))


def _default_point(space: Any, func: Any, kind: str, parallel: bool) -> Tuple[Any, List[Any]]:
    """The automatic schedule as a point of ``space`` (its decisions), or, for a space that
    does not contain it, the automatic schedule with the decision list ["auto"]."""
    try:
        if hasattr(space, "default"):
            return space.default()
        if parallel:
            from ..autoschedule import autoschedule

            return autoschedule(func, target=kind), ["auto"]
    except Exception:  # a function the rules do not cover: nothing to seed with
        pass
    return None, []


def _trace_text(sch: Any) -> str:
    import json

    return json.dumps(sch.trace.as_json())


def _record_target(tname: str) -> str:
    from .database import _target_key

    return _target_key(tname)


def replay(func: Any, record: TuningRecord) -> Any:
    """A tir.Schedule of ``func`` with ``record``'s trace applied."""
    from ..tir.schedule import Schedule
    from ..tir.schedule.trace import Trace

    sch = Schedule(func)
    Trace.apply_json_to_schedule(record.trace, sch)
    return sch


# ---- applying a database to ts.build ----

_state = threading.local()


def _stack() -> List[Database]:
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


@contextlib.contextmanager
def apply(database: Union[str, Database]) -> Iterator[Database]:
    """Within the block, ``ts.build`` schedules every function that has a record in
    ``database`` with its best record (for the build's target); others build as they are."""
    db = database if isinstance(database, Database) else Database(database)
    _stack().append(db)
    try:
        yield db
    finally:
        _stack().pop()


def current_database() -> Optional[Database]:
    """The database of the innermost ``apply`` block, else the PassContext's
    ``tessera.tune.database`` (a path), else None."""
    if _stack():
        return _stack()[-1]
    from ..transform import PassContext

    path = PassContext.current().config.get("tessera.tune.database")
    if path:
        db = _path_cache.get(str(path))
        if db is None:
            db = _path_cache[str(path)] = Database(str(path))
        return db
    return None


_path_cache: Dict[str, Database] = {}


def apply_best(mod: Any, target: Any) -> Any:
    """``mod`` with each function that has a record in the current database replaced by its
    best schedule (the unchanged ``mod`` when there is no database or no record)."""
    db = current_database()
    if db is None:
        return mod
    tname = _record_target(_target_text(target))
    if isinstance(mod, _core.PrimFunc):
        rec = db.best(mod, tname)
        if rec is None:
            return mod
        scheduled = replay(mod, rec).mod
        func = [f for _, f in scheduled.functions][0]
        for k in ("global_symbol",):
            if k in mod.attrs:
                func = func.with_attr(k, mod.attrs[k])
        return func
    if isinstance(mod, _core.IRModule):
        items, changed = [], False
        for gv, f in mod.functions:
            new = apply_best(f, target) if isinstance(f, _core.PrimFunc) else f
            changed = changed or new is not f
            items.append((gv, new))
        return _core.IRModule(items, mod.attrs) if changed else mod
    return mod


class _CallableModule(types.ModuleType):
    """``tessera.tune(...)`` calls :func:`tune`; ``tessera.tune.apply`` etc. are attributes."""

    def __call__(self, *args: Any, **kwargs: Any) -> TuneResult:
        return tune(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
