"""tir.CommonSubexprElimTIR (TVM's rules: a computation done twice by a statement and those under
it is bound once, as deep as covers its uses; loads and calls never) and tir.StatementCSE (the
host build's elimination within one statement, loads included)."""

import numpy as np
import pytest

import tessera as ts
from tessera import _core, tir
from tessera.error import TesseraTypeError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def _module(func):
    return _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")


def _cse(func, **options):
    return tt.CommonSubexprElimTIR(**options)(_module(func)).lookup("main")


def _check(before, expected, **options):
    after = _cse(before, **options)
    assert_structural_equal(after, expected.with_attr("global_symbol", _core.StringImm("main")))
    return after


# ---- tir.CommonSubexprElimTIR: where the bindings go ----


def test_computation_of_both_branches_goes_before_the_if():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        if x < y:
            B[0] = x + y
        else:
            B[1] = x + y

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        with T.LetStmt(x + y) as cse_v1:
            if x < y:
                B[0] = cse_v1
            else:
                B[1] = cse_v1

    after = _check(before, expected)
    assert "cse_v1: T.int32 = x + y" in str(after)


def test_computation_of_the_condition_and_one_branch_goes_before_the_if():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), F: T.Buffer((2,), "bool"), x: T.int32, y: T.int32):
        if x < y:
            F[0] = x < y
        else:
            B[1] = y

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), F: T.Buffer((2,), "bool"), x: T.int32, y: T.int32):
        with T.LetStmt(x < y) as cse_v1:
            if cse_v1:
                F[0] = cse_v1
            else:
                B[1] = y

    _check(before, expected)


def test_computation_repeated_in_one_branch_stays_in_it():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        if x < y:
            B[0] = x * y
            B[1] = x * y
        else:
            B[2] = x * y + 1

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        if x < y:
            with T.LetStmt(x * y) as cse_v1:
                B[0] = cse_v1
                B[1] = cse_v1
        else:
            B[2] = x * y + 1

    _check(before, expected)


def test_loop_extent_shared_with_the_body_goes_before_the_loop():
    @T.prim_func
    def before(B: T.Buffer((64,), "int32"), n: T.int32):
        for i in range(n + 1):
            B[i] = n + 1

    @T.prim_func
    def expected(B: T.Buffer((64,), "int32"), n: T.int32):
        with T.LetStmt(n + 1) as cse_v1:
            for i in range(cse_v1):
                B[i] = cse_v1

    _check(before, expected)


def test_repetition_inside_a_loop_body_stays_in_the_body():
    # n * 3 does not use i, but only the body computes it: it is not taken out of the loop.
    @T.prim_func
    def before(B: T.Buffer((64,), "int32"), n: T.int32):
        for i in range(8):
            B[i] = n * 3
            B[i + 8] = n * 3 + i * 2
            B[i + 16] = i * 2

    @T.prim_func
    def expected(B: T.Buffer((64,), "int32"), n: T.int32):
        for i in range(8):
            # Of two computations of one size, the one seen later is bound outside.
            with T.LetStmt(i * 2) as cse_v2:
                with T.LetStmt(n * 3) as cse_v1:
                    B[i] = cse_v1
                    B[i + 8] = cse_v1 + cse_v2
                    B[i + 16] = cse_v2

    _check(before, expected)


def test_computation_using_a_let_variable_is_bound_after_that_let():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        B[0] = x - y
        with T.LetStmt(x + 1) as a:
            B[1] = a * y
            B[2] = a * y + (x - y)

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        with T.LetStmt(x - y) as cse_v1:
            B[0] = cse_v1
            with T.LetStmt(x + 1) as a:
                with T.LetStmt(a * y) as cse_v2:
                    B[1] = cse_v2
                    B[2] = cse_v2 + cse_v1

    _check(before, expected)


def test_value_held_by_an_enclosing_let_is_used_even_once():
    # x * y is done once by the let's value and once in a branch (not counted twice at the let:
    # a branch alone does not count); the branch uses the let's variable instead.
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        with T.LetStmt(x * y) as a:
            if x < 3:
                B[0] = x * y + 1
            else:
                B[1] = a

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        with T.LetStmt(x * y) as a:
            if x < 3:
                B[0] = a + 1
            else:
                B[1] = a

    _check(before, expected)


