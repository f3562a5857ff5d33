"""Helpers of the micro-kernel choice tests (AVX2 and AVX-512): the matmul they schedule and the
replay of a schedule's trace in a fresh Python process, as the tuner's workers replay it."""

import json
import os
import subprocess
import sys

from tessera import te

_REPLAY = (
    "import sys\n"
    "from tessera import script, tir\n"
    "from tessera.tir.schedule.trace import Trace\n"
    "func_text, trace = sys.stdin.read().split('\\0')\n"
    "sch = tir.Schedule(script.from_source(func_text))\n"
    "Trace.apply_json_to_schedule(trace, sch)\n"
    "print(sch.mod.script())\n"
)


def product(M, N, K, transposed=False):
    A = te.placeholder((M, K), "float32", name="A")
    B = te.placeholder((N, K) if transposed else (K, N), "float32", name="B")
    k = te.reduce_axis((0, K), name="k")
    if transposed:
        C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    else:
        C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def replay_in_fresh_process(func, sch):
    """The trace of `sch` (made from `func`) as JSON, and the module that a fresh process
    printed after replaying it on `func`; the process must succeed."""
    trace = json.dumps(sch.trace.as_json())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _REPLAY], input=func.script() + "\0" + trace,
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return trace, out.stdout
