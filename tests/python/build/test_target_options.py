"""Options of host target strings are honoured (as C compiler flags) or refused with a reason."""

import numpy as np
import pytest

import tessera as ts
from tessera import driver
from tessera.script import tir as T


@T.prim_func
def double(a: T.Buffer((37,), "float32"), b: T.Buffer((37,), "float32")):
    for i in range(37):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            b[vi] = a[vi] * T.float32(2)


def run(target):
    lib = ts.build(double, target=target)
    a = np.arange(37, dtype="float32")
    b = np.zeros(37, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a * 2)
    return lib


def host_arch():
    return driver._arch(driver._host_machine())


def test_plain_targets_add_no_flags():
    assert driver.host_compile_options("c") == []
    assert driver.host_compile_options("llvm -keys=cpu -tag=x") == []


@pytest.mark.parametrize("option,flag", [("-opt-level=1", "-O1"), ("-fast-math", "-ffast-math"),
                                         ("-mattr=+fma,-avx512f", "-mno-avx512f")])
def test_options_become_compiler_flags(option, flag):
    lib = run("llvm " + option)
    assert flag in lib._mod.compile_command
    assert flag in driver.host_compile_options("c " + option)


def test_mcpu_selects_the_cpu():
    if not host_arch().startswith("x86"):
        pytest.skip("the CPU name below is an x86 one")
    lib = run("llvm -mcpu=haswell")
    assert "-march=haswell" in lib._mod.compile_command


def test_the_host_triple_is_accepted():
    run(f"llvm -mtriple={driver._host_machine()}")


def test_a_cross_triple_is_refused_naming_the_compiler():
    other = "aarch64-linux-gnu" if not host_arch().startswith("aarch64") else "x86_64-linux-gnu"
    with pytest.raises(ValueError, match=rf"cross target \({other}\).*{other}-gcc"):
        ts.build(double, target=f"llvm -mtriple={other}")


@pytest.mark.parametrize("target,message", [
    ("llvm -libs=cblas", "option '-libs' is not supported"),
    ("llvm -opt-level=7", "-opt-level is 0, 1, 2 or 3"),
    ("llvm -mattr=avx2", "start with \\+ or -"),
])
def test_bad_options_are_refused(target, message):
    with pytest.raises(ValueError, match=message):
        ts.build(double, target=target)
