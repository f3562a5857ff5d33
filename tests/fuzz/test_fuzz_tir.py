"""Differential fuzzing of TensorIR: random well-typed programs (tir_gen) are built for the host
and run, and their outputs compared exactly with tir_gen's numpy reference; random schedules
are applied to a copy of each and the copy's output compared with the unscheduled one's.

Each hypothesis example is a batch of programs, one PrimFunc each, built as one IRModule (one
C compilation), so that CI covers thousands of programs in a minute or two.
"""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera as ts
from tessera import tir
from tessera.error import InternalError, ScheduleError

import tir_gen
from fuzz_util import COUNTS, array_literal, examples, save_reproducer

BATCH = 40


def _prepare(programs, seed, prefix="f"):
    """Names the programs, draws their inputs and drops those whose value is undefined."""
    rng = np.random.default_rng(seed)
    cases = []
    for i, p in enumerate(programs):
        p = dataclasses.replace(p, name=f"{prefix}{i}")
        a, b = tir_gen.random_inputs(p, rng)
        try:
            expected = tir_gen.reference(p, a, b)
        except tir_gen.Invalid:
            COUNTS["tir rejected (undefined in C)"] += 1
            continue
        cases.append((p, a, b, expected))
    return cases


def _run(lib, name, p, a, b):
    c = np.zeros(p.n, dtype=p.dtypes[2])
    lib[name](a.copy(), b.copy(), c)
    return c


def _reproducer(test, source, p, name, a, b, expected, got, schedule=""):
    script = f'''"""tessera fuzz failure ({test}): {name} computes {got.tolist()!r}, numpy {expected.tolist()!r}."""
import numpy as np
import tessera as ts
from tessera import tir

SOURCE = """
{tir_gen.module_src([p])}"""
mod = ts.script.from_source(SOURCE)
{schedule}lib = ts.build(mod, target="c")
A = {array_literal(a)}
B = {array_literal(b)}
C = np.zeros({p.n}, dtype={p.dtypes[2]!r})
lib(A, B, C)
np.testing.assert_array_equal(C, {array_literal(expected)})
'''
    return save_reproducer(test, script)


@settings(max_examples=examples(ci=45, long=2000))
@given(st.lists(tir_gen.program(), min_size=BATCH, max_size=BATCH), st.integers(0, 2**32 - 1))
def test_random_programs_match_numpy(programs, seed):
    cases = _prepare(programs, seed)
    if not cases:
        return
    source = tir_gen.module_src([p for p, *_ in cases])
    lib = ts.build(ts.script.from_source(source), target="c")
    COUNTS["tir programs"] += len(cases)
    for p, a, b, expected in cases:
        got = _run(lib, p.name, p, a, b)
        if not np.array_equal(got, expected):
            path = _reproducer("test_random_programs_match_numpy", source, p, p.name, a, b,
                               expected, got)
            raise AssertionError(f"{p.name} computes {got}, numpy {expected}\n"
                                 f"{tir_gen.function_src(p, '')}\nreproducer: {path}")


# --------------------------------------------------------------------------------------------
# Random schedules
# --------------------------------------------------------------------------------------------

PRIMITIVES = ("split", "split3", "fuse", "reorder", "parallel", "vectorize", "unroll",
              "cache_read", "cache_read_at", "cache_write", "decompose_reduction", "rfactor",
              "add_unit_loop", "reverse_cache_write_at")

steps = st.lists(st.tuples(st.sampled_from(PRIMITIVES), st.integers(0, 63), st.integers(0, 63)),
                 max_size=5)


def apply_schedule(sch, step_list):
    """Applies the steps to block C; a step whose preconditions do not hold must raise
    ScheduleError and change nothing (anything else fails the test)."""
    block = sch.get_block("C")
    for prim, x, y in step_list:
        loops = sch.get_loops(block)
        loop = loops[x % len(loops)]
        try:
            if prim == "split":
                sch.split(loop, factors=[None, 1 + y % 8])
            elif prim == "split3":
                sch.split(loop, factors=[None, 1 + y % 3, 1 + x % 4])
            elif prim == "fuse" and len(loops) >= 2:
                i = x % (len(loops) - 1)
                sch.fuse(loops[i], loops[i + 1])
            elif prim == "reorder" and len(loops) >= 2:
                order = list(loops)
                np.random.default_rng(y).shuffle(order)
                sch.reorder(*order)
            elif prim == "parallel":
                sch.parallel(loop)
            elif prim == "vectorize":
                sch.vectorize(loops[-1])
            elif prim == "unroll":
                sch.unroll(loop)
            elif prim == "cache_read":
                sch.cache_read(block, y % 2, "global")
            elif prim == "cache_read_at":
                cached = sch.cache_read(block, y % 2, "global")
                sch.compute_at(cached, loop)
            elif prim == "cache_write":
                sch.cache_write(block, 0, "global")
            elif prim == "reverse_cache_write_at":
                cached = sch.cache_write(block, 0, "global")
                sch.reverse_compute_at(cached, sch.get_loops(block)[x % len(loops)])
            elif prim == "decompose_reduction":
                sch.decompose_reduction(block, loop)
            elif prim == "rfactor":
                sch.rfactor(loop, 0)
            elif prim == "add_unit_loop":
                sch.add_unit_loop(block)
        except ScheduleError:
            COUNTS["schedule steps refused (ScheduleError)"] += 1
        else:
            COUNTS["schedule steps applied"] += 1


@settings(max_examples=examples(ci=12, long=1000))
@given(st.lists(st.tuples(tir_gen.program(max_depth=2), steps), min_size=BATCH // 2,
                max_size=BATCH // 2), st.integers(0, 2**32 - 1))
def test_random_schedules_match_unscheduled(items, seed):
    cases = _prepare([p for p, _ in items], seed)
    if not cases:
        return
    step_lists = {f"f{i}": s for i, (_, s) in enumerate(items)}
    scheduled = [dataclasses.replace(p, name="s" + p.name[1:]) for p, *_ in cases]
    source = tir_gen.module_src([p for p, *_ in cases] + scheduled)
    mod = ts.script.from_source(source)
    funcs, traces = {p.name: mod[p.name] for p, *_ in cases}, {}
    for p in scheduled:  # one schedule per function: its trace is the function's reproducer
        sch = tir.Schedule(mod[p.name])
        apply_schedule(sch, step_lists["f" + p.name[1:]])
        funcs[p.name] = sch.mod["main"]
        traces[p.name] = "\n".join(sch.trace.as_python())
    try:
        lib = ts.build(ts.ir.IRModule(funcs), target="c")
    except InternalError as err:
        raise AssertionError(f"{err}\nschedules:\n" + "\n\n".join(traces.values())) from err
    COUNTS["tir scheduled programs"] += len(cases)
    for (p, a, b, expected), s in zip(cases, scheduled):
        plain = _run(lib, p.name, p, a, b)
        got = _run(lib, s.name, p, a, b)
        if not (np.array_equal(got, plain) and np.array_equal(got, expected)):
            sched = (f"sch = tir.Schedule(mod[{p.name!r}])\n" + traces[s.name]
                     + "\nmod = sch.mod\n")
            path = _reproducer("test_random_schedules_match_unscheduled", source, p, p.name, a, b,
                               expected, got, schedule=sched)
            raise AssertionError(f"{s.name} (scheduled) computes {got}, unscheduled {plain}, numpy "
                                 f"{expected}\n{tir_gen.function_src(p, '')}\nschedule:\n{traces[s.name]}\n"
                                 f"reproducer: {path}")
