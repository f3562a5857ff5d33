"""tessera.compat: `import tvm` maps onto tessera's modules, only while installed."""

import os
import subprocess
import sys
import textwrap

import pytest

import tessera
import tessera.compat as compat

# Child processes find this tessera whatever their working directory.
_PYTHONPATH = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
ENV = dict(os.environ, PYTHONPATH=_PYTHONPATH + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture
def installed():
    was = compat.installed()
    compat.install()
    yield
    if not was:
        compat.uninstall()


def test_submodules_are_tesseras_modules(installed):
    import tvm
    import tvm.tir.schedule
    from tvm import te, tir
    from tvm.script import ir as I
    from tvm.script import tir as T

    assert tir is tessera.tir and tvm.tir is tessera.tir
    assert tvm.tir.schedule is tessera.tir.schedule and te is tessera.te
    assert T is tessera.script.tir and I is tessera.script.ir
    assert sys.modules["tvm.tir"] is tessera.tir
    # The module keeps its own identity.
    assert tessera.tir.__name__ == "tessera.tir" and tessera.tir.__spec__.name == "tessera.tir"
    assert tvm.IRModule is tessera.ir.IRModule and tvm.cpu(0) == tessera.cpu(0)
    assert tvm.compile is sys.modules["tessera.tir.build"].compile and tvm.build is tessera.driver.build
    assert tvm.tir.build is tessera.tir.build and issubclass(tvm.TVMError, tessera.error.TesseraError)


def test_testing_helpers_and_dsl(installed):
    import tvm.testing
    from tvm.compass.dsl import BuildManager, script
    from tvm.ir import assert_structural_equal
    from tvm.tir.schedule.testing import verify_trace_roundtrip

    assert tvm.testing is tessera.testing
    assert BuildManager is tessera.dsl.BuildManager and script is tessera.dsl.script
    assert callable(verify_trace_roundtrip) and assert_structural_equal is tessera.ir.assert_structural_equal


def test_tvm_module_names_kept_in_a_tessera_package(installed):
    import tvm
    from tvm.tir.expr import IntImm
    import tvm.script.parser.tir as parser_tir

    assert IntImm is tessera.tir.IntImm and parser_tir is tessera.script.tir
    assert tvm.base.TVMError is tessera.error.TesseraError is tvm.error.TVMError


def test_what_tessera_lacks_is_an_import_error_naming_it(installed):
    with pytest.raises(ImportError, match=r"tessera does not provide tvm\.relax"):
        import tvm.relax  # noqa: F401
    with pytest.raises(ImportError, match=r"tessera does not provide tvm\.tir\.no_such_module"):
        import tvm.tir.no_such_module  # noqa: F401
    with pytest.raises(ImportError, match=r"tune_tir"):
        from tvm.meta_schedule import tune_tir  # noqa: F401
    with pytest.raises(ImportError, match=r"tessera does not provide tvm\.meta_schedule\.tune_context"):
        import tvm.meta_schedule.tune_context  # noqa: F401
    with pytest.raises(ImportError, match=r"tessera does not provide tvm\.relax"):
        from tvm import relax  # noqa: F401
    import tvm

    with pytest.raises(AttributeError, match="tessera does not provide tvm.relay"):
        tvm.relay  # noqa: B018


def test_meta_schedule_te_workloads(installed):
    from tvm import te
    from tvm.meta_schedule.testing import te_workload

    func = te.create_prim_func(te_workload.matmul(16, 8, 4, in_dtype="float16", out_dtype="float32"))
    assert [p.name for p in func.buffer_map.values()] == ["A", "B", "C"]
    import tvm

    sch = tvm.tir.Schedule(te.create_prim_func(te_workload.conv2d_nhwc(1, 8, 8, 4, 4, 3, 1, 1)))
    assert len(sch.get_loops(sch.get_block("conv2d_nhwc"))) == 7
    sch = tvm.tir.Schedule(te.create_prim_func(te_workload.batch_matmul_nkkm(2, 4, 4, 4)))
    assert [int(sch.get(loop).extent) for loop in sch.get_loops(sch.get_block("Z"))] == [2, 4, 4, 4]
    sch = tvm.tir.Schedule(te.create_prim_func(te_workload.matmul_relu(4, 4, 4)))
    sch.get_block("C")


def test_install_is_idempotent_and_uninstall_forgets(installed):
    compat.install()
    compat.install()
    from tessera.compat import _finder

    assert sys.meta_path.count(_finder) == 1
    import tvm  # noqa: F401

    compat.uninstall()
    assert not compat.installed() and "tvm" not in sys.modules and "tvm.tir" not in sys.modules
    assert "tessera.tir" in sys.modules
    compat.install()


def _run(code, *args):
    return subprocess.run([sys.executable, *args], input=None, capture_output=True, text=True,
                          cwd=None, timeout=300) if code is None else subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=ENV)