def test_cascade_binds_the_inner_computation_outside():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        B[0] = (x * y - z) * 2
        B[1] = (x * y - z) * 2
        B[2] = x * y

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        with T.LetStmt(x * y) as cse_v2:
            with T.LetStmt((cse_v2 - z) * 2) as cse_v1:
                B[0] = cse_v1
                B[1] = cse_v1
                B[2] = cse_v2

    _check(before, expected)


def test_repetition_inside_a_let_expression_becomes_a_let_expression():
    # x * y repeats, but x is bound by the Let expression: it is bound inside it.
    @T.prim_func
    def before(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), y: T.int32):
        x = T.int32()
        B[0] = T.Let(x * y + x * y, where={x: A[0] + 1})

    @T.prim_func
    def expected(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), y: T.int32):
        x = T.int32()
        cse_v1 = T.int32()
        B[0] = T.Let(T.Let(cse_v1 + cse_v1, where={cse_v1: x * y}), where={x: A[0] + 1})

    _check(before, expected)


def test_loads_and_calls_are_never_bound():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), x: T.float32):
        B[0] = A[0] * x + A[0] * x
        B[1] = T.exp(x) * T.exp(x)
        B[2] = T.exp(x) * T.exp(x)

    mod = _module(func)
    assert tt.CommonSubexprElimTIR()(mod).same_as(mod)


def test_new_names_skip_those_in_use():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), cse_v1: T.int32, y: T.int32):
        B[0] = cse_v1 + y
        B[1] = cse_v1 + y

    after = _cse(before)
    text = str(after)
    assert "cse_v2: T.int32 = cse_v1 + y" in text and "B[0] = cse_v2" in text, text


