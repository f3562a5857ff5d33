"""Runners: build candidates and measure them, in local processes or on a Ray cluster.

A candidate travels as text (the workload's TVMScript and the trace's JSON), so a worker in
another process, or on another machine, rebuilds exactly the same program. A candidate that
fails to build, crashes its process or runs past the timeout comes back as an error; tuning
goes on.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import subprocess
import sys
import threading
import time
import traceback
from typing import Any, Dict, List, Optional, Sequence, Tuple


@dataclasses.dataclass
class Task:
    """What a worker needs to build and time one candidate."""

    script: str                     # the workload as TVMScript
    trace: str                      # the schedule as trace JSON
    target: str
    args: List[Tuple[Tuple[int, ...], str]]   # (shape, dtype) of each parameter
    number: int = 3
    repeat: int = 3
    min_repeat_ms: int = 20
    num_threads: Optional[int] = None
    timer: str = "wall"             # "cpu": the measuring thread's CPU time (one-thread code)


@dataclasses.dataclass
class Result:
    times: List[float]
    error: Optional[str] = None
    build_seconds: float = 0.0


def _scheduled_module(task: Task) -> Any:
    from ..script import from_source
    from ..tir.schedule import Schedule
    from ..tir.schedule.trace import Trace

    func = from_source(task.script)
    sch = Schedule(func)
    Trace.apply_json_to_schedule(task.trace, sch)
    return sch.mod


def build_task(task: Task) -> Tuple[Optional[str], Optional[str], float]:
    """Build a candidate; returns (library path in the build cache, error, seconds)."""
    start = time.perf_counter()
    try:
        from .. import driver

        lib = driver.build(_scheduled_module(task), target=task.target)
        return lib.lib_path, None, time.perf_counter() - start
    except Exception as e:  # a candidate that does not build is a result, not a crash
        return None, f"build: {type(e).__name__}: {e}", time.perf_counter() - start


def _arguments(task: Task) -> List[Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    out = []
    for shape, dtype in task.args:
        if dtype.startswith(("int", "uint")):
            out.append(rng.integers(0, 8, size=shape).astype(dtype))
        else:
            out.append(rng.random(size=shape).astype(dtype))
    return out


def measure_library(path: str, task: Task) -> List[float]:
    """Seconds per run of the library's entry function (warm-up run discarded)."""
    from ..runtime import cpu, load_module

    lib = load_module(path)
    args = _arguments(task)
    if task.timer == "cpu":
        # Thread CPU time, the least of `number` calls per repeat: on a shared machine the
        # time this thread ran, not the time it waited (for code that runs on one thread).
        fn = lib[lib.entry_name]
        fn(*args)
        times = []
        for _ in range(task.repeat):
            best = float("inf")
            for _ in range(max(1, task.number)):
                t0 = time.thread_time()
                fn(*args)
                best = min(best, time.thread_time() - t0)
            times.append(best)
        return times
    timer = lib.time_evaluator(lib.entry_name, cpu(0), number=task.number, repeat=task.repeat,
                               min_repeat_ms=task.min_repeat_ms)
    return list(timer(*args).results)


def build_and_measure(task: Task) -> Result:
    """Both steps in one process (what a Ray worker runs)."""
    if task.num_threads:
        os.environ["OMP_NUM_THREADS"] = str(task.num_threads)
    path, error, seconds = build_task(task)
    if error or path is None:
        return Result([], error, seconds)
    try:
        return Result(measure_library(path, task), None, seconds)
    except Exception as e:
        return Result([], f"run: {type(e).__name__}: {e}", seconds)


