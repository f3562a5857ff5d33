"""Parse and well-formedness errors: one DiagnosticError at the offending line and column."""

import inspect

import pytest

from tessera.script import DiagnosticError
from tessera.script import tir as T

LINES = inspect.getsource(inspect.getmodule(inspect.currentframe())).splitlines()


def line_of(marker):
    """The 1-based line of this file holding `# <marker>`."""
    hits = [k + 1 for k, text in enumerate(LINES) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def check(err, marker, *fragments):
    assert err.value.line == line_of(marker), str(err.value)
    for fragment in fragments:
        assert fragment in err.value.message, err.value.message
    assert "^" in str(err.value)  # rendered with a caret under the source


def test_remap_with_wrong_arity():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i])  # remap-arity
                    A[vi, vj] = T.float32(0)
    check(err, "remap-arity", "2 kinds", "1 bindings")


def test_remap_with_unknown_kind_letter():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SX", [i, j])  # remap-kind
                    A[vi, vj] = T.float32(0)
    check(err, "remap-kind", "'S' (spatial) and 'R' (reduce)")


def test_remap_of_an_expression():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.remap("S", [i + 1])  # remap-binding
                    A[vi] = T.float32(0)
    check(err, "remap-binding", "loop variables", "i + 1")


def test_iterator_defined_twice():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i)
                    vi = T.axis.spatial(8, i)  # iter-twice
                    A[vi] = T.float32(0)
    check(err, "iter-twice", "'vi'", "defined twice", "\"A\"")


def test_loop_variable_redefined():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")):
            for i in range(8):
                i = 3  # loop-redefined
                A[i] = 0
    check(err, "loop-redefined", "'i' is a loop variable")


def test_missing_parameter_annotation():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "int32"), n):  # missing-annotation
            A[0] = 0
    check(err, "missing-annotation", "parameter 'n' needs a type annotation")


def test_match_buffer_of_a_constant():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(5, (4,), "float32")  # match-constant
            A[0] = T.float32(0)
    check(err, "match-constant", "T.match_buffer expects a handle parameter or a buffer region")


def test_match_buffer_of_a_scalar_parameter():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(n: T.int32):
            A = T.match_buffer(n, (4,), "float32")  # match-scalar
            A[0] = T.float32(0)
    check(err, "match-scalar", "needs a handle parameter")


def test_match_buffer_of_a_region_outside_a_block():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            S = T.match_buffer(A[0:4], (4,))  # match-outside
            S[0] = T.float32(0)
    check(err, "match-outside", "directly inside a T.block")


def test_wrong_number_of_arguments_to_a_T_call():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")):
            A[0] = T.min(A[1])  # min-arity
    check(err, "min-arity", "wrong arguments to T.min", "missing")


def test_too_many_arguments_to_an_intrinsic():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            A[0] = T.exp(A[1], A[2])  # exp-arity
    check(err, "exp-arity", "wrong arguments to T.exp")


def test_axis_without_binding():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("A"):
                    vi = T.axis.spatial(8)  # axis-arity
                    A[vi] = T.float32(0)
    check(err, "axis-arity", "wrong arguments to T.axis.spatial")


def test_undefined_name():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            A[0] = not_defined_anywhere  # undefined  # noqa: F821
    check(err, "undefined  # noqa: F821", "name 'not_defined_anywhere' is not defined")


def test_store_of_other_lanes():
    # A value of another type is cast to the buffer's (as in TVM); other lanes cannot be.
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            A[0] = B[0:4]  # store-lanes
    check(err, "store-lanes", "float32x4", "float32", "lanes")


def test_block_statements_outside_a_block():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            T.reads(A[0])  # reads-outside
    check(err, "reads-outside", "T.reads must be written directly inside a T.block")


def test_condition_must_be_bool_or_integer():
    # TVM's `if` takes an integer (true when nonzero), not a float; an assert needs a bool.
    @T.prim_func
    def ok(A: T.Buffer((8,), "int32")):
        for i in range(8):
            if i:
                A[i] = 0
    assert "if i:" in str(ok)
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                if A[i]:  # float-condition
                    A[i] = 0
    check(err, "float-condition", "bool or integer")
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def g(A: T.Buffer((8,), "int32")):
            for i in range(8):
                assert i, "i"  # int-assert
                A[i] = 0
    check(err, "int-assert", "a bool expression")