def test_nothing_is_mapped_without_install():
    # In a fresh process: importing tessera (and tessera.compat) does not make `import tvm` work.
    proc = _run("import tessera, tessera.compat, tessera.tir\n"
                "try:\n    import tvm\nexcept ImportError:\n    print('no tvm')\n"
                "else:\n    print('tvm from', tvm.__file__)")
    assert proc.returncode == 0, proc.stderr
    assert "__tessera_compat__" not in proc.stdout and ("no tvm" in proc.stdout or "tvm from" in proc.stdout)
    assert "tessera" not in proc.stdout


def test_python_dash_m_runs_a_tvm_script_unchanged(tmp_path):
    script = tmp_path / "tvm_program.py"
    script.write_text(textwrap.dedent('''
        import sys
        import numpy as np
        import tvm
        import tvm.testing
        from tvm import tir
        from tvm.script import tir as T

        @T.prim_func
        def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.remap("S", [i])
                    B[vi] = A[vi] + T.float32(1)

        sch = tir.Schedule(add_one)
        i, = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[None, 4])
        lib = tvm.compile(sch.mod, target="llvm")
        a = tvm.runtime.tensor(np.arange(8, dtype="float32"), tvm.cpu(0))
        b = tvm.nd.empty((8,), "float32", tvm.cpu(0))
        lib(a, b)
        tvm.testing.assert_allclose(b.numpy(), np.arange(8) + 1)
        print("ok", sys.argv[1:])
    '''))
    proc = subprocess.run([sys.executable, "-m", "tessera.compat", str(script), "x", "y"],
                          capture_output=True, text=True, timeout=600, env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok ['x', 'y']"


def test_python_dash_m_pytest_runs_tvm_style_tests(tmp_path):
    (tmp_path / "test_tvm_style.py").write_text(textwrap.dedent('''
        import tvm
        import tvm.testing

        dtype = tvm.testing.parameter("float32", "int8")
        shape, size = tvm.testing.parameters(((2, 3), 6), ((4,), 4))

        def test_params(dtype, shape, size):
            assert dtype in ("float32", "int8")
            n = 1
            for s in shape:
                n *= s
            assert n == size

        @tvm.testing.requires_cuda
        def test_needs_cuda():
            assert tvm.cuda(0).exist

        @tvm.testing.requires_rocm
        def test_needs_rocm():
            raise AssertionError("tessera has no ROCm: this must be skipped")

        def test_targets(target, dev):
            assert tvm.testing.device_enabled(target)
            assert dev.device_type in (1, 2)

        if __name__ == "__main__":
            tvm.testing.main()
    '''))
    proc = subprocess.run([sys.executable, "-m", "tessera.compat", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path / "test_tvm_style.py"), "-rs"], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env=ENV)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    # rocm is skipped with its reason; cuda runs or skips; the targets run on llvm at least.
    assert "need ROCm" in out
    proc = subprocess.run([sys.executable, "-m", "tessera.compat", str(tmp_path / "test_tvm_style.py"), "-q",
                           "-p", "no:cacheprovider", "-k", "params"], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env=ENV)
    # 2 dtypes x 2 correlated (shape, size) pairs, not the cross product (8).
    assert proc.returncode == 0 and "4 passed" in proc.stdout, proc.stdout + proc.stderr


def test_compass_top_level_names(installed):
    import tvm
    from tvm import get_range
    from tvm.compass import CompassInfo
    from tvm.compass.dsl import get_rpc_session

    assert get_range("int8") == (-128, 127) and get_range is tessera.dsl.get_range
    assert CompassInfo is tessera.dsl.CompassInfo and get_rpc_session is tessera.dsl.get_rpc_session
    assert "CompassInfo" in dir(tvm.compass) and "get_range" in dir(tvm)


def test_relax_imports_but_every_use_names_what_is_missing(installed):
    import tvm
    from tvm.script import relax as R

    proxy = tvm.script.parser.relax.entry.TensorProxy  # naming works (module-level tables)
    assert proxy.__name__ == "TensorProxy"
    with pytest.raises(NotImplementedError, match="Relax .* is not part of tessera"):
        R.function(lambda x: x)
    with pytest.raises(NotImplementedError, match="tvm.script.relax.Tensor: Relax"):
        R.Tensor([10], "float32")


