"""Mutation fuzzing: valid generated TVMScript modules and DSL kernels with one or two random
edits (a bad dtype, a changed or huge number, a deleted or duplicated line, a swapped name, a
misspelt intrinsic, a changed operator) are parsed and built. Each must build, or end in a
tessera error that carries its source location (or Python's own located SyntaxError) — never a
crash, a hang, an InternalError or an error without a location.

A mutant that builds is then run, in a forked child with a time limit, on arrays of the shapes
and dtypes it declares: TVMScript mutants built with ``tir.instrument_bound_checkers`` and DSL
mutants in the checked mode (``check_bounds=True``), so that an access outside an array is an
error, not a corruption. The call must return or raise a tessera error (or TypeError /
ValueError); a crash fails the test. A mutant running past the limit (a loop made huge), and an
integer division by a zero read from the data (undefined in C, as in TVM), are counted, not
failed. A hang of the compiler stops the run with every thread's traceback (faulthandler).
"""

import faulthandler
import os
import re
import signal
import time

import numpy as np

from hypothesis import given, settings
from hypothesis import strategies as st

import tessera as ts
from tessera.dsl import BuildManager
from tessera.error import InternalError, TesseraError

import dsl_gen
import tir_gen
from fuzz_util import COUNTS, examples, save_reproducer
from test_fuzz_dsl import _folder, load_kernel

BAD_DTYPES = ['"int7"', '"float"', '"handle"', '"bool"', '"uint64"', '"float16"', '"int32x4"', '""']
NUMBERS = ["0", "-1", "1", "3", "255", "65536", "2147483648", "-2147483649", "10**6", "1.5"]
OPERATORS = ["+", "-", "*", "//", "%", "/", "<<", "&", "<", "=="]
NAMES = ["vi", "vk", "i", "k", "A", "B", "C", "va", "vb", "out", "a", "b", "T", "S", "x"]

mutation = st.tuples(st.sampled_from(["dtype", "number", "delete", "duplicate", "name",
                                      "intrinsic", "operator", "char"]),
                     st.integers(0, 10**6), st.integers(0, 10**6))


def mutate(source, edits):
    lines = source.split("\n")
    for kind, x, y in edits:
        body = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith(("@", "class", "from"))]
        if not body:
            break
        li = body[x % len(body)]
        line = lines[li]
        if kind == "delete":
            del lines[li]
            continue
        if kind == "duplicate":
            lines.insert(li, line)
            continue
        if kind == "char":
            pos = y % (len(line) + 1)
            lines[li] = line[:pos] + "()[]:,.0x\"'"[x % 11] + line[pos:]
            continue
        pattern = {"dtype": r'"(?:int|float|uint|bool)\w*"', "number": r"(?<![\w.])\d+(?:\.\d+)?",
                   "name": r"\b(?:" + "|".join(NAMES) + r")\b", "intrinsic": r"\b[TS]\.\w+",
                   "operator": r" (?:\+|-|\*|<=|>=|<|>|==|!=) "}[kind]
        spots = list(re.finditer(pattern, line))
        if not spots:
            continue
        m = spots[y % len(spots)]
        new = {"dtype": BAD_DTYPES[x % len(BAD_DTYPES)], "number": NUMBERS[x % len(NUMBERS)],
               "name": NAMES[x % len(NAMES)],
               "intrinsic": m.group(0)[:2] + m.group(0)[2:][::-1] if x % 2 else m.group(0) + "_",
               "operator": f" {OPERATORS[x % len(OPERATORS)]} "}[kind]
        lines[li] = line[:m.start()] + new + line[m.end():]
    return "\n".join(lines)


def _located(err):
    if isinstance(err, SyntaxError):
        return err.lineno is not None
    return bool(getattr(err, "line", 0)) or re.search(r":\d+(:\d+)?: ", str(err)) is not None


def _python_error_in_user_code(err):
    """An exception that Python itself raised running the mutant's own module-level code (a
    NameError in an annotation, say): its innermost frame is the mutant's file, outside
    tessera, and Python's traceback locates it."""
    tb = err.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and os.path.basename(last).startswith("kern") and last.startswith(_folder)


# Seconds a mutant that builds may run; arrays above this many elements are not allocated.
RUN_SECONDS = 3.0
MAX_ELEMENTS = 1 << 20


