"""The tuning database: measured schedules of workloads, in SQLite.

A record is (workload key, target, trace, measured seconds per run, error). The workload key is
the structural hash of the unscheduled function (so a function re-parsed from the same source,
or rebuilt identically, finds its records), with its TVMScript text kept beside it. SQLite's
WAL mode and a busy timeout let several processes write one file at once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import threading
import time
from typing import Any, List, Optional, Sequence

from .. import _core

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workloads (
    key TEXT PRIMARY KEY,
    script TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workload TEXT NOT NULL REFERENCES workloads(key),
    target TEXT NOT NULL,
    trace TEXT NOT NULL,
    decisions TEXT NOT NULL,
    times TEXT NOT NULL,
    mean REAL,
    error TEXT,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_workload ON records(workload, target, mean);
"""


def workload_key(func: Any) -> str:
    """The key of an unscheduled PrimFunc: its structural hash (free variables mapped), hex."""
    if not isinstance(func, _core.PrimFunc):
        raise TypeError(f"a workload is a PrimFunc, got {type(func).__name__}")
    return f"{_core.structural_hash(func, True) & 0xFFFFFFFFFFFFFFFF:016x}"


@dataclasses.dataclass
class TuningRecord:
    """One measured candidate: its trace (JSON text, replayable with Trace.apply_json_to_schedule),
    the sampling decisions that made it, its times in seconds (empty when it failed) and the
    error that stopped it."""

    workload: str
    target: str
    trace: str
    decisions: List[Any]
    times: List[float]
    error: Optional[str] = None
    id: Optional[int] = None
    created: float = 0.0

    @property
    def mean(self) -> Optional[float]:
        return sum(self.times) / len(self.times) if self.times else None

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.times)


class Database:
    """Tuning records in a SQLite file (``":memory:"`` for one that lives with the object).

    >>> db = tessera.tune.Database("tuning.db")
    >>> db.best(func, "c").mean
    """

    def __init__(self, path: str = ":memory:", timeout: float = 60.0) -> None:
        self.path = path if path == ":memory:" else os.path.abspath(os.fspath(path))
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False,
                                     isolation_level=None)
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        with self._lock:
            self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<tessera.tune.Database {self.path}: {len(self)} records>"

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])

    def commit_workload(self, func: Any) -> str:
        """Register ``func`` (an unscheduled PrimFunc); returns its key."""
        key = workload_key(func)
        with self._lock:
            self._conn.execute("INSERT OR IGNORE INTO workloads(key, script) VALUES (?, ?)",
                               (key, func.script()))
        return key

    def has_workload(self, func: Any) -> bool:
        key = workload_key(func)
        with self._lock:
            return self._conn.execute("SELECT 1 FROM workloads WHERE key = ?", (key,)).fetchone() is not None

    def commit_record(self, record: TuningRecord) -> int:
        """Store ``record`` (its workload must be committed); returns its id."""
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO records(workload, target, trace, decisions, times, mean, error, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.workload, record.target, record.trace, json.dumps(record.decisions),
                 json.dumps(record.times), record.mean if record.ok else None, record.error,
                 record.created or time.time()))
            record.id = int(cur.lastrowid or 0)
        return record.id

    def update_times(self, record: TuningRecord, times: Sequence[float], error: Optional[str] = None) -> None:
        """Replace the times (and error) of a committed record, e.g. by a re-measurement; the
        record object is updated too."""
        if record.id is None:
            raise ValueError("update_times: the record is not committed (it has no id)")
        record.times, record.error = [float(t) for t in times], error
        with self._lock:
            self._conn.execute("UPDATE records SET times = ?, mean = ?, error = ? WHERE id = ?",
                               (json.dumps(record.times), record.mean if record.ok else None, error,
                                int(record.id)))

    def _rows(self, query: str, params: Sequence[Any]) -> List[TuningRecord]:
        with self._lock:
            rows = self._conn.execute(query, params).fetchall()
        return [TuningRecord(workload=r[1], target=r[2], trace=r[3], decisions=json.loads(r[4]),
                             times=json.loads(r[5]), error=r[7], id=r[0], created=r[8]) for r in rows]

    def records(self, func_or_key: Any = None, target: Optional[str] = None) -> List[TuningRecord]:
        """Every record (of a workload, and a target), oldest first."""
        where, params = [], []
        if func_or_key is not None:
            where.append("workload = ?")
            params.append(func_or_key if isinstance(func_or_key, str) else workload_key(func_or_key))
        if target is not None:
            where.append("target = ?")
            params.append(_target_key(target))
        sql = "SELECT * FROM records" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return self._rows(sql, params)

    def top_k(self, func_or_key: Any, target: str, k: int) -> List[TuningRecord]:
        """The ``k`` fastest successful records of a workload on a target."""
        key = func_or_key if isinstance(func_or_key, str) else workload_key(func_or_key)
        return self._rows("SELECT * FROM records WHERE workload = ? AND target = ? AND mean IS NOT NULL "
                          "ORDER BY mean, id LIMIT ?", (key, _target_key(target), int(k)))

    def best(self, func_or_key: Any, target: str) -> Optional[TuningRecord]:
        """The fastest successful record, or None."""
        top = self.top_k(func_or_key, target, 1)
        return top[0] if top else None


def _target_key(target: Any) -> str:
    """Records are per target kind and options ("c" and "llvm" are the same host target)."""
    text = " ".join(str(getattr(target, "kind", target) or "c").split())
    kind, _, rest = text.partition(" ")
    if kind == "llvm":
        kind = "c"
    return (kind + " " + rest).strip()
