"""The `tessera` command, run as a user runs it: in a subprocess, on kernel files."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tessera

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))

DSL_FILE = """
from tessera.dsl import script as S

@S.prim_func
def add_one(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    va = S.vload(a)
    S.vstore(S.vadd(va, 1), b)

print("module-level output goes to stderr")
"""

TIR_FILE = """
from tessera.script import tir as T

@T.prim_func
def scale(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,), "float32")
    B = T.match_buffer(b, (16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)

@T.prim_func
def shift(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8,), "int32")
    B = T.match_buffer(b, (8,), "int32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + 1
"""

ERROR_FILE = """
from tessera.dsl import script as S

@S.prim_func
def broken(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    va = S.vload(a)
    S.vstore(S.vaddd(va, 1), b)
"""


def run(args, cwd=None, ok=True):
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-m", "tessera", *args], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=300)
    if ok:
        assert out.returncode == 0, out.stderr
    return out


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("dsl_k.py", DSL_FILE), ("tir_k.py", TIR_FILE), ("bad_k.py", ERROR_FILE)):
        p = tmp_path / name
        p.write_text(textwrap.dedent(text))
        paths[name.split("_")[0]] = str(p)
    return paths


def test_help_lists_every_subcommand():
    out = run(["--help"])
    for cmd in ("build", "lower", "dump", "explore", "tune", "bench"):
        assert cmd in out.stdout
    for cmd in ("build", "lower", "dump", "explore", "tune", "bench"):
        assert run([cmd, "--help"]).stdout.startswith("usage: tessera " + cmd)


def test_no_command_is_a_usage_error():
    out = run([], ok=False)
    assert out.returncode == 2
    assert "usage: tessera" in out.stderr


def test_build_dsl_emits_c(files):
    out = run(["build", files["dsl"], "--emit", "c"])
    assert "__kernel void add_one(" in out.stdout
    assert "(va + (int8)1)" in out.stdout
    assert "module-level output" not in out.stdout and "module-level output" in out.stderr


def test_build_dsl_library_runs(files, tmp_path):
    lib = tmp_path / "add_one.so"
    run(["build", files["dsl"], "-o", str(lib)])
    assert lib.exists() and os.stat(lib).st_mode & 0o444 == 0o444


def test_build_tir_exports_a_loadable_library(files, tmp_path):
    out = run(["build", files["tir"] + "::scale", "--target", "c", "-o", "scale.so"], cwd=tmp_path)
    assert "scale.so" in out.stdout
    lib = tessera.runtime.load_module(str(tmp_path / "scale.so"))
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a * 2)


def test_build_emits_tvmscript_and_c(files):
    script = run(["build", files["tir"] + "::shift", "--emit", "tvmscript"]).stdout
    assert "def shift(" in script and "T.block(\"B\")" in script
    c = run(["build", files["tir"] + "::shift", "--emit", "c"]).stdout
    assert "__tessera_packed_shift" in c


def test_build_emit_asm(files):
    asm = run(["build", files["tir"] + "::shift", "--emit", "asm"]).stdout
    assert "__tessera_packed_shift" in asm and ("ret" in asm or "\tret" in asm)


def test_emit_cuda_needs_a_cuda_target(files):
    out = run(["build", files["tir"] + "::shift", "--emit", "cuda"], ok=False)
    assert out.returncode == 2
    assert "--target cuda" in out.stderr


def test_several_kernels_need_a_name(files):
    out = run(["build", files["tir"]], ok=False)
    assert out.returncode == 2
    assert "defines 2 kernels (scale, shift)" in out.stderr
    out = run(["build", files["tir"] + "::nope"], ok=False)
    assert out.returncode == 2 and "no kernel named 'nope'" in out.stderr


def test_missing_file(tmp_path):
    out = run(["lower", str(tmp_path / "missing.py")], ok=False)
    assert out.returncode == 2 and "no such file" in out.stderr


def test_lower_stops_at_the_stage(files):
    out = run(["lower", files["tir"] + "::scale", "--stage", "flatten"]).stdout
    assert "T.block" not in out and "def scale(" in out
    out = run(["lower", files["dsl"], "--stage", "begin"]).stdout
    assert "def add_one(" in out


def test_kernel_error_is_located(files):
    out = run(["build", files["bad"]], ok=False)
    assert out.returncode == 1
    assert f"{files['bad']}:7:" in out.stderr
    assert "S.vaddd(va, 1)" in out.stderr and "^" in out.stderr
    assert "did you mean S.vadd" in out.stderr
    assert "Traceback" not in out.stderr


def test_dump_writes_every_changed_pass(files, tmp_path):
    d = tmp_path / "ir"
    run(["dump", files["tir"] + "::scale", "--out", str(d)])
    names = sorted(os.listdir(d))
    assert names[0] == "000_input.py" and "passes.tsv" in names
    assert any(n.endswith("tir.MakePackedAPI.py") for n in names)
    assert any(n.endswith("codegen.c") for n in names)
    rows = (d / "passes.tsv").read_text().splitlines()
    assert rows[0].split("\t") == ["index", "stage", "pass", "ms", "changed", "skipped"]
    assert any("\ttir.FlattenBuffer\t" in r for r in rows)
    d_all = tmp_path / "all"
    run(["dump", files["tir"] + "::scale", "--out", str(d_all), "--all"])
    assert len(os.listdir(d_all)) == len(rows) + 2  # every pass, the input, the source, passes.tsv


def test_explore_writes_a_self_contained_page(files, tmp_path):
    page = tmp_path / "scale.html"
    out = run(["explore", files["tir"] + "::scale", "-o", str(page)])
    assert str(page) in out.stdout
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "tir.FlattenBuffer" in text and "tir.MakePackedAPI" in text
    assert "http://" not in text and "https://" not in text  # nothing loads from a network
    assert "<script src" not in text and "<link" not in text


def test_tune_without_tuner_or_with_dsl(files):
    out = run(["tune", files["dsl"]], ok=False)
    assert out.returncode == 2


def test_bench_lists_the_benchmarks():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if not os.path.isdir(os.path.join(root, "bench")):
        pytest.skip("no bench/ folder beside the tests")
    out = run(["bench", "--list"], cwd=root)
    assert "cpu" in out.stdout.split()
    out = run(["bench", "no_such_bench"], cwd=root, ok=False)
    assert out.returncode == 2 and "no benchmark 'no_such_bench'" in out.stderr


def test_import_without_the_extension_says_how_to_build(tmp_path):
    pkg = tmp_path / "tessera"
    shutil.copytree(os.path.dirname(os.path.abspath(tessera.__file__)), pkg,
                    ignore=shutil.ignore_patterns("_core*", "__pycache__"))
    out = subprocess.run([sys.executable, "-c", "import tessera"], env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "tessera._core) is not built: run `make build`" in out.stderr
    assert "circular import" not in out.stderr


def test_calling_a_prim_func_says_to_build_it():
    from tessera.script import tir as T

    @T.prim_func
    def f(a: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("a"):
                vi = T.axis.remap("S", [i])
                a[vi] = T.float32(0)

    with pytest.raises(TypeError, match=r"build it first with lib = tessera.build\(f"):
        f(np.zeros(4, "float32"))


CUDA_FILE = """
from tessera import tir
from tessera.script import tir as T

@T.prim_func
def add(a: T.Buffer((256,), "float32"), b: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            b[vi] = a[vi] + T.float32(1)

sch = tir.Schedule(add)
i0, i1 = sch.split(sch.get_loops(sch.get_block("b"))[0], [None, 64])
sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
bound = sch.mod
del add
"""


def test_build_cuda_emits_the_kernel(tmp_path, monkeypatch):
    path = tmp_path / "cuda_k.py"
    path.write_text(CUDA_FILE)
    monkeypatch.setenv("TESSERA_CUDA_EMULATOR", "1")  # builds without NVRTC too
    out = run(["build", str(path), "--target", "cuda", "--emit", "cuda"])
    assert "__global__" in out.stdout and "threadIdx.x" in out.stdout



def test_tune_a_tensorir_kernel(files, tmp_path):
    db = tmp_path / "t.db"
    out = run(["tune", files["tir"] + "::scale", "--trials", "2", "--database", str(db)])
    assert out.stdout.startswith("TuneResult(") and "sch.get_block" in out.stdout
    assert db.exists()
