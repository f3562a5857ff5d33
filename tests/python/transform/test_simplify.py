"""tir.Simplify: canonical index arithmetic with loop ranges known to the analyzer."""

import tessera as ts
from tessera.script import tir as T


def test_split_indices_recombine_and_provable_branches_fold(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        for io, ii in T.grid(4, 16):
            if io * 16 + ii < 64:
                A[(io * 16 + ii) // 16 * 16 + (io * 16 + ii) % 16] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        for io, ii in T.grid(4, 16):
            A[io * 16 + ii] = T.float32(1)

    golden("Simplify", before, expected)


def test_like_terms_constants_and_comparisons(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "int32"), n: T.int32):
        for i in T.serial(8):
            A[i * 2 + i * 2 + 3 - 3] = T.Select(n > i, n + 1 - 1, i * 0)

    @T.prim_func
    def expected(A: T.Buffer((32,), "int32"), n: T.int32):
        for i in T.serial(8):
            A[i * 4] = T.Select(i < n, n, 0)

    golden("Simplify", before, expected)


def test_floordiv_of_bounded_remainder(golden):
    @T.prim_func
    def before(A: T.Buffer((128,), "float32"), B: T.Buffer((32,), "float32")):
        for i, j in T.grid(32, 4):
            B[(i * 4 + j) // 4] = A[(i * 4 + j) % 4 + i * 4]

    @T.prim_func
    def expected(A: T.Buffer((128,), "float32"), B: T.Buffer((32,), "float32")):
        for i, j in T.grid(32, 4):
            B[i] = A[i * 4 + j]

    golden("Simplify", before, expected)


def test_simplified_function_is_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((64,), "float32")):
        for i, j in T.grid(8, 8):
            A[i * 8 + j] = T.float32(0)

    unchanged("Simplify", func)


def test_variable_of_a_unit_loop_is_its_min(golden):
    # As TVM's analyzer binds a loop of one iteration: indices of unit batch loops fold.
    @T.prim_func
    def before(A: T.Buffer((4, 64), "float32")):
        for b in T.serial(2, 3):
            for i in T.serial(64):
                A[b - 2, b * 64 - 128 + i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4, 64), "float32")):
        for b in T.serial(2, 3):
            for i in T.serial(64):
                A[0, i] = T.float32(1)

    golden("Simplify", before, expected)


def test_enclosing_condition_is_known_in_its_branches(golden):
    # Inside `if c` the conjuncts of c are true and their negations false; inside the else,
    # the negation of c holds (the parts of a negated `or` each hold on their own).
    @T.prim_func
    def before(A: T.Buffer((16, 16), "int32"), n: T.int32):
        for i, j in T.grid(16, 16):
            if i == n and j < 5:
                if i == n:
                    A[i, j] = T.Select(j < 7, 1, 2)
                if i != n:
                    A[i, j] = 3
            else:
                if i == n or j == n:
                    A[i, j] = 4
                if i == n:
                    A[i, j] = 5

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "int32"), n: T.int32):
        for i, j in T.grid(16, 16):
            if i == n and j < 5:
                A[i, j] = 1
                T.evaluate(0)
            else:
                if i == n or j == n:
                    A[i, j] = 4
                if i == n:
                    A[i, j] = 5

    golden("Simplify", before, expected)


def test_negated_disjunction_known_in_else(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "int32"), n: T.int32):
        for i, j in T.grid(16, 16):
            if i == n or j == n:
                A[i, j] = 0
            else:
                if i == n:
                    A[i, j] = 1
                else:
                    A[i, j] = 2

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "int32"), n: T.int32):
        for i, j in T.grid(16, 16):
            if i == n or j == n:
                A[i, j] = 0
            else:
                A[i, j] = 2

    golden("Simplify", before, expected)


def test_condition_on_a_buffer_value_is_not_assumed_after_a_store(unchanged):
    # A buffer's contents may change between the test and the use: only pure conditions are
    # known inside the branch.
    @T.prim_func
    def func(A: T.Buffer((1,), "int32"), n: T.int32):
        if A[0] == n:
            A[0] = A[0] + 1
            if A[0] == n:
                A[0] = 0

    unchanged("Simplify", func)



