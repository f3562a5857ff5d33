"""Helpers for schedule tests."""

from ...ir import assert_structural_equal
from .schedule import Schedule
from .trace import Trace


def verify_trace_roundtrip(sch, mod, *, debug_mask="all", text_format=("python", "json")):
    """Replay ``sch.trace`` on fresh schedules of ``mod`` (as Python lines, as JSON, and
    directly) and assert that each gives a module structurally equal to ``sch.mod`` and the same
    trace. Returns the schedule replayed from Python.

    >>> sch = tir.Schedule(Saxpy)
    >>> sch.split(sch.get_loops("saxpy")[0], [None, 16])
    >>> verify_trace_roundtrip(sch, Saxpy)
    """
    from ...script import tir as T

    formats = (text_format,) if isinstance(text_format, str) else tuple(text_format)
    expected_lines = sch.trace.as_python()
    replayed = []
    for fmt in formats + ("direct",):
        new_sch = Schedule(mod, debug_mask=debug_mask)
        if fmt == "python":
            code = "\n".join(expected_lines)
            exec(compile(code, "<trace>", "exec"), {"sch": new_sch, "T": T, "tir": _tir()})
        elif fmt == "json":
            Trace.apply_json_to_schedule(sch.trace.as_json(), new_sch)
        elif fmt == "direct":
            sch.trace.apply_to_schedule(new_sch)
        else:
            raise ValueError(f"unknown trace format {fmt!r}")
        assert_structural_equal(new_sch.mod, sch.mod)
        lines = new_sch.trace.as_python()
        if lines != expected_lines:
            raise AssertionError(
                f"the trace replayed from {fmt} differs:\n" + "\n".join(lines) + "\n--- expected ---\n"
                + "\n".join(expected_lines))
        replayed.append(new_sch)
    return replayed[0]


def assert_structural_equal_ignore_global_symbol(func1, func2, *args, **kwargs):
    """Assert that two PrimFuncs are structurally equal whatever their "global_symbol"
    attributes say (both are compared as "main")."""
    from ... import _core

    def as_main(func):
        if isinstance(func, _core.PrimFunc):
            return func.with_attr("global_symbol", _core.StringImm("main"))
        return func

    assert_structural_equal(as_main(func1), as_main(func2), *args, **kwargs)


def _tir():
    from ... import tir

    return tir


__all__ = ["assert_structural_equal", "assert_structural_equal_ignore_global_symbol", "verify_trace_roundtrip"]