def test_loop_variable_used_inside_a_block():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i)
                    A[i] = T.float32(0)  # loop-in-block
    check(err, "loop-in-block", "Variable i is a loop variable", "block \"A\"",
          "consider setting check_well_formed=False")
    assert err.value.message.endswith("consider setting check_well_formed=False")


def test_check_well_formed_false_accepts_it():
    @T.prim_func(check_well_formed=False)
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[i] = T.float32(0)

    assert "A[i] = T.float32(0.0)" in f.script()


def test_block_iterator_used_outside_its_block():
    leak = []
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")):
            for i in range(8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i)
                    leak.append(vi)
                    A[vi] = 0
            A[0] = leak[0]  # iter-leak
    check(err, "iter-leak", "Block iterator vi of block \"A\" is used outside its block",
          "consider setting check_well_formed=False")


def test_variable_defined_twice():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")):
            x = T.int32()
            A[0] = T.let(x, 1, x) + T.let(x, 2, x)  # let-twice
    check(err, "let-twice", "Variable x is defined more than once")


def test_constant_index_out_of_bounds_parses_as_tvm_and_the_build_refuses_it():
    # TVM's parser accepts a constant index past a constant extent (its tests write such IR);
    # the build refuses it before any code runs, as it would write outside the caller's array.
    import tessera as ts

    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((4, 4), "float32")):
        A[100] = T.float32(1)  # const-oob
        B[0, 1] = A[3]

    assert "A[100] = T.float32(1.0)" in f.script()
    with pytest.raises(DiagnosticError) as err:
        ts.build(f, target="c")
    check(err, "const-oob", "Index 100 is out of bounds for dimension 0 of buffer A (extent 8)")
    with pytest.raises(DiagnosticError) as err:
        ts.lower(f, target="c")
    check(err, "const-oob", "Index 100 is out of bounds")

    @T.prim_func
    def g(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
        B[T.Ramp(0, 1, 4)] = A[T.Ramp(6, 1, 4)]  # ramp-oob

    with pytest.raises(DiagnosticError) as err:
        ts.build(g, target="c")
    check(err, "ramp-oob", "Index 9 is out of bounds for dimension 0 of buffer A (extent 8)")


def test_lowered_form_views_parse_as_tvm_and_the_build_checks_their_bounds():
    # TVM's lowered form (T.allocate storage, no blocks) indexes flattened views past their
    # declared shape (its opt_gemm_lower test); TVM parses it, and so does tessera, but building
    # it still refuses a provably out-of-bounds access before any code runs.
    import tessera as ts

    @T.prim_func
    def f(a: T.handle):
        A = T.match_buffer(a, (16,), "float32")
        tmp = T.allocate([4], "float32", "global")
        Tmp = T.Buffer((4,), "float32", data=tmp)
        for i in range(8):
            Tmp[0] = T.float32(1)
            A[i * 4 + 3] = Tmp[0]  # lowered-oob

    with pytest.raises(DiagnosticError) as err:
        ts.build(f, target="c")
    check(err, "lowered-oob", "Index 31 is out of bounds for dimension 0 of buffer A (extent 16)")


def test_return_of_a_statement_in_a_void_function():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(a: T.handle) -> None:
            return T.evaluate(0)  # return-statement
    check(err, "return-statement", "return annotation")


def test_block_with_as_name():
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f():
            with T.block("root") as x:  # block-as
                T.evaluate(0)
    check(err, "block-as", "binds no name")


def test_block_region_from_a_bare_data_pointer():
    # A block whose regions are to be inferred cannot pass a buffer's data pointer itself.
    with pytest.raises(DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            for i in range(16):
                with T.block("opaque"):  # bare-data
                    T.evaluate(T.call_extern("int32", "ext", A.data))
    check(err, "bare-data", "data pointer of buffer A")

    # With the regions stated, or through tvm_access_ptr, it is accepted.
    @T.prim_func
    def stated(A: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("opaque"):
                T.reads(A[0:16])
                T.writes(A[0:16])
                T.evaluate(T.call_extern("int32", "ext", A.data))

    @T.prim_func
    def access_ptr(A: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("opaque"):
                T.evaluate(T.call_extern("int32", "ext",
                                         T.tvm_access_ptr(T.type_annotation("float32"), A.data,
                                                          0, 16, 3)))
    assert stated.body is not None and access_ptr.body is not None
