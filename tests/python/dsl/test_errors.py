"""Errors: each a DiagnosticError (or TypeError/ValueError for calls) with the source location."""

import inspect

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S
from tessera.error import DiagnosticError, TesseraError


def line_of(func, text):
    """The file line of the first source line of ``func`` containing ``text``."""
    lines, start = inspect.getsourcelines(func.func if hasattr(func, "func") else func)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def expect_diag(func, text, message):
    with pytest.raises(DiagnosticError) as info:
        BuildManager().build(func)
    err = info.value
    assert message in err.message, err.message
    assert err.line == line_of(func, text), str(err)
    rendered = str(err)
    assert f"{__file__}:{err.line}:" in rendered
    assert text in rendered  # the source line is quoted
    assert "^" in rendered  # with a caret
    return err


def test_unknown_intrinsic():
    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        S.vload(a)
        S.vaddd(a, 1)

    expect_diag(f, "S.vaddd(a, 1)", "has no attribute 'vaddd'")


def test_undefined_name():
    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        a[0] = undefined_thing + 1  # noqa: F821

    expect_diag(f, "undefined_thing + 1", "name 'undefined_thing' is not defined")


def test_wrong_argument_type_to_intrinsic():
    @S.prim_func
    def f(a: S.ptr("int32", "global"), n: S.i32):
        v = S.vload(n)
        S.vstore(v, a)

    expect_diag(f, "S.vload(n)", "S.vload expects a pointer, got a int32 expression")


def test_argument_type_mismatch():
    @S.prim_func
    def f(a: S.ptr("int32", "global"), b: S.ptr("float32", "global")):
        S.vstore(S.vadd(S.vload(a), S.vload(b)), a)

    expect_diag(f, "S.vadd(S.vload(a), S.vload(b))", 'Argument type mismatch: "int32x8" vs. "float32x8"')


def test_type_changing_reassignment():
    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        x = 1
        x = 3.14
        a[0] = x

    expect_diag(f, "x = 3.14", 'Type mismatch assignment: "int32" vs. "float32"')


def test_missing_annotation():
    @S.prim_func
    def f(a):
        a[0] = 1

    with pytest.raises(DiagnosticError, match="parameter 'a' needs a type annotation"):
        BuildManager().build(f)


def test_unsupported_syntax():
    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        a[0] = [x for x in range(3)][0]

    expect_diag(f, "[x for x in range(3)]", "unsupported expression: ListComp")


def test_builtin_max_rejected():
    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        a[0] = max(a[0], a[1])

    expect_diag(f, "max(a[0], a[1])", "please use S.max")


def test_block_scoping_is_c_like():
    @S.prim_func
    def f(a: S.ptr("int32", "global"), n: S.i32):
        if n > 0:
            y = 1
        a[0] = y

    expect_diag(f, "a[0] = y", "name 'y' is not defined")


def test_subroutine_argument_checks():
    @S.prim_func
    def sub(p: S.ptr("int32", "global"), k: S.i32):
        p[0] = k

    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        sub(a, 1.5)

    expect_diag(f, "sub(a, 1.5)", "cannot use the float 1.5 where int32 is expected")


def test_recursion_is_rejected():
    @S.prim_func
    def rec(a: S.ptr("int32", "global")):
        rec(a)

    with pytest.raises(DiagnosticError, match="recursion is not supported"):
        BuildManager().build(rec)


def test_literal_out_of_range():
    @S.prim_func
    def f(a: S.ptr("int8", "global")):
        a[0] = 300

    expect_diag(f, "a[0] = 300", "the literal 300 is out of range for int8")


def test_unknown_and_x1_targets():
    with pytest.raises(ValueError, match="unknown target \"X9\"; known targets: X2_1204"):
        BuildManager(target="X9")
    with pytest.raises(ValueError, match="does not support X1"):
        BuildManager(target="X1_1204")
    assert BuildManager(target="X3P_1304MP2").target.cores == 2