def _run_forked(kind, source, run):
    """Runs ``run()`` in a forked child: a crash there fails the test with a reproducer; an
    error must be a tessera error, TypeError or ValueError."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        code, message = 0, b""
        try:
            run()
        except (TesseraError, TypeError, ValueError) as err:
            code, message = (4 if isinstance(err, InternalError) else 3), str(err).encode()
        except BaseException as err:  # noqa: BLE001 - reported to the parent
            code, message = 4, f"{type(err).__name__}: {err}".encode()
        os.write(write_end, message[:4000])
        os._exit(code)
    os.close(write_end)
    deadline = time.monotonic() + RUN_SECONDS
    status = None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
            COUNTS[f"mutants run past {RUN_SECONDS:g} s ({kind})"] += 1
            return
        else:
            time.sleep(0.002)
    with os.fdopen(read_end, "rb") as f:
        message = f.read().decode(errors="replace")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGFPE:
            COUNTS[f"mutants dividing by a zero read from the data ({kind})"] += 1
            return
        _fail(kind, source, f"running the mutant killed the process with {signal.Signals(sig).name}")
    code = os.WEXITSTATUS(status)
    if code == 0:
        COUNTS[f"mutants run ({kind})"] += 1
    elif code == 3:
        COUNTS[f"mutants run into an error ({kind})"] += 1
    else:
        _fail(kind, source, f"running the mutant raised {message}")


def _tvmscript_args(mod):
    """One argument list per function of ``mod``: zeros of each buffer's shape and dtype; None
    for a function whose arguments cannot be made (a symbolic, huge or non-numpy buffer)."""
    calls = []
    for gv, f in mod.functions:
        buffers = dict((p.name, b) for p, b in f.buffer_map)
        args = []
        for p in f.params:
            b = buffers.get(p.name)
            try:
                shape = [int(e.value) for e in b.shape] if b is not None else None
                dtype = np.dtype(str(b.dtype)) if b is not None else None
            except (AttributeError, TypeError):
                shape = None
            if shape is None or any(d < 0 for d in shape) or int(np.prod(shape)) > MAX_ELEMENTS:
                args = None
                break
            rng = np.random.default_rng(len(args))
            args.append((rng.integers(1, 5, size=shape)).astype(dtype))
        calls.append((gv.name_hint, args))
    return calls


def _build_and_run_tvmscript(source):
    mod = ts.script.from_source(source)
    with ts.transform.PassContext(config={"tir.instrument_bound_checkers": True}):
        lib = ts.build(mod, target="c")
    calls = _tvmscript_args(mod)
    if any(args is None for _, args in calls):
        COUNTS["mutants not run (arguments too large or not numpy) (tvmscript)"] += 1
        return None

    def run():
        for name, args in calls:
            lib[name](*args)
    return run


def _build_and_run_dsl(kernel, source):
    dtype = kernel[0]
    ex = BuildManager(check_bounds=True).build(load_kernel(source))
    n = dsl_gen.lanes(dtype)
    a = np.arange(1, n + 1).astype(dtype)
    b = np.arange(n, 0, -1).astype(dtype)
    out = np.zeros(n * len(kernel[1]), dtype)
    return lambda: ex(a, b, out)


def _check(kind, source, build):
    faulthandler.dump_traceback_later(120, exit=True)
    run = None
    try:
        run = build()
        COUNTS[f"mutants that still build ({kind})"] += 1
    except InternalError as err:
        _fail(kind, source, f"InternalError: {err}")
    except (TesseraError, SyntaxError) as err:
        if not _located(err):
            _fail(kind, source, f"an error without a source location: {type(err).__name__}: {err}")
        COUNTS[f"mutants with a located error ({kind})"] += 1
    except Exception as err:  # noqa: BLE001 - anything else is what the fuzzer looks for
        if _python_error_in_user_code(err):
            COUNTS[f"mutants with a Python error in their own code ({kind})"] += 1
            COUNTS["mutated programs"] += 1
            return
        _fail(kind, source, f"{type(err).__name__} (not a tessera error): {err}")
    finally:
        faulthandler.cancel_dump_traceback_later()
    COUNTS["mutated programs"] += 1
    if run is not None:
        _run_forked(kind, source, run)


def _fail(kind, source, why):
    path = save_reproducer(f"test_mutated_{kind}", f'"""{why[:2000]}"""\nSOURCE = {source!r}\n')
    raise AssertionError(f"{why}\n{source}\nreproducer: {path}")


@settings(max_examples=examples(ci=80, long=3000))
@given(tir_gen.program(max_depth=2), st.lists(mutation, min_size=1, max_size=2))
def test_mutated_tvmscript_ends_in_a_located_error(program, edits):
    source = mutate(tir_gen.module_src([program]), edits)
    _check("tvmscript", source, lambda: _build_and_run_tvmscript(source))


@settings(max_examples=examples(ci=60, long=2000))
@given(dsl_gen.kernel(stores=2), st.lists(mutation, min_size=1, max_size=2))
def test_mutated_dsl_ends_in_a_located_error(kernel, edits):
    source = mutate(dsl_gen.kernel_src(*kernel), edits)
    _check("dsl", source, lambda: _build_and_run_dsl(kernel, source))