def test_disabled_by_its_option_and_off_by_default_in_no_context():
    @T.prim_func
    def func(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        B[0] = x * y
        B[1] = x * y

    mod = _module(func)
    assert tt.CommonSubexprElimTIR(enable_cse_tir=False)(mod).same_as(mod)
    assert not tt.CommonSubexprElimTIR()(mod).same_as(mod)
    # As TVM's pass, it does not read tir.disable_cse_tir itself (the build does).
    with ts.transform.PassContext(config={"tir.disable_cse_tir": True}):
        assert not tt.CommonSubexprElimTIR()(mod).same_as(mod)


def test_result_runs_like_the_original():
    @T.prim_func
    def func(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32):
        if x < y:
            B[0] = (x + y) * (x - y)
            B[1] = (x + y) * (x - y) + x
        else:
            B[2] = (x + y) * 2
            B[3] = (x + y) * 3

    after = _cse(func)
    assert str(after).count("cse_v") >= 3
    lib = ts.build(after, target="c")
    for x, y in [(2, 5), (7, 1), (-3, -3)]:
        out = np.zeros(4, "int32")
        lib(out, x, y)
        want = np.zeros(4, "int32")
        if x < y:
            want[0] = (x + y) * (x - y)
            want[1] = want[0] + x
        else:
            want[2], want[3] = (x + y) * 2, (x + y) * 3
        np.testing.assert_array_equal(out, want)


# ---- identify_equiv_terms ----


def test_equivalent_terms_are_one_computation_when_asked():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        B[0] = x * (y - z)
        B[1] = y * x - z * x

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        with T.LetStmt(x * (y - z)) as cse_v1:
            B[0] = cse_v1
            B[1] = cse_v1

    _check(before, expected, identify_equiv_terms=True)
    mod = _module(before)
    assert tt.CommonSubexprElimTIR(identify_equiv_terms=False)(mod).same_as(mod)


def test_commuted_products_and_reordered_sums_are_equivalent():
    @T.prim_func
    def before(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        B[0] = (z * y + x) * 2
        B[1] = (x + y * z) * 2

    @T.prim_func
    def expected(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        with T.LetStmt((z * y + x) * 2) as cse_v1:
            B[0] = cse_v1
            B[1] = cse_v1

    _check(before, expected, identify_equiv_terms=True)


def test_float_sums_are_not_reassociated():
    # (a + b) + c and a + (b + c) round differently in floating point: not one computation.
    @T.prim_func
    def func(B: T.Buffer((4,), "float32"), a: T.float32, b: T.float32, c: T.float32):
        B[0] = (a + b) + c
        B[1] = a + (b + c)

    mod = _module(func)
    assert tt.CommonSubexprElimTIR(identify_equiv_terms=True)(mod).same_as(mod)


def test_equivalence_does_not_normalize_what_it_does_not_bind():
    @T.prim_func
    def func(B: T.Buffer((4,), "int32"), x: T.int32, y: T.int32, z: T.int32):
        B[0] = x + (y + z)
        B[1] = (x - y) * z

    mod = _module(func)
    assert tt.CommonSubexprElimTIR(identify_equiv_terms=True)(mod).same_as(mod)


# ---- conditions of if / while: TVM takes an integer ----


def _int_condition_func():
    n = tir.Var("n", "int32")
    buf = tir.decl_buffer((2,), "int32", name="B")
    one, two = tir.const(1, "int32"), tir.const(2, "int32")
    body = tir.IfThenElse(n, tir.BufferStore(buf, one, [0]), tir.BufferStore(buf, two, [0]))
    return n, buf, body


def test_if_takes_an_integer_condition():
    n, buf, body = _int_condition_func()
    assert body.condition.dtype == "int32"

    @T.prim_func
    def func(B: T.Buffer((2,), "int32"), n: T.int32):
        if n:
            B[0] = 1
        else:
            B[0] = 2

    assert "if n:" in str(func)
    lib = ts.build(func, target="c")
    for value, want in [(0, 2), (5, 1), (-1, 1)]:
        out = np.zeros(2, "int32")
        lib(out, value)
        assert out[0] == want


def test_while_takes_an_integer_condition():
    @T.prim_func
    def func(B: T.Buffer((2,), "int32"), n: T.int32):
        k = T.alloc_buffer((1,), "int32")
        k[0] = n
        B[0] = 0
        while k[0]:
            B[0] = B[0] + 2
            k[0] = k[0] - 1

    lib = ts.build(func, target="c")
    out = np.zeros(2, "int32")
    lib(out, 4)
    assert out[0] == 8


@pytest.mark.parametrize("dtype", ["float32", "int32x4", "boolx4"])
def test_if_and_while_refuse_float_and_vector_conditions(dtype):
    cond = tir.Var("c", dtype)
    buf = tir.decl_buffer((2,), "int32", name="B")
    store = tir.BufferStore(buf, tir.const(1, "int32"), [0])
    with pytest.raises(TesseraTypeError, match="if condition must be a scalar bool or integer"):
        tir.IfThenElse(cond, store, None)
    with pytest.raises(TesseraTypeError, match="while condition must be a scalar bool or integer"):
        tir.While(cond, store)


def test_select_if_then_else_and_assert_still_need_a_bool():
    n = tir.Var("n", "int32")
    one, two = tir.const(1, "int32"), tir.const(2, "int32")
    with pytest.raises(TesseraTypeError, match="Select condition must be bool"):
        tir.Select(n, one, two)
    with pytest.raises(TesseraTypeError, match="bool condition"):
        T.if_then_else(n, one, two)
    with pytest.raises(TesseraTypeError, match="condition must be a scalar bool"):
        tir.AssertStmt(n, tir.StringImm("no"), tir.Evaluate(one))


def test_script_assert_still_needs_a_bool():
    with pytest.raises(Exception, match="a condition must be a bool expression"):
        @T.prim_func
        def func(B: T.Buffer((2,), "int32"), n: T.int32):
            assert n, "n"
            B[0] = 1


# ---- tir.StatementCSE: the host build's pass ----


def test_statement_cse_binds_a_repeated_load(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            B[i] = (A[i] * x + T.float32(1)) * (A[i] * x + T.float32(1))

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            cse_v1 = T.float32(A[i] * x + T.float32(1))
            B[i] = cse_v1 * cse_v1

    golden("StatementCSE", before, expected)


def test_statement_cse_single_occurrences_and_trivial_terms_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            B[i] = A[i] * x + x * x + T.float32(1)

    unchanged("StatementCSE", func)


@pytest.mark.parametrize("how", ["config", "disabled_pass", "disabled_pass_tvm_name"])
def test_statement_cse_disabled(unchanged, how):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            B[i] = (A[i] * x) * (A[i] * x)

    if how == "config":
        ctx = ts.transform.PassContext(config={"tir.disable_cse_tir": True})
    else:
        name = "tir.StatementCSE" if how == "disabled_pass" else "tir.CommonSubexprElimTIR"
        ctx = ts.transform.PassContext(disabled_pass=[name])
    with ctx:
        if how != "disabled_pass":  # the pass itself checks the config and TVM's name
            unchanged("StatementCSE", func)
        lib = ts.build(func, target="c")
    assert "cse_v" not in lib.get_source()


def test_build_runs_statement_cse():
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = (A[vi] + T.float32(1)) * (A[vi] + T.float32(1)) - (A[vi] + T.float32(1))

    lib = ts.build(func, target="c")
    assert "cse_v1" in lib.get_source()
    a = np.arange(64, dtype="float32")
    b = np.empty_like(a)
    lib(a, b)
    np.testing.assert_allclose(b, (a + 1) * (a + 1) - (a + 1))


def test_statement_cse_keeps_a_let_bound_subexpression_inside_the_let(unchanged):
    # `x * x` repeats, but x is bound by the Let expression: computing it before the
    # statement would use x outside its binding.
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            x = T.float32()
            B[i] = T.Let(x * x + x * x, where={x: A[i] + T.float32(1)})

    unchanged("StatementCSE", func)


def test_deep_chain_is_numbered_in_one_walk():
    # A chain of 3,000 additions with one product at both ends: the product is bound once.
    # (Numbering each node's subtree again made this quadratic: 12 s of lowering at 8,000.)
    from tessera import te

    n = 3000
    a = te.placeholder((n,), name="A")
    e = a[0] * a[1]
    for i in range(2, n):
        e = e + a[i]
    e = e + a[0] * a[1]
    b = te.compute((1,), lambda j: e, name="B")
    lib = ts.build(te.create_prim_func([a, b]), target="c")
    assert lib.get_source().count("cse_v1 = ") == 1
    x = np.random.default_rng(0).random(n).astype("float32")
    out = np.zeros(1, "float32")
    lib(x, out)
    expect = x[2:].astype("float64").sum() + 2 * float(x[0]) * float(x[1])
    np.testing.assert_allclose(out[0], expect, rtol=1e-4)


# (Chains of at most 4,000: the engine's walk recurses once per level, and under ASan's larger
# stack frames a 10,000-deep chain reaches the stack guard, which raises BuildError.)
@pytest.mark.parametrize("n", [1000, 4000])
def test_tvm_rules_on_a_deep_chain_stay_linear(n):
    # A chain of n additions of variables with x * y at both ends: the chain is taken apart one
    # level at a time, each level in constant time (numbers, sizes and eligibility are kept per
    # node), so 4x the chain costs about 4x the time.
    import time

    xs = [tir.Var(f"x{i}", "int32") for i in range(4)]
    buf = tir.decl_buffer((1,), "int32", name="B")

    def run(length):
        e = xs[0] * xs[1]
        for i in range(length):
            e = e + xs[i % 4]
        e = e + xs[0] * xs[1]
        mod = _module(tir.PrimFunc(xs + [buf.data], tir.BufferStore(buf, e, [0]),
                                   buffer_map={buf.data: buf}))
        start = time.process_time()
        out = tt.CommonSubexprElimTIR()(mod).lookup("main")
        return time.process_time() - start, out

    small, _ = min(run(n // 4) for _ in range(2))
    large, out = run(n)
    assert isinstance(out.body, tir.LetStmt) and out.body.var.name == "cse_v1"
    assert large < 12 * max(small, 0.01), (small, large)