@S.prim_func
def add_one(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    S.vstore(S.vadd(S.vload(a), 1), b)


@S.prim_func
def with_scalar(a: S.ptr("int32", "global"), n: S.i32):
    a[0] = n


def test_executor_argument_checks():
    ex = BuildManager().build(add_one)
    a, b = np.zeros(8, "int32"), np.zeros(8, "int32")
    with pytest.raises(TypeError, match=r"add_one\(\) takes 2 arguments \(a, b\) but 1 were given"):
        ex(a)
    with pytest.raises(TypeError, match="argument 'a' of add_one\\(\\) must be a numpy array, got list"):
        ex([0] * 8, b)
    with pytest.raises(ValueError, match="argument 'b' of add_one\\(\\) has 4 elements but the kernel accesses 8"):
        ex(a, np.zeros(4, "int32"))
    # A strided view passes a pointer to its first element (as Compass); the kernel may reach the
    # viewed array from there to its end: here 6 elements.
    with pytest.raises(ValueError, match="argument 'a' of add_one\\(\\) has 6 elements but the kernel accesses 8"):
        ex(np.zeros(16, "int32")[10::2], b)
    ex2 = BuildManager().build(with_scalar)
    with pytest.raises(TypeError, match="argument 'n' of with_scalar\\(\\) must be an integer"):
        ex2(a, 1.5)
    with pytest.raises(ValueError, match="out of range for int32") as info:
        ex2(a, 2**40)
    # Argument errors are tessera errors too.
    assert isinstance(info.value, TesseraError)
    with pytest.raises(TesseraError, match="must be a numpy array") as info:
        ex([0] * 8, b)
    assert isinstance(info.value, TypeError)
    ex2(a, np.int32(7))
    assert a[0] == 7


def test_missing_c_compiler(monkeypatch, tmp_path):
    from tessera.error import BuildError

    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))

    @S.prim_func
    def fresh(a: S.ptr("int32", "global")):
        a[0] = 12345

    with pytest.raises(BuildError, match="no C compiler found"):
        BuildManager().build(fresh)


# ---- The errors the language reference names, each at its source line ------------------------


def test_sign_mismatch_without_out_sign():
    @S.prim_func
    def f(a: S.ptr("int16", "global"), b: S.ptr("uint16", "global"), out: S.ptr("int16", "global")):
        S.vstore(S.vadd(S.vload(a), S.vload(b)), out)

    expect_diag(f, "S.vadd(S.vload(a), S.vload(b))", 'the operands differ in sign: "int16x16" vs. "uint16x16"')

    @S.prim_func
    def g(a: S.ptr("int16", "global"), b: S.ptr("uint16", "global"), out: S.ptr("int16", "global")):
        S.vstore(S.vadd(S.vload(a), S.vload(b), out_sign="s"), out)

    a = np.arange(16, dtype="int16") - 8
    b = np.full(16, 65535, "uint16")
    out = np.zeros(16, "int16")
    BuildManager().build(g)(a, b, out)
    np.testing.assert_array_equal(out, a - 1)


def test_broadcast_of_an_immediate_that_fits_no_type():
    @S.prim_func
    def f(a: S.ptr("uint16", "global")):
        S.vstore(S.vadd(S.vload(a), 70000), a)

    expect_diag(f, "S.vadd(S.vload(a), 70000)", "the literal 70000 fits none of the types it could take here (uint16x16, int16x16)")


def test_builtin_min_on_vectors():
    @S.prim_func
    def f(a: S.ptr("float32", "global")):
        S.vstore(min(S.vload(a), 0.0), a)

    expect_diag(f, "min(S.vload(a), 0.0)", "the builtin min() cannot be used on kernel values; please use S.min")


def test_argument_type_mismatch_of_a_subroutine():
    @S.prim_func
    def sub(v: S.float32x8) -> S.float32x8:
        return v

    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        S.vstore(sub(S.vload(a)), a)

    expect_diag(f, "S.vstore(sub(S.vload(a)), a)", "Argument type mismatch: 'v' expects \"float32x8\", got \"int32x8\"")


def test_scope_overflow():
    @S.prim_func
    def f(out: S.ptr("int32", "global")):
        tile = S.alloc_buffer((64, 129), "int32", scope="lsram")
        out[0] = tile[0, 0]

    expect_diag(f, 'tile = S.alloc_buffer((64, 129), "int32", scope="lsram")',
                'lsram allocation "tile" (33024 bytes) exceeds the local SRAM of X2_1204')


def test_scalar_shift_count_out_of_range():
    @S.prim_func
    def f(a: S.ptr("int16", "global")):
        a[0] = a[1] << 16

    expect_diag(f, "a[0] = a[1] << 16", "a scalar shift count must be in [0, 16), got 16")


