"""Every schedule primitive's trace replays from its JSON in a process that never ran the
primitive: the tuner's workers do exactly that, so an instruction kind known only where it was
first recorded would turn every candidate using it into a build failure."""

import json
import os
import subprocess
import sys

from tessera import tir
from tessera.script import tir as T


@T.prim_func
def two_stage(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    B = T.alloc_buffer((64, 64), "float32")
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def pad_1d(x: T.Buffer((128,), "int32"), y: T.Buffer((140,), "int32")):
    for i in range(140):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            y[vi] = T.if_then_else(vi >= 6 and vi < 134, x[vi - 6], 0)


@T.prim_func
def matmul_bias(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    temp = T.alloc_buffer((16, 16), "float32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("multiply"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = T.float32(0)
            temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(16, 16):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = temp[vi, vj] + C[vi, vj]


def _read_at(sch):
    block = sch.get_block("multiply")
    sch.read_at(sch.get_loops(block)[0], block, 0, "global")


def _write_at(sch):
    block = sch.get_block("multiply")
    sch.write_at(sch.get_loops(block)[0], block, 0, "global")


CASES = {
    "DecomposePadding": (pad_1d, lambda s: s.decompose_padding(s.get_block("block"),
                                                               s.get_loops(s.get_block("block"))[0])),
    "FuseReductionEpilogue": (matmul_bias, lambda s: s.fuse_reduction_epilogue(
        s.get_block("multiply"), s.get_block("add"))),
    "ReadAt": (matmul_bias, _read_at),
    "WriteAt": (matmul_bias, _write_at),
    "ReindexCacheRead": (two_stage, lambda s: s.reindex_cache_read(
        s.get_block("C"), 0, "shared", lambda i, j: (j, i))),
    "ReindexCacheWrite": (two_stage, lambda s: s.reindex_cache_write(
        s.get_block("B"), 0, "shared", lambda i, j: (j, i))),
    "AnnotateBufferAccess": (two_stage, lambda s: s.annotate_buffer_access(
        s.get_block("C"), 0, "read", lambda vi, vj: ((vi, vi + 1), (vj, vj + 1)))),
    "PadEinsum": (matmul_bias, lambda s: s.pad_einsum(s.get_block("multiply"), [32, 32, 16])),
}

REPLAY = """
import json, sys
from tessera import script, tir
from tessera.tir.schedule.trace import Trace
out = {}
for name, (text, trace) in json.loads(sys.stdin.read()).items():
    sch = tir.Schedule(script.from_source(text))
    Trace.apply_json_to_schedule(trace, sch)
    out[name] = sch.mod.script()
print(json.dumps(out))
"""


def test_every_kind_replays_in_a_fresh_process():
    jobs, expected = {}, {}
    for name, (func, apply) in CASES.items():
        sch = tir.Schedule(func)
        apply(sch)
        trace = sch.trace.as_json()
        assert any(row[0] == name for row in trace[0]), (name, trace[0])
        jobs[name] = (func.script(), trace)
        expected[name] = sch.mod.script()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", REPLAY], input=json.dumps(jobs), capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    replayed = json.loads(out.stdout)
    for name in CASES:
        assert replayed[name].strip() == expected[name].strip(), name