def test_comparisons_known_from_the_condition(golden):
    @T.prim_func
    def before(A: T.Buffer((3,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        if i < j and j <= k + 2:
            A[0] = i < j + 1
            A[1] = i < k + 2
            A[2] = j <= i

    @T.prim_func
    def direct(A: T.Buffer((3,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        if i < j and j <= k + 2:
            A[0] = True
            A[1] = i < k + 2
            A[2] = False

    @T.prim_func
    def transitive(A: T.Buffer((3,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        if i < j and j <= k + 2:
            A[0] = True
            A[1] = True
            A[2] = False

    golden("Simplify", before, direct)
    config = {"tir.Simplify": {"transitively_prove_inequalities": True}}
    with ts.transform.PassContext(config=config):
        golden("Simplify", before, transitive)


def test_known_comparison_narrows_a_weaker_one(golden):
    @T.prim_func
    def before(A: T.Buffer((2,), "bool"), i: T.int32, j: T.int32):
        if i <= j:
            A[0] = j <= i
            A[1] = i != j

    @T.prim_func
    def expected(A: T.Buffer((2,), "bool"), i: T.int32, j: T.int32):
        if i <= j:
            A[0] = j == i
            A[1] = i < j

    golden("Simplify", before, expected)


def test_pure_integer_lets_are_inlined_and_self_stores_removed(golden):
    # As TVM: a let of a constant, a variable or a pure integer value is inlined (here the
    # loop extent becomes 10, so `i < 12` holds); a let of another pure value stays but is
    # substituted into the conditions being proven; storing A[i] into A[i] does nothing.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "bool"), m: T.int32):
        n = 10
        k = m * 2
        for i in range(n):
            c = i < 3
            if i < 12:
                A[i] = T.Cast("float32", k)
            if c or i >= 3:
                B[i] = c
            A[i] = A[i]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "bool"), m: T.int32):
        for i in range(10):
            c = i < 3
            A[i] = T.Cast("float32", m * 2)
            B[i] = c
            T.evaluate(0)

    golden("Simplify", before, expected)


def test_let_used_by_a_buffer_definition_is_kept(unchanged):
    @T.prim_func
    def func(A_ptr: T.handle("float32"), A_size: T.int32):
        size = A_size
        A = T.decl_buffer([size], "float32", data=A_ptr)
        A[0] = T.float32(42)

    unchanged("Simplify", func)


def test_boolean_branches_under_each_other(golden):
    @T.prim_func
    def before(A: T.Buffer((2,), "bool"), n: T.int32, m: T.int32):
        A[0] = n < 10 and n < 5
        A[1] = n < m + 5 or n < m + 10

    @T.prim_func
    def expected(A: T.Buffer((2,), "bool"), n: T.int32, m: T.int32):
        A[0] = n < 5
        A[1] = n < m + 10

    config = {
        "tir.Simplify": {
            "apply_constraints_to_boolean_branches": True,
            "transitively_prove_inequalities": True,
        }
    }
    with ts.transform.PassContext(config=config):
        golden("Simplify", before, expected)
    # Without the option, the sides are simplified on their own.
    golden("Simplify", before, before)


def test_thread_extent_bounds_its_variable_and_likely_conditions_are_known(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), n: T.int32):
        tx = T.launch_thread("threadIdx.x", 8)
        if tx < 12:
            A[tx] = T.float32(1)
        if T.likely(tx * 8 < n):
            if T.likely(tx * 8 < n):
                A[tx] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), n: T.int32):
        tx = T.launch_thread("threadIdx.x", 8)
        A[tx] = T.float32(1)
        if T.likely(tx * 8 < n):
            A[tx] = T.float32(2)

    golden("Simplify", before, expected)


KNOWNS_TO_CONDITIONS = {"tir.Simplify": {"propagate_knowns_to_prove_conditional": True}}
KNOWNS_TO_EXPRESSIONS = {"tir.Simplify": {"propagate_knowns_to_simplify_expressions": True}}


def test_stored_and_assumed_values_decide_later_conditions(golden):
    @T.prim_func
    def before(A: T.Buffer((2,), "int32"), n: T.int32):
        T.evaluate(T.assume(n == 3))
        A[0] = 7
        if A[0] == 7:
            A[1] = 1
        if n == 3:
            A[1] = 2
        # Only conditions use the known values: this load stays.
        A[1] = A[0]

    @T.prim_func
    def expected(A: T.Buffer((2,), "int32"), n: T.int32):
        T.evaluate(T.assume(n == 3))
        A[0] = 7
        A[1] = 1
        A[1] = 2
        A[1] = A[0]

    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        golden("Simplify", before, expected)
    # Without the option nothing about buffer contents is used.
    golden("Simplify", before, before)


def test_known_values_follow_stores_through_a_condition(golden):
    @T.prim_func
    def before(A: T.Buffer((1,), "int32"), n: T.int32):
        if A[0] == n:
            A[0] = A[0] + 1
            if A[0] == n:
                A[0] = 5
            else:
                A[0] = 10

    @T.prim_func
    def expected(A: T.Buffer((1,), "int32"), n: T.int32):
        if A[0] == n:
            A[0] = A[0] + 1
            A[0] = 10

    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        golden("Simplify", before, expected)


def test_conditional_store_hides_the_value(unchanged):
    # After `if m == 0: A[0] = A[0] + 1` the value of A[0] depends on m: nothing is known.
    @T.prim_func
    def func(A: T.Buffer((1,), "int32"), n: T.int32, m: T.int32):
        if A[0] == n:
            if m == 0:
                A[0] = A[0] + 1
            if A[0] == n:
                A[0] = 5
            else:
                A[0] = 10

    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        unchanged("Simplify", func)


def test_loop_stores_and_assumptions_are_known_after_the_loop(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            A[i] = i * 2
        for i in T.serial(16):
            if 12 <= i:
                T.evaluate(T.assume(B[i] == 0))
        for j in T.serial(16):
            if A[j] == j * 2:
                B[j] = B[j] + 1
            if 12 <= j:
                if B[j] == 0:
                    B[j] = 7

    @T.prim_func
    def expected(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in T.serial(16):
            A[i] = i * 2
        for i in T.serial(16):
            if 12 <= i:
                T.evaluate(T.assume(B[i] == 0))
        for j in T.serial(16):
            B[j] = B[j] + 1
            if 12 <= j:
                if B[j] == 0:
                    B[j] = 7

    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        golden("Simplify", before, expected)


def test_values_changed_by_other_iterations_are_not_known(unchanged):
    # B[0] changes from one iteration to the next; A[i + 1] was written by no iteration yet but
    # A[i - 1] was: neither pre-loop value may be used inside the loop.
    @T.prim_func
    def func(A: T.Buffer((16,), "int32"), B: T.Buffer((1,), "int32")):
        B[0] = 0
        for i in T.serial(16):
            A[i] = 0
        for i in T.serial(1, 15):
            if B[0] < 10:
                B[0] = B[0] + 3
            if A[i - 1] == 0:
                A[i] = 5

    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        unchanged("Simplify", func)


def test_vector_store_values_are_known_per_element(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "int32")):
        A[T.ramp(0, 1, 4)] = T.ramp(11, 1, 4)
        if A[0] == 11:
            A[0] = 42
        if A[1] == 12:
            A[1] = 60
        if A[0] == 11:
            A[2] = 0

    @T.prim_func
    def expected(A: T.Buffer((4,), "int32")):
        A[T.ramp(0, 1, 4)] = T.ramp(11, 1, 4)
        A[0] = 42
        A[1] = 60
        T.evaluate(0)  # A[0] is 42 now: the last condition is false

    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        golden("Simplify", before, expected)


def test_known_values_replace_loads_with_the_expression_option(golden):
    @T.prim_func
    def before(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")):
        A[0] = 5
        A[0] = A[0] + 7
        B[0] = A[0] * 2
        T.evaluate(T.call_extern("int32", "touch", A.data))
        B[0] = A[0]

    @T.prim_func
    def expected(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")):
        A[0] = 5
        A[0] = 12
        B[0] = 24
        T.evaluate(T.call_extern("int32", "touch", A.data))
        B[0] = A[0]

    with ts.transform.PassContext(config=KNOWNS_TO_EXPRESSIONS):
        golden("Simplify", before, expected)
    # With conditions only, stored values are not inlined into other expressions.
    with ts.transform.PassContext(config=KNOWNS_TO_CONDITIONS):
        golden("Simplify", before, before)


def test_boolean_as_and_of_ors(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "bool"), B: T.Buffer((3,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        B[0] = A[0] or (A[1] and A[2])
        # (A[1] or A[0]) repeats the first clause in another order: it goes.
        B[1] = (A[0] or A[1]) and (A[1] or (A[0] and A[2] and A[3]))
        # Clauses that differ in one term: (k == 20 and k != 30) is k == 20.
        B[2] = (i == 0 or j == 10 or k == 20) and (j == 10 or k != 30 or i == 0)

    @T.prim_func
    def expected(A: T.Buffer((4,), "bool"), B: T.Buffer((3,), "bool"), i: T.int32, j: T.int32, k: T.int32):
        B[0] = (A[0] or A[1]) and (A[0] or A[2])
        B[1] = (A[0] or A[1]) and (A[1] or A[2]) and (A[1] or A[3])
        B[2] = j == 10 or k == 20 or i == 0

    with ts.transform.PassContext(
        config={"tir.Simplify": {"convert_boolean_to_and_of_ors": True}}
    ):
        golden("Simplify", before, expected)


def test_boolean_keeps_its_form_without_the_option(unchanged):
    @T.prim_func
    def func(A: T.Buffer((3,), "bool"), B: T.Buffer((1,), "bool")):
        B[0] = A[0] or (A[1] and A[2])

    unchanged("Simplify", func)


def test_equalities_with_different_constants(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "bool"), i: T.int32):
        A[0] = i == 20 and i != 30
        A[1] = i == 20 or i != 30
        A[2] = i == 20 and i == 30
        A[3] = i != 20 or i != 30

    @T.prim_func
    def expected(A: T.Buffer((4,), "bool"), i: T.int32):
        A[0] = i == 20
        A[1] = i != 30
        A[2] = False
        A[3] = True

    golden("Simplify", before, expected)


def test_bounds_of_shifts_and_ceil_log2(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "int32")):
        B[0] = T.Cast("int32", T.ceil(T.log2(T.Cast("float64", 14))))
        for i in T.serial(16):
            x = T.Cast("int32", T.ceil(T.log2(T.Cast("float64", i + 1025))))
            if x == 11:
                A[i] = T.float32(0)
            if T.shift_left(1, i) >= 1:
                A[i] = T.float32(1)
            if T.shift_left(31, i) <= 1015808:
                A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "int32")):
        B[0] = 4
        for i in T.serial(16):
            A[i] = T.float32(0)
            A[i] = T.float32(1)
            A[i] = T.float32(2)

    golden("Simplify", before, expected)


def test_shifts_of_negative_values_or_counts_are_not_bounded(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            if -64 <= T.shift_left(-i, 4):
                A[i] = T.float32(0)
            if T.shift_left(16, -i) <= 16:
                A[i] = T.float32(1)
            if T.shift_left(31, i) <= 1015807:
                A[i] = T.float32(2)

    unchanged("Simplify", func)


def test_if_then_else_condition_known_in_its_values(golden):
    @T.prim_func
    def before(a: T.Buffer((2, 8), "int32"), b: T.Buffer((2, 8), "int32")):
        for i, j in T.grid(2, 8):
            b[i, j] = T.if_then_else(
                i == 1 and 6 <= j, 0, T.max(0, T.if_then_else(i == 1 and 6 <= j, 0, a[i, j]))
            )

    @T.prim_func
    def expected(a: T.Buffer((2, 8), "int32"), b: T.Buffer((2, 8), "int32")):
        for i, j in T.grid(2, 8):
            b[i, j] = T.if_then_else(i == 1 and 6 <= j, 0, T.max(0, a[i, j]))

    golden("Simplify", before, expected)


def test_buffer_shapes_are_not_negative(golden):
    @T.prim_func
    def before(a: T.handle, b: T.handle, m: T.int64):
        n = T.int64()
        k = T.int64()
        A = T.match_buffer(a, (n * 32 - 1,), "float32")
        B = T.match_buffer(b, (k - m,), "float32")
        A[T.min(T.int64(1), n)] = T.float32(0)
        B[T.min(T.int64(0), k)] = T.float32(0)  # k - m >= 0 says nothing of k alone

    @T.prim_func
    def expected(a: T.handle, b: T.handle, m: T.int64):
        n = T.int64()
        k = T.int64()
        A = T.match_buffer(a, (n * 32 - 1,), "float32")
        B = T.match_buffer(b, (k - m,), "float32")
        A[T.int64(1)] = T.float32(0)
        B[T.min(T.int64(0), k)] = T.float32(0)

    golden("Simplify", before, expected)