def test_tvm_ffi_containers_are_tesseras_nodes(installed):
    import tvm_ffi
    from tvm.script import tir as T

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("b"):
                T.block_attr({"meta": {"k": [1, 2]}})
                A[i] = T.float32(0)

    block = f.body.block.body.body.block
    assert isinstance(block.annotations["meta"], tvm_ffi.container.Map)
    assert isinstance(block.annotations["meta"]["k"], tvm_ffi.container.Array)


def test_dialects_through_the_parser_package(installed):
    from tvm.script.parser import ir as I
    from tvm.script.parser import ir_module
    from tvm.script.parser import tir as T

    assert T is tessera.script.tir and I is tessera.script.ir
    assert ir_module is tessera.script.ir.ir_module


def test_printed_header_names_tvm_while_installed(installed):
    import tvm
    from tvm.script import tir as T
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tir as IB_T

    @T.prim_func
    def f():
        T.evaluate(0)

    assert str(f).splitlines()[0] == "# from tvm.script import tir as T"
    assert tvm.IRModule({"f": f}).script().splitlines()[0] == "# from tvm.script import ir as I"
    with IRBuilder() as ib:
        with IB_T.prim_func():
            IB_T.evaluate(0)
    tvm.ir.assert_structural_equal(ib.get().body, f.body)
    compat.uninstall()
    assert str(f).splitlines()[0] == "# from tessera.script import tir as T"


def test_register_global_func_is_register_func(installed):
    # TVM v0.23 spells it tvm.register_global_func (from tvm_ffi); a packed call finds it.
    import numpy as np

    import tvm
    from tvm import te, tir

    @tvm.register_global_func("compat.test.double")
    def double(a, b):
        b.copyfrom(a.numpy() * 2)

    try:
        assert tvm.get_global_func("compat.test.double") is double
        A = te.placeholder((4,), name="A")
        B = te.extern((4,), [A], lambda ins, outs: tir.call_packed("compat.test.double", ins[0], outs[0]))
        lib = tessera.build(te.create_prim_func([A, B]), target="c")
        a = np.arange(4, dtype="float32")
        b = tessera.nd.empty((4,), "float32")
        lib(tessera.nd.array(a), b)
        np.testing.assert_array_equal(b.numpy(), a * 2)
    finally:
        tessera.runtime.remove_global_func("compat.test.double")


def test_contrib_has_only_utils_tempdir(installed):
    import tvm
    from tvm.contrib import cc, utils
    from tvm.contrib.utils import tempdir

    assert utils is tvm.contrib.utils and utils.tempdir is tempdir
    tmp = tempdir()
    path = tmp.relpath("lib.txt")
    with open(path, "w") as f:
        f.write("x")
    assert tmp.listdir() == ["lib.txt"] and os.path.dirname(path) == tmp.path
    directory = tmp.path
    del tmp  # removed with its files when collected
    assert not os.path.exists(directory)
    with tempdir(keep_for_debug=True) as kept:
        pass
    assert os.path.isdir(kept.path)
    os.rmdir(kept.path)
    # The rest of tvm.contrib names what is missing when used.
    with pytest.raises(NotImplementedError, match="tvm.contrib.cc.create_shared: tvm.contrib"):
        cc.create_shared("a.so", ["a.o"])
    with pytest.raises(ImportError, match="tessera does not provide tvm.contrib.nvcc"):
        import tvm.contrib.nvcc  # noqa: F401


def test_children_of_python_m_tessera_compat_import_tvm_too(tmp_path):
    child = "import tvm, tessera; assert tvm.tir is tessera.tir; print(tvm.device('cpu').exist)"
    script = tmp_path / "parent.py"
    script.write_text("import subprocess, sys\n"
                      f"print(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, "
                      "text=True, check=True).stdout.strip())\n")
    out = subprocess.run([sys.executable, "-m", "tessera.compat", str(script)], env=ENV, cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "True"
    # A plain interpreter has no tvm mapping, and the stand-in refuses another name.
    plain = subprocess.run([sys.executable, "-c", "import tvm"], env=ENV, cwd=tmp_path, capture_output=True, text=True)
    assert plain.returncode != 0 and "No module named 'tvm'" in plain.stderr
    other = subprocess.run([sys.executable, "-c", "import tessera.compat._child.tvm"], env=ENV, cwd=tmp_path,
                           capture_output=True, text=True)
    assert "it is not imported under another name" in other.stderr
