"""Features of a candidate for the cost model: counts from its lowered program (after the loop
stage: vectorized, unrolled, partitioned), weighted by trip counts, plus its decisions."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

from .. import _core

N_PROGRAM = 14
N_DECISIONS = 16


def _extent(loop: Any) -> int:
    e = loop.extent
    return int(e.value) if isinstance(e, _core.IntImm) else 64


def _lanes(expr: Any) -> int:
    dtype = str(expr.dtype)
    return int(dtype.rsplit("x", 1)[1]) if "x" in dtype and dtype.rsplit("x", 1)[1].isdigit() else 1


class _Counter:
    def __init__(self) -> None:
        self.f: Dict[str, float] = {k: 0.0 for k in (
            "arith", "vload", "sload", "vstore", "sstore", "parallel", "lanes", "unrolled",
            "depth", "serial_inner", "stmts", "local_bytes", "loops", "inner_count")}
        self.f["parallel"] = 1.0

    def stmt(self, s: Any, trips: float, depth: int) -> None:
        self.f["stmts"] += 1
        self.f["depth"] = max(self.f["depth"], depth)
        if isinstance(s, _core.For):
            ext = _extent(s)
            kind = str(s.kind)
            self.f["loops"] += 1
            if kind.endswith("PARALLEL"):
                self.f["parallel"] *= ext
            elif kind.endswith("UNROLLED"):
                self.f["unrolled"] += ext
            inner = s.body
            if not isinstance(inner, (_core.For, _core.SeqStmt)) and kind.endswith("SERIAL"):
                self.f["serial_inner"] += ext
                self.f["inner_count"] += 1
            self.stmt(s.body, trips * ext, depth + 1)
        elif isinstance(s, _core.SeqStmt):
            for x in s.seq:
                self.stmt(x, trips, depth)
        elif isinstance(s, _core.BufferStore):
            lanes = _lanes(s.value)
            self.f["lanes"] = max(self.f["lanes"], lanes)
            self.f["vstore" if lanes > 1 else "sstore"] += trips
            self.expr(s.value, trips)
        elif isinstance(s, _core.IfThenElse):
            self.stmt(s.then_case, trips, depth)
            if s.else_case is not None:
                self.stmt(s.else_case, trips, depth)
        elif hasattr(s, "body") and not isinstance(s, _core.PrimExpr):
            if isinstance(s, _core.Allocate):
                size = 1
                for e in s.extents:
                    size *= int(e.value) if isinstance(e, _core.IntImm) else 64
                self.f["local_bytes"] += size * max(1, _core.DataType(str(s.dtype)).bits // 8)
            self.stmt(s.body, trips, depth)

    def expr(self, e: Any, trips: float) -> None:
        counts = {"arith": 0, "vload": 0, "sload": 0}

        def visit(n: Any) -> None:
            if isinstance(n, _core.BufferLoad):
                counts["vload" if _lanes(n) > 1 else "sload"] += 1
            elif isinstance(n, (_core.Add, _core.Sub, _core.Mul, _core.Div, _core.Max, _core.Min)):
                counts["arith"] += _lanes(n)

        _core.post_order_visit(e, visit)
        for k, v in counts.items():
            self.f[k] += v * trips


def program_features(lowered_func: Any) -> List[float]:
    c = _Counter()
    c.stmt(lowered_func.body, 1.0, 0)
    f = c.f
    inner = f["serial_inner"] / f["inner_count"] if f["inner_count"] else 0.0
    log = lambda x: math.log2(1.0 + max(0.0, x))  # noqa: E731
    out = [log(f["arith"]), log(f["vload"]), log(f["sload"]), log(f["vstore"]), log(f["sstore"]),
           log(f["parallel"]), f["lanes"], log(f["unrolled"]), f["depth"], log(inner),
           log(f["stmts"]), log(f["local_bytes"]), f["loops"],
           log(f["arith"]) - log(f["vload"] + f["sload"])]
    assert len(out) == N_PROGRAM
    return out


def decision_features(decisions: Sequence[Any]) -> List[float]:
    flat: List[float] = []
    for d in decisions:
        if isinstance(d, (list, tuple)):
            flat.extend(math.log2(max(1, int(x))) for x in d)
        else:
            flat.append(float(d))
    flat = flat[:N_DECISIONS]
    return flat + [0.0] * (N_DECISIONS - len(flat))


def features(lowered_func: Any, decisions: Sequence[Any]) -> List[float]:
    return program_features(lowered_func) + decision_features(decisions)
