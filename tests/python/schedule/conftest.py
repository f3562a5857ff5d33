"""Helpers of the schedule tests: apply primitives to `before`, compare with `expected`,
replay the trace; or expect a ScheduleError and check that nothing changed."""

import pytest

from tessera import _core, tir
from tessera.ir import assert_structural_equal, structural_equal
from tessera.tir.schedule.testing import verify_trace_roundtrip


def as_main(func):
    """`func` named "main" (the name a schedule of a PrimFunc gives it)."""
    return func.with_attr("global_symbol", _core.StringImm("main"))


def check(before, expected, apply):
    """Schedule `before` with `apply(sch)`; the result must equal `expected`, and the trace must
    replay (as Python, JSON and directly) to the same module. Returns the schedule."""
    before = as_main(before)
    sch = tir.Schedule(before, debug_mask="all")
    apply(sch)
    assert_structural_equal(sch.mod["main"], as_main(expected))
    verify_trace_roundtrip(sch, before)
    return sch


@pytest.fixture
def golden():
    return check


def check_error(before, apply, primitive, *fragments, setup=None, **schedule_kwargs):
    """`apply(sch)` (or `apply(sch, setup(sch))`) must raise a ScheduleError of `primitive` whose
    message holds `fragments`, leaving the module and the trace as they were after `setup`.
    Returns the message."""
    sch = tir.Schedule(as_main(before), debug_mask="all", **schedule_kwargs)
    prepared = setup(sch) if setup else None
    mod, trace = sch.mod, sch.trace.as_python()
    with pytest.raises(tir.ScheduleError) as info:
        apply(sch) if setup is None else apply(sch, prepared)
    message = str(info.value)
    if schedule_kwargs.get("error_render_level", "detail") == "detail":
        assert message.startswith(
            f"ScheduleError: the schedule primitive '{primitive}' failed.\n"), message
        assert "\nError message: " in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert sch.mod.same_as(mod) and structural_equal(sch.mod, mod)
    assert sch.trace.as_python()[: len(trace)] == trace
    return message


@pytest.fixture
def schedule_error():
    return check_error
