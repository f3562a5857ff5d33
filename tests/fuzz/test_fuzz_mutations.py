"""Mutation fuzzing: valid generated TVMScript modules and DSL kernels with one or two random
edits (a bad dtype, a changed or huge number, a deleted or duplicated line, a swapped name, a
misspelt intrinsic, a changed operator) are parsed and built. Each must build, or end in a
tessera error that carries its source location (or Python's own located SyntaxError) — never a
crash, a hang, an InternalError or an error without a location.

Mutants are built, not run: a mutant may be a valid program that reads out of its arrays.
A hang stops the run with every thread's traceback (faulthandler).
"""

import faulthandler
import os
import re

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


def _check(kind, source, build):
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        build()
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


def _fail(kind, source, why):
    path = save_reproducer(f"test_mutated_{kind}", f'"""{why[:2000]}"""\nSOURCE = {source!r}\n')
    raise AssertionError(f"{why}\n{source}\nreproducer: {path}")


@settings(max_examples=examples(ci=80, long=3000))
@given(tir_gen.program(max_depth=2), st.lists(mutation, min_size=1, max_size=2))
def test_mutated_tvmscript_ends_in_a_located_error(program, edits):
    source = mutate(tir_gen.module_src([program]), edits)
    _check("tvmscript", source, lambda: ts.build(ts.script.from_source(source), target="c"))


@settings(max_examples=examples(ci=60, long=2000))
@given(dsl_gen.kernel(stores=2), st.lists(mutation, min_size=1, max_size=2))
def test_mutated_dsl_ends_in_a_located_error(kernel, edits):
    source = mutate(dsl_gen.kernel_src(*kernel), edits)
    _check("dsl", source, lambda: BuildManager().build(load_kernel(source)))