def test_constant_index_outside_a_local_buffer():
    @S.prim_func
    def f(a: S.ptr("int32", "global")):
        buf = S.alloc_buffer((8,), "int32")
        buf[100] = 1
        a[0] = buf[0]

    expect_diag(f, "buf[100] = 1", "Index 100 is out of bounds for dimension 0 of buffer buf (extent 8)")


@pytest.mark.parametrize("annotation,cls,message", [
    ('S.ptr("int7", "global")', TypeError, 'unknown data type "int7"'),
    ('S.ptr("boolx30", "global")', TypeError, 'the virtual mask type "boolx30"'),
    ('S.ptr("int32", "xx")', ValueError, "unknown memory scope 'xx'")])
def test_bad_pointer_annotation_is_located(annotation, cls, message):
    # Found by tests/fuzz: the annotation runs when Python defines the function, and its error
    # had no source location.
    from tessera.error import TesseraError

    source = f"def kern(out: S.ptr('int32', 'global'),\n         a: {annotation}):\n    pass\n"
    with pytest.raises(cls) as info:
        exec(compile(source, "kernel_file.py", "exec"), {"S": S})
    err = info.value
    assert isinstance(err, TesseraError) and message in err.message
    assert (err.file, err.line) == ("kernel_file.py", 2)
    assert str(err).startswith("kernel_file.py:2:")


@pytest.mark.parametrize("dtype", ["float64", "int7", "boolx30"])
def test_pointer_of_an_element_type_the_dsl_lacks_is_an_assertion_error(dtype):
    # Compass's S.ptr refuses such a type with an AssertionError; tessera's error is both that
    # and a TypeError, located at the annotation.
    from tessera.error import PointerTypeError

    source = f"def kern(a: S.ptr('{dtype}', 'global')):\n    pass\n"
    with pytest.raises(AssertionError) as info:
        exec(compile(source, "kernel_file.py", "exec"), {"S": S})
    err = info.value
    assert isinstance(err, PointerTypeError) and isinstance(err, TypeError)
    assert f'"{dtype}"' in err.message
    assert (err.file, err.line) == ("kernel_file.py", 1)


def test_wrong_argument_count_is_an_assertion_error():
    # Compiled and under PySim: an AssertionError as in Compass, still a TypeError; the message
    # names the parameters (a TensorIR build: see test_tir_build.py).
    from tessera.error import ArgumentCountError

    @S.prim_func
    def k(a: S.ptr("i32x8", "global"), out: S.ptr("i32x8", "global")):
        out[0] = a[0]

    a = np.arange(8, dtype="int32")
    for run in (BuildManager().build(k), k):
        with pytest.raises(AssertionError) as info:
            run(a)
        assert isinstance(info.value, ArgumentCountError) and isinstance(info.value, TypeError)
        assert str(info.value) == "k() takes 2 arguments (a, out) but 1 were given"
    out = np.zeros(8, dtype="int32")
    BuildManager().build(k)(a, out)
    np.testing.assert_array_equal(out, a)


def test_unknown_attribute_in_an_annotation_is_located():
    # Found by tests/fuzz: `S.ptr_(...)` in an annotation was a bare AttributeError.
    source = "def kern(\n    a: S.ptr_('int32', 'global')):\n    pass\n"
    with pytest.raises(AttributeError) as info:
        exec(compile(source, "kernel_file.py", "exec"), {"S": S})
    assert isinstance(info.value, TesseraError)
    assert (info.value.file, info.value.line) == ("kernel_file.py", 2)
    assert "did you mean S.ptr?" in str(info.value)
    assert not hasattr(S, "ptr_")  # hasattr inside tessera and elsewhere still works


def test_bad_pointer_annotation_points_at_its_own_column(tmp_path):
    # Two S.ptr annotations on one line: the error points at the bad one (the second), not at
    # the first "S.ptr(" of the line.
    path = tmp_path / "two_ptrs.py"
    line = "def kern(out: S.ptr('int32', 'global'), a: S.ptr('int32', 'xx')):\n"
    path.write_text(line + "    pass\n")
    with pytest.raises(ValueError) as info:
        exec(compile(path.read_text(), str(path), "exec"), {"S": S})
    err = info.value
    column = line.index("S.ptr('int32', 'xx')")
    assert (err.line, err.column) == (1, column)
    caret = str(err).splitlines()[-1]
    assert caret.index("^") == str(err).splitlines()[-2].index("S.ptr('int32', 'xx')")
    assert len(caret.strip().split()[-1]) == len("S.ptr('int32', 'xx')")  # ^~~~ under it
