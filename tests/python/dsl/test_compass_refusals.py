"""Programs that Compass 4.2 refuses are refused here too, each with an error of our own at its
source location; the nearest correct program of each is still accepted and computes the right
values (compiled and PySim against numpy)."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S
from tessera.error import DiagnosticAssertionError, DiagnosticError, PySimArgumentError

from _util import expect_diag, line_of, run_both

# A string defined outside a kernel is a compile-time value inside it.
INT32X8 = "int32x8"


# ---- a loop variable needs a name of its own ---------------------------------------------------


def test_loop_variable_defined_before_the_loop_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global")):
        i = 0
        for i in range(1):
            b[i] = a[i]

    err = expect_diag(k, "for i in range(1):", "the loop variable 'i' is already defined before the loop")
    assert isinstance(err, RuntimeError)
    assert err.column == line_and_column(k, "for i in range(1):", "i in")[1]


def test_loop_variable_named_as_a_parameter_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), n: S.i32):
        for n in S.tec_range(4):
            a[n] = n

    expect_diag(k, "for n in S.tec_range(4):", "the loop variable 'n' is already defined before the loop")


def test_loop_variable_of_an_outer_loop_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        for i in range(2):
            for i in range(3):  # noqa: B007
                a[i] = i

    expect_diag(k, "for i in range(3):", "the loop variable 'i' is already defined before the loop")


def test_loop_variable_reused_by_sibling_loops_and_after_a_block():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        for i in range(4):
            out[i] = a[i] + 1
        for i in range(4, 8):
            out[i] = a[i] * 2
        if a[0] > 100:
            j = 3
            out[0] = j
        for j in range(8, 10):
            out[j] = a[j] - j

    a = np.arange(10, dtype="int32")
    want = np.concatenate([a[:4] + 1, a[4:8] * 2, a[8:10] - np.arange(8, 10)]).astype("int32")
    for got in run_both(k, a, np.zeros(10, "int32")):
        np.testing.assert_array_equal(got[1], want)


def line_and_column(func, text, needle):
    """(file line, column) of ``needle`` in the first source line of ``func`` holding ``text``."""
    import inspect

    line = line_of(func, text)
    lines, start = inspect.getsourcelines(func.func)
    return line, lines[line - start].index(needle)


# ---- no string variables -----------------------------------------------------------------------


def test_string_variable_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global")):
        dtype = "int32x8"
        lsram = S.alloc_buffer(shape=(32,), dtype=dtype, scope="lsram")
        b[0] = lsram[0]

    err = expect_diag(k, 'dtype = "int32x8"', "'dtype' would be a string variable")
    assert isinstance(err, RuntimeError)


def test_string_in_a_tuple_assignment_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        n, scope = 4, "lsram"
        a[0] = n

    expect_diag(k, 'n, scope = 4, "lsram"', "'scope' would be a string variable")


def test_strings_written_in_place_defined_outside_or_bound_by_meta_var():
    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global")):
        dt = S.meta_var("int32x8")
        buf = S.alloc_buffer(shape=(2,), dtype=dt, scope="lsram")
        tmp = S.alloc_buffer(shape=(2,), dtype=INT32X8, scope="private")
        out = S.alloc_buffer(shape=(2,), dtype="int32x8", scope="lsram")
        buf[0] = a[0] + 1
        tmp[0] = buf[0] * 2
        out[0] = tmp[0] - 3
        b[0] = out[0]

    a = np.arange(8, dtype="int32")
    for got in run_both(k, a, np.zeros(8, "int32")):
        np.testing.assert_array_equal(got[1], (a + 1) * 2 - 3)


# ---- returned pointers ---------------------------------------------------------------------------


def test_returned_pointer_of_another_scope_is_refused():
    @S.prim_func
    def sub(a: S.ptr("i32", "global")) -> S.ptr("i32", "global"):
        if a[0] > 0:
            ptr = S.alloc((128,), "i32")
            return ptr
        return a

    @S.prim_func
    def k(a: S.ptr("i32", "global"), out: S.ptr("i32", "global")):
        a = sub(a)
        out[0] = a[0]

    with pytest.raises(DiagnosticError) as info:
        BuildManager().build(k)
    err = info.value
    assert "returns a pointer to global memory, this one points to private memory" in err.message
    assert err.line == line_of(sub, "return ptr")
    assert "return ptr" in str(err) and "^~~" in str(err)


def test_returned_pointer_to_the_functions_own_storage_is_refused():
    @S.prim_func
    def sub(a: S.ptr("i32")) -> S.ptr("i32"):
        if a[0] > 0:
            ptr = S.alloc((128,), "i32")
            return ptr + 4
        return a

    @S.prim_func
    def k(out: S.ptr("i32", "global")):
        ptr = S.alloc((128,), "i32")
        ptr = sub(ptr)
        out[0] = ptr[0]

    with pytest.raises(AssertionError) as info:
        BuildManager().build(k)
    err = info.value
    assert isinstance(err, DiagnosticAssertionError)
    assert "sub() returns a pointer into storage that it allocates itself" in err.message
    assert err.line == line_of(sub, "return ptr + 4")
    assert err.column == line_and_column(sub, "return ptr + 4", "ptr + 4")[1]
    assert "return ptr + 4" in str(err) and "^" in str(err)


def test_returned_view_of_the_functions_own_storage_is_refused():
    # The pointer seen as another type at an offset that is not a whole element of it: the
    # parser materializes a new pointer variable, still into the function's own buffer.
    @S.prim_func
    def sub(a: S.ptr("i8")) -> S.ptr("i32"):
        buf = S.alloc_buffer((64,), "i8")
        buf[0] = a[0]
        return (buf.addr_of(0) + 3).as_ptr("i32")

    @S.prim_func
    def k(a: S.ptr("i8", "global"), out: S.ptr("i32", "global")):
        local = S.alloc((4,), "i8")
        local[0] = a[0]
        p = sub(local)
        out[0] = p[0]

    with pytest.raises(DiagnosticAssertionError, match="returns a pointer into storage that it allocates"):
        BuildManager().build(k)


def test_returned_pointers_derived_from_parameters_are_accepted():
    @S.prim_func
    def second_half(a: S.ptr("i32", "global"), n: S.i32) -> S.ptr("i32", "global"):
        return a + n // 2

    @S.prim_func
    def pick(a: S.ptr("i32", "global"), b: S.ptr("i32", "global")) -> S.ptr("i32", "global"):
        if a[0] > b[0]:
            return a
        return second_half(b, 8)

    @S.prim_func
    def k(a: S.ptr("i32", "global"), b: S.ptr("i32", "global"), out: S.ptr("i32", "global")):
        p = pick(a, b)
        for i in range(4):
            out[i] = p[i]

    a = np.arange(8, dtype="int32")
    b = np.arange(100, 108, dtype="int32")
    for got in run_both(k, a, b, np.zeros(4, "int32")):
        np.testing.assert_array_equal(got[2], b[4:8])


# ---- pointer arguments of sub-functions keep their memory scope ----------------------------------


def test_pointer_argument_of_another_scope_is_refused():
    @S.prim_func
    def sub(a: S.i32, c: S.ptr("fp16")):
        c[0] = S.fp16(a)

    @S.prim_func
    def k(x: S.ptr("fp16", "lsram")):
        sub(S.i32(3), x)

    expect_diag(k, "sub(S.i32(3), x)", "'c' of sub() expects a pointer to private memory, got one to "
                                       "lsram memory")


def test_pointer_argument_of_the_same_scope_is_accepted():
    @S.prim_func
    def scale(c: S.ptr("fp16"), n: S.i32):
        for i in range(n):
            c[i] = c[i] * S.fp16(2)

    @S.prim_func
    def k(a: S.ptr("fp16", "global"), out: S.ptr("fp16", "global")):
        tmp = S.alloc((4,), "fp16")
        for i in range(4):
            tmp[i] = a[i]
        scale(tmp, 4)
        for i in range(4):
            out[i] = tmp[i]

    a = np.array([1.5, -2, 3, 0.25], "float16")
    for got in run_both(k, a, np.zeros(4, "float16")):
        np.testing.assert_array_equal(got[1], a * 2)


# ---- no bfloat16 scalar arithmetic ---------------------------------------------------------------


def test_bfloat16_scalar_comparison_is_refused():
    @S.prim_func
    def k(a: S.ptr("bf16", "global"), b: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        mask_out = a[0] == b[0]
        if mask_out:
            out[0] = a[0]

    err = expect_diag(k, "mask_out = a[0] == b[0]", 'operator == on "bfloat16" scalars')
    assert isinstance(err, RuntimeError)


@pytest.mark.parametrize("other", ["int16", "bf16"])
def test_bfloat16_scalar_arithmetic_is_refused(other):
    @S.prim_func
    def k(a: S.ptr(other, "global"), b: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        out[0] = a[0] * b[0]

    expect_diag(k, "out[0] = a[0] * b[0]", 'operator * on "bfloat16" scalars')


def test_bfloat16_scalar_arithmetic_in_a_python_function_is_refused():
    add = lambda x, y: x + y  # noqa: E731

    @S.prim_func
    def k(a: S.ptr("int16", "global"), b: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        out[0] = add(a[0], b[0])

    expect_diag(k, "out[0] = add(a[0], b[0])", 'operator + on "bfloat16" scalars')


@pytest.mark.parametrize("expr, message", [
    ("S.max(a[0], a[1])", 'S.max of a "bfloat16" scalar'),
    ("S.min(a[0], 1.0)", 'S.min of a "bfloat16" scalar'),
    ("S.abs(a[0])", 'S.abs of a "bfloat16" scalar'),
    ("S.rint(a[0])", 'S.rint of a "bfloat16" scalar'),
    ("S.clip(a[0], a[1], a[2])", 'S.clip of a "bfloat16" scalar'),
    ("S.bf16(S.isnan(a[0]))", 'S.isnan of a "bfloat16" scalar'),
    ("-a[0]", 'operator - on "bfloat16" scalars'),
])
def test_bfloat16_scalar_intrinsics_are_refused(expr, message, tmp_path):
    # Written to a file of its own so that each expression is the source line reported.
    path = tmp_path / "kernel_bf16.py"
    path.write_text(f"""from tessera.dsl import script as S


