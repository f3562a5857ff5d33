"""tessera's runtime sets a bounded OpenMP spin before the first OpenMP kernel loads, unless the
user chose a wait policy."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

CODE = """
import ctypes, numpy as np, tessera as ts
from tessera import te, tir

A = te.placeholder((4096,), name="A")
B = te.compute((4096,), lambda i: A[i] * 2.0, name="B")
sch = tir.Schedule(te.create_prim_func([A, B]))
sch.parallel(sch.get_loops(sch.get_block("B"))[0])
scale = sch.mod

getenv = ctypes.CDLL(None).getenv
getenv.restype = ctypes.c_char_p
before = getenv(b"GOMP_SPINCOUNT")
lib = ts.build(scale, target="c")
a = np.ones(4096, "float32"); b = np.zeros_like(a); lib(a, b); assert b[0] == 2
print(before, getenv(b"GOMP_SPINCOUNT"), getenv(b"KMP_BLOCKTIME"))
"""


def run(env_extra, drop=()):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME") + tuple(drop)}
    env.update(env_extra)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_bounded_spin_is_set_before_openmp_starts():
    assert run({}) == ["None", "b'10000'", "b'1'"]


def test_the_users_policy_stands():
    assert run({"OMP_WAIT_POLICY": "passive"}) == ["None", "None", "None"]
    assert run({"GOMP_SPINCOUNT": "5"}) == ["b'5'", "b'5'", "None"]