class _Worker:
    """One ``python -m tessera.tune.worker`` process and its pipes."""

    def __init__(self, env: Dict[str, str], pin_core: Optional[int] = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tessera.tune.worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        if pin_core is not None and hasattr(os, "sched_setaffinity"):
            try:
                os.sched_setaffinity(self.proc.pid, {pin_core})
            except OSError:
                pass

    def request(self, req: dict, timeout: Optional[float]) -> Optional[dict]:
        """The reply, or None when the process died or ran past ``timeout`` (then it is killed)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            return None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.kill()
            return None
        line = self.proc.stdout.readline()
        if not line:
            self.kill()
            return None
        return json.loads(line)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


class Runner:
    """Builds and measures a batch of tasks; subclasses decide where."""

    def run(self, tasks: Sequence[Task]) -> List[Result]:
        raise NotImplementedError

    def remeasure(self, tasks: Sequence[Task], rounds: int) -> List[Result]:
        """Measure each task ``rounds`` times, in rounds that take the tasks in turn (load that
        comes and goes hits them alike). A result's times are its rounds' medians; a task that
        fails in any round is a failure. This default rebuilds each round through :meth:`run`."""
        per: List[List[float]] = [[] for _ in tasks]
        errors: List[Optional[str]] = [None] * len(tasks)
        for _ in range(max(1, rounds)):
            for i, res in enumerate(self.run(tasks)):
                if res.error or not res.times:
                    errors[i] = errors[i] or res.error or "no times"
                else:
                    per[i].append(_median(res.times))
        return [Result([] if e else p, e) for p, e in zip(per, errors)]

    def close(self) -> None:
        pass

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class LocalRunner(Runner):
    """Builds in ``n_build`` parallel worker processes and measures one candidate at a time in
    another (pinned to one core when ``pin_core`` is given), so that a candidate that crashes or
    hangs costs its own result, not the tuning run.

    ``timeout`` bounds each build and each measurement (seconds); ``num_threads`` sets
    OMP_NUM_THREADS for the measured code (None: all cores). ``timer="cpu"`` measures the
    measuring thread's CPU time (one-thread code on a shared machine; needs num_threads=1)."""

    def __init__(self, n_build: Optional[int] = None, timeout: float = 30.0, number: int = 3,
                 repeat: int = 3, min_repeat_ms: int = 20, num_threads: Optional[int] = None,
                 pin_core: Optional[int] = None, timer: str = "wall") -> None:
        if timer not in ("wall", "cpu"):
            raise ValueError(f"LocalRunner: timer is 'wall' or 'cpu', got {timer!r}")
        if timer == "cpu" and num_threads != 1:
            raise ValueError("LocalRunner: timer='cpu' times one thread; give num_threads=1")
        self.timer = timer
        self.n_build = n_build or max(1, os.cpu_count() or 1)
        self.timeout = timeout
        self.number, self.repeat, self.min_repeat_ms = number, repeat, min_repeat_ms
        self.num_threads = num_threads
        self.pin_core = pin_core
        self._builders: List[Optional[_Worker]] = [None] * self.n_build
        self._measurer: Optional[_Worker] = None
        import tessera

        env = dict(os.environ)
        parent = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [parent, env.get("PYTHONPATH")]))
        self._env = env
        self._measure_env = dict(env)
        if num_threads:
            self._measure_env["OMP_NUM_THREADS"] = str(num_threads)

    def _build_one(self, slot: int, task: Task) -> Tuple[Optional[str], Optional[str], float]:
        w = self._builders[slot]
        if w is None or not w.alive():
            w = self._builders[slot] = _Worker(self._env)
        start = time.perf_counter()
        reply = w.request({"op": "build", "task": dataclasses.asdict(task)}, self.timeout * 4)
        if reply is None:
            self._builders[slot] = None
            return None, "build: the building process died or timed out", time.perf_counter() - start
        return reply["path"], reply["error"], reply["seconds"]

    def _measure(self, path: str, task: Task) -> Tuple[List[float], Optional[str]]:
        if self._measurer is None or not self._measurer.alive():
            self._measurer = _Worker(self._measure_env, self.pin_core)
        reply = self._measurer.request({"op": "measure", "path": path, "task": dataclasses.asdict(task)},
                                       self.timeout)
        if reply is None:
            code = self._measurer.proc.returncode
            self._measurer = None
            what = "timed out" if code in (-9, None) else f"died (exit status {code})"
            return [], f"run: the measuring process {what}"
        if "error" in reply:
            return [], reply["error"]
        return reply["times"], None

    def run(self, tasks: Sequence[Task]) -> List[Result]:
        for t in tasks:
            t.number, t.repeat, t.min_repeat_ms = self.number, self.repeat, self.min_repeat_ms
            t.timer = self.timer
        built: List[Any] = [None] * len(tasks)
        queue = list(enumerate(tasks))
        lock = threading.Lock()

        def drain(slot: int) -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    i, t = queue.pop(0)
                built[i] = self._build_one(slot, t)

        threads = [threading.Thread(target=drain, args=(s,)) for s in range(min(self.n_build, len(tasks)))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        results = []
        for task, (path, error, seconds) in zip(tasks, built):
            if error or path is None:
                results.append(Result([], error, seconds))
                continue
            times, error = self._measure(path, task)
            results.append(Result(times, error, seconds))
        return results

    def remeasure(self, tasks: Sequence[Task], rounds: int) -> List[Result]:
        """As :meth:`Runner.remeasure`, each candidate built once."""
        for t in tasks:
            t.number, t.repeat, t.min_repeat_ms = self.number, self.repeat, self.min_repeat_ms
            t.timer = self.timer
        built = [self._build_one(0, t) for t in tasks]
        per: List[List[float]] = [[] for _ in tasks]
        errors: List[Optional[str]] = [error if error or path is None else None
                                       for path, error, _ in built]
        for _ in range(max(1, rounds)):
            for i, (task, (path, _, _)) in enumerate(zip(tasks, built)):
                if errors[i] is not None or path is None:
                    errors[i] = errors[i] or "build: no library"
                    continue
                times, error = self._measure(path, task)
                if error or not times:
                    errors[i] = error or "run: no times"
                else:
                    per[i].append(_median(times))
        return [Result([] if e else p, e, b[2]) for p, e, b in zip(per, errors, built)]

    def close(self) -> None:
        for w in self._builders:
            if w is not None:
                w.close()
        self._builders = [None] * self.n_build
        if self._measurer is not None:
            self._measurer.close()
            self._measurer = None


class RayRunner(Runner):
    """Sends each candidate to a worker of a Ray cluster, which builds and measures it.

    ``address``: the cluster (``"ray://host:10001"``, ``"auto"``, or None to start a local
    instance on this machine). Workers need tessera importable (the same version)."""

    def __init__(self, address: Optional[str] = None, timeout: float = 120.0, number: int = 3,
                 repeat: int = 3, min_repeat_ms: int = 20, num_threads: Optional[int] = None,
                 init_kwargs: Optional[dict] = None) -> None:
        try:
            import ray
        except ImportError:
            raise ImportError("RayRunner needs ray: pip install ray") from None
        self._ray = ray
        if not ray.is_initialized():
            kwargs = dict(include_dashboard=False, log_to_driver=False)
            if address is None:
                kwargs["address"] = "local"
                kwargs["_node_ip_address"] = "127.0.0.1"
            else:
                kwargs["address"] = address
            kwargs.update(init_kwargs or {})
            import tessera

            pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
            env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [pkg_parent, os.environ.get("PYTHONPATH")]))}}
            if os.environ.get("TESSERA_CACHE_DIR"):
                env["env_vars"]["TESSERA_CACHE_DIR"] = os.environ["TESSERA_CACHE_DIR"]
            kwargs.setdefault("runtime_env", env)
            ray.init(**kwargs)
            self._owns_ray = True
        else:
            self._owns_ray = False
        self.timeout = timeout
        self.number, self.repeat, self.min_repeat_ms = number, repeat, min_repeat_ms
        self.num_threads = num_threads
        self._remote = ray.remote(build_and_measure)

    def run(self, tasks: Sequence[Task]) -> List[Result]:
        for t in tasks:
            t.number, t.repeat, t.min_repeat_ms = self.number, self.repeat, self.min_repeat_ms
            t.num_threads = self.num_threads
        refs = [self._remote.remote(t) for t in tasks]
        results = []
        for ref in refs:
            try:
                results.append(self._ray.get(ref, timeout=self.timeout))
            except self._ray.exceptions.GetTimeoutError:
                self._ray.cancel(ref, force=True)
                results.append(Result([], f"run: timed out after {self.timeout:g} s"))
            except Exception as e:
                results.append(Result([], f"worker: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
        return results

    def close(self) -> None:
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()


def _median(xs: Sequence[float]) -> float:
    v = sorted(xs)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def describe_failure(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()