@S.prim_func
def k(a: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
    out[0] = {expr}
""")
    import importlib.util

    spec = importlib.util.spec_from_file_location("kernel_bf16", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(DiagnosticError) as info:
        BuildManager().build(module.k)
    err = info.value
    assert message in err.message and "convert" in err.message
    assert (err.file, err.line) == (str(path), 6)
    assert f"out[0] = {expr}" in str(err) and "^" in str(err)


def test_bfloat16_scalar_intrinsics_through_float32_and_on_vectors_are_accepted():
    @S.prim_func
    def k(a: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        x = S.fp32(a[0])
        out[16] = S.max(x, S.fp32(a[1])) + S.abs(x) - S.clip(S.fp32(a[2]), -1.0, 1.0)
        v = S.vload(a)
        S.vstore(S.abs(S.max(v, S.bf16(0.5))), out)

    bf16 = ml_dtypes.bfloat16
    a = np.linspace(-3, 3, 16).astype(bf16)
    f = a.astype("float32")
    want = np.zeros(17, bf16)
    want[:16] = np.abs(np.maximum(f, 0.5)).astype(bf16)
    want[16] = (max(f[0], f[1]) + abs(f[0]) - np.clip(f[2], -1.0, 1.0)).astype(bf16)
    for got in run_both(k, a, np.zeros(17, bf16)):
        np.testing.assert_array_equal(got[1].astype("float32"), want.astype("float32"))


def test_bfloat16_scalars_through_float32_and_bfloat16_vectors_are_accepted():
    @S.prim_func
    def k(a: S.ptr("bf16", "global"), b: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        if S.fp32(a[0]) == S.fp32(b[0]):
            out[16] = a[0]
        else:
            out[16] = S.fp32(a[1]) * S.fp32(b[1])
        S.vstore(S.vload(a) + S.vload(b), out)

    bf16 = ml_dtypes.bfloat16
    a = np.linspace(-4, 4, 16).astype(bf16)
    b = np.linspace(1, 3, 16).astype(bf16)
    want = np.zeros(17, bf16)
    want[:16] = (a.astype("float32") + b.astype("float32")).astype(bf16)
    want[16] = (a[1].astype("float32") * b[1].astype("float32")).astype(bf16)
    for got in run_both(k, a, b, np.zeros(17, bf16)):
        np.testing.assert_array_equal(got[2].astype("float32"), want.astype("float32"))


# ---- the X2 matrix instructions on X3 targets ----------------------------------------------------


def _matrix_kernel(name):
    op = getattr(S, name)

    @S.prim_func
    def k(a: S.ptr("fp16x16", "global"), b: S.ptr("fp16x16", "global"), c: S.ptr("fp32x8", "global"),
          d: S.ptr("fp32x8", "global")):
        acc = S.vconcat((c[0], c[1]))
        op(acc.addr, a[0], b[0])
        lo, hi = S.vsplit(acc)
        d[0] = lo
        d[1] = hi

    return k


@pytest.mark.parametrize("target", ["X3P_1304", "X3S_1304MP2"])
@pytest.mark.parametrize("name", ["vmma", "vmml"])
def test_matrix_instructions_are_refused_on_x3_targets(name, target):
    k = _matrix_kernel(name)
    err = expect_diag(k, "op(acc.addr, a[0], b[0])", f"S.{name} is an X2 instruction; the target {target} "
                                                    f"has no such instruction", target=target)
    assert isinstance(err, RuntimeError)


def test_a_pass_refusal_is_reported_on_stderr_once(capfd):
    # Compass prints every error report to stderr before raising; a refusal found by a pass
    # (here the target-feature check), not by the parser, is reported the same way, once.
    k = _matrix_kernel("vmml")
    message = "S.vmml is an X2 instruction; the target X3P_1304 has no such instruction"
    with pytest.raises(DiagnosticError) as info:
        BuildManager(target="X3P_1304").build(k)
    err = capfd.readouterr().err
    assert err.count(message) == 1
    assert str(info.value) in err  # the whole report: location, source line and caret
    # Raised again by a later build, it is reported again (a new exception).
    with pytest.raises(DiagnosticError):
        BuildManager(target="X3P_1304").lower(k)
    assert capfd.readouterr().err.count(message) == 1


def test_a_parse_error_is_reported_on_stderr_once(capfd):
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        a[0] = undefined_name  # noqa: F821

    with pytest.raises(DiagnosticError) as info:
        BuildManager().build(k)
    err = capfd.readouterr().err
    assert err.count(info.value.message) == 1 and str(info.value) in err


@pytest.mark.parametrize("name", ["vmma", "vmml"])
def test_matrix_instructions_are_accepted_on_x2(name):
    k = _matrix_kernel(name)
    a = np.linspace(-2, 2, 16).astype("float16").reshape(4, 4)
    b = np.linspace(3, -1, 16).astype("float16").reshape(4, 4)
    c = np.linspace(0, 1, 16).astype("float32").reshape(4, 4)
    want = a.astype("float32") @ b.astype("float32").T + (c if name == "vmma" else 0)
    for got in run_both(k, a, b, c, np.zeros((4, 4), "float32")):
        np.testing.assert_allclose(got[3], want, rtol=1e-5, atol=1e-5)


# ---- float S.vqdpa is an X2 instruction ----------------------------------------------------------


@S.prim_func
def _float_vqdpa(a: S.ptr("fp16x16", "global"), b: S.ptr("fp16x16", "global"), c: S.ptr("fp32x8", "global"),
                 d: S.ptr("fp32x8", "global")):
    d[0] = S.vqdpa(c[0], a[0], b[0])


@S.prim_func
def _float_vqdpa_in_a_sub_function(a: S.ptr("fp16x16", "global"), b: S.ptr("fp16x16", "global"),
                                   c: S.ptr("fp32x8", "global"), d: S.ptr("fp32x8", "global")):
    _float_vqdpa(a, b, c, d)


@S.prim_func
def _vqdot_then_add(a: S.ptr("fp16x16", "global"), b: S.ptr("fp16x16", "global"), c: S.ptr("fp32x8", "global"),
                    d: S.ptr("fp32x8", "global")):
    d[0] = c[0] + S.vqdot(a[0], b[0])


@S.prim_func
def _int_vqdpa(a: S.ptr("i8x32", "global"), b: S.ptr("i8x32", "global"), c: S.ptr("i32x8", "global"),
               d: S.ptr("i32x8", "global")):
    d[0] = S.vqdpa(c[0], a[0], b[0])


def _float_dot_args():
    a = np.linspace(-3, 3, 16).astype("float16")
    b = np.linspace(2, -1, 16).astype("float16")
    c = np.linspace(0, 7, 8).astype("float32")
    # Each 4 products sum into an even lane of the accumulator (Compass's float S.vqdpa); the
    # odd lanes keep the accumulator's value.
    want = c.copy()
    want[0::2] += (a.astype("float32") * b.astype("float32")).reshape(4, 4).sum(axis=1)
    return (a, b, c, np.zeros(8, "float32")), want


@pytest.mark.parametrize("target", ["X3P_1304", "X3S_1304MP2"])
def test_float_vqdpa_is_refused_on_x3_targets(target):
    message = f"S.vqdpa of float vectors is an X2 instruction; the target {target} has no such instruction"
    err = expect_diag(_float_vqdpa, "d[0] = S.vqdpa(c[0], a[0], b[0])", message, target=target)
    assert isinstance(err, RuntimeError)
    assert err.column == _source_column(_float_vqdpa, "d[0] = S.vqdpa(", "S.vqdpa(")
    # In a sub-function too: the error points at the use, in the sub-function.
    with pytest.raises(DiagnosticError) as info:
        BuildManager(target=target).build(_float_vqdpa_in_a_sub_function)
    assert info.value.message == message
    assert info.value.line == line_of(_float_vqdpa, "d[0] = S.vqdpa(c[0], a[0], b[0])")


def _source_column(func, line_text, needle):
    import inspect

    for line in inspect.getsource(func.func).splitlines():
        if line_text in line:
            return line.index(needle)
    raise AssertionError(line_text)


def test_float_vqdpa_runs_on_x2_and_its_x3_spelling_on_x3():
    args, want = _float_dot_args()
    for got in run_both(_float_vqdpa, *args):
        np.testing.assert_allclose(got[3], want, rtol=1e-6)
    # On X3, the same sums are written as S.vqdot plus an add; an integer S.vqdpa stays accepted.
    out = args[3].copy()
    BuildManager(target="X3P_1304").build(_vqdot_then_add)(*args[:3], out)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    a = np.arange(-16, 16, dtype="int8")
    b = np.arange(32, dtype="int8")[::-1].copy()
    c = np.arange(8, dtype="int32") * 100
    out = np.zeros(8, "int32")
    BuildManager(target="X3P_1304").build(_int_vqdpa)(a, b, c, out)
    np.testing.assert_array_equal(out, c + (a.astype("int32") * b.astype("int32")).reshape(8, 4).sum(axis=1))


# ---- PySim takes C-contiguous arrays only --------------------------------------------------------


@S.prim_func
def _copy_rows(a: S.ptr("fp16", "global"), out: S.ptr("fp16", "global")):
    for i in range(128):
        out[i] = a[i]


def test_pysim_refuses_an_array_that_is_not_c_contiguous():
    view = np.transpose(np.arange(128, dtype="float16").reshape(4, 32))
    with pytest.raises(AssertionError) as info:
        _copy_rows(view, np.zeros(128, "float16"))
    err = info.value
    assert isinstance(err, PySimArgumentError) and isinstance(err, ValueError)
    assert "argument 'a' of _copy_rows() is not a C-contiguous array" in err.message
    assert err.file == __file__
    assert err.line == test_pysim_refuses_an_array_that_is_not_c_contiguous.__code__.co_firstlineno + 3
    assert "_copy_rows(view, np.zeros(128" in str(err) and "^" in str(err)


def test_pysim_takes_the_contiguous_copy_and_the_compiled_kernel_the_view():
    view = np.transpose(np.arange(128, dtype="float16").reshape(4, 32))
    out = np.zeros(128, "float16")
    _copy_rows(np.ascontiguousarray(view), out)
    np.testing.assert_array_equal(out, view.reshape(-1))
    # A built kernel takes the view as Compass passes it: a pointer to its first element in
    # the array it views (tests/python/dsl/test_compass_corners.py).
    out = np.zeros(128, "float16")
    BuildManager().build(_copy_rows)(view, out)
    np.testing.assert_array_equal(out, np.arange(128, dtype="float16"))


# ---- print() and plain Python helpers annotated with DSL types ---------------------------------


def test_print_in_a_kernel_is_refused_and_s_printf_runs():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        print(a[0])
        out[0] = a[0] + 1

    err = expect_diag(k, "print(a[0])", "print() would run while the kernel is parsed")
    assert isinstance(err, RuntimeError) and "S.printf" in err.message

    @S.prim_func
    def ok(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        S.printf("%d\n", a[0])
        out[0] = a[0] + 1

    a = np.array([41], "int32")
    for out in run_both(ok, a, np.zeros(1, "int32")):
        np.testing.assert_array_equal(out[1], a + 1)


def add_annotated(x, y: S.i32):
    return x + y


def first_of(p) -> S.ptr("int32", "global"):
    return p


def add_plain(x, y):
    return x + y


@S.prim_func
def add_dsl(x: S.i32, y: S.i32) -> S.i32:
    return x + y


def test_plain_python_helper_annotated_with_dsl_types_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0] = add_annotated(3, a[0])

    err = expect_diag(k, "out[0] = add_annotated(3, a[0])",
                      "add_annotated() is a plain Python function, yet its parameter 'y' is annotated")
    assert isinstance(err, RuntimeError) and "@S.prim_func" in err.message

    @S.prim_func
    def k_ret(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0] = first_of(a)[0]

    expect_diag(k_ret, "out[0] = first_of(a)[0]", "first_of() is a plain Python function, yet its return type")


def test_plain_python_helper_without_dsl_annotations_and_prim_func_helper_run():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0] = add_plain(3, a[0])
        out[1] = add_dsl(a[1], 5)

    a = np.array([10, -7], "int32")
    for _a, out in run_both(k, a, np.zeros(2, "int32")):
        np.testing.assert_array_equal(out, [13, -2])


# ---- a sub-function that returns a value needs a return annotation -----------------------------


def test_value_returned_without_annotation_is_reported_in_the_sub_function():
    @S.prim_func
    def count():
        return 2

    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global")):
        n = count()
        for i in range(n):
            b[i] = a[i]

    with pytest.raises(DiagnosticError) as info:
        BuildManager().build(k)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert "returning a value needs a return annotation" in err.message
    assert (err.line, err.column) == line_and_column(count, "return 2", "return")
    assert "return 2" in str(err) and "^" in str(err)

    @S.prim_func
    def count_annotated() -> S.i32:
        return 2

    @S.prim_func
    def ok(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global")):
        n = count_annotated()
        for i in range(n):
            b[i] = a[i]

    a = np.arange(16, dtype="int32").reshape(2, 8)
    for _a, b in run_both(ok, a, np.zeros((2, 8), "int32")):
        np.testing.assert_array_equal(b, a)
