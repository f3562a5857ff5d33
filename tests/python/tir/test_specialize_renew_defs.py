"""PrimFunc.specialize (parameters fixed to buffers or values) and stmt_functor.renew_defs (a copy
with every definition new)."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraError, TesseraTypeError, TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T


@T.prim_func(private=True)
def scale(a: T.handle, b: T.handle, n: T.int32, k: T.int32):
    m = T.int32()
    A = T.match_buffer(a, (m, n * 2), "float32")
    B = T.match_buffer(b, (m, n * 2), "float32")
    for i, j in T.grid(m, n * 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.Cast("float32", k + 1)


def test_specialize_scalar_folds_the_constants():
    @T.prim_func(private=True)
    def expected(a: T.handle, b: T.handle, k: T.int32):
        m = T.int32()
        A = T.match_buffer(a, (m, 6), "float32")
        B = T.match_buffer(b, (m, 6), "float32")
        for i, j in T.grid(m, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.Cast("float32", k + 1)

    n = scale.params[2]
    assert_structural_equal(scale.specialize({n: 3}), expected)
    assert scale.specialize({}).same_as(scale)


def test_specialize_buffer_binds_the_shape_variables_and_runs():
    @T.prim_func(private=True)
    def expected(a: T.handle, b: T.handle, k: T.int32):
        A = T.match_buffer(a, (5, 6), "float32")
        B = T.match_buffer(b, (5, 6), "float32")
        for i, j in T.grid(5, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.Cast("float32", k + 1)

    a, b, n, k = scale.params
    # A's shape (m, n * 2) takes (5, 6) once n is 3: m becomes 5 everywhere.
    func = scale.specialize({n: 3}).specialize({a: tir.decl_buffer((5, 6), "float32")})
    assert_structural_equal(func, expected)
    assert [p.name for p in func.params] == ["a", "b", "k"]

    # k fixed as well: the function computes B = A * 3 for 5 x 6 inputs.
    full = func.specialize({func.params[2]: 2}).with_attr("global_symbol", "scale3")
    x = np.arange(30, dtype="float32").reshape(5, 6)
    out = ts.nd.array(np.zeros((5, 6), "float32"))
    ts.build(full, target="c")(ts.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), x * 3)


def test_specialize_strides_and_offset():
    @T.prim_func(private=True)
    def copy(a: T.handle, b: T.handle, p: T.int32, q: T.int32):
        A = T.match_buffer(a, (4, 4), "float32", strides=[p, 1], elem_offset=q)
        B = T.match_buffer(b, (4, 4), "float32")
        for i, j in T.grid(4, 4):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    @T.prim_func(private=True)
    def expected(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4, 4), "float32", strides=[8, 1], elem_offset=2)
        B = T.match_buffer(b, (4, 4), "float32")
        for i, j in T.grid(4, 4):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    a = copy.params[0]
    given = tir.decl_buffer((4, 4), "float32", strides=[8, 1], elem_offset=2)
    assert_structural_equal(copy.specialize({a: given}), expected)
    p, q = copy.params[2:]
    assert_structural_equal(copy.specialize({p: 8, q: 2}), expected)


def test_specialize_declared_buffer_and_pointer_to_expression():
    @T.prim_func(private=True)
    def before(A_data: T.handle("float32"), B_data: T.handle("float32"), size: T.int32):
        A = T.decl_buffer(32, "float32", data=A_data)
        B = T.decl_buffer(size, "float32", data=B_data)
        for i in range(size):
            B[i] = A[i] * 2.0

    @T.prim_func(private=True)
    def expected(A_data: T.handle("float32")):
        A = T.decl_buffer(32, "float32", data=A_data)
        B_data: T.Ptr[T.float32] = T.address_of(A[16])
        B = T.decl_buffer(16, "float32", data=B_data)
        for i in range(16):
            B[i] = A[i] * 2.0

    A = before.body.buffer
    _, b_data, size = before.params
    after = before.specialize({b_data: tir.address_of(A[16]), size: 16})
    assert_structural_equal(after, expected)


def test_specialize_errors_name_the_parameter():
    a, b, n, k = scale.params
    with pytest.raises(TesseraValueError, match="'x' is not a parameter"):
        scale.specialize({tir.Var("x", "int32"): 1})
    with pytest.raises(TesseraTypeError, match="parameter 'a' is a handle"):
        scale.specialize({a: 1})
    # Errors about a parameter of a parsed function point at the parameter in the source.
    cases = [
        ({a: tir.Var("h", "handle")}, "parameter 'a' has a buffer"),
        ({a: tir.decl_buffer((5,), "float32")}, "has 2 dimensions, the given buffer 1"),
        ({n: tir.decl_buffer((5,), "float32")}, "parameter 'n' has no buffer"),
        # n * 2 is an expression: it cannot take another value by itself.
        ({a: tir.decl_buffer((5, 7), "float32")}, r"shape of buffer 'A' \(parameter 'a'\) is n \* 2"),
        # m would be 5 from A and 6 from B.
        ({a: tir.decl_buffer((5, 6)), b: tir.decl_buffer((6, 6))}, "variable 'm' would be both 5 and 6"),
    ]
    scale3 = scale.specialize({n: 3})
    for param_map, message in cases:
        with pytest.raises(TesseraError, match=message) as err:
            (scale3 if len(param_map) == 2 else scale).specialize(param_map)
        assert "test_specialize_renew_defs.py:15" in str(err.value)


def test_renew_defs_copies_every_definition():
    @T.prim_func(private=True)
    def func(a: T.handle, n: T.int32):
        m = T.int32()
        A = T.match_buffer(a, (n, m), "float32")
        B = T.alloc_buffer((n, m), "float32")
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    copy = tir.stmt_functor.renew_defs(func)
    assert_structural_equal(copy, func)
    for old, new in zip(func.params, copy.params):
        assert not old.same_as(new)
    old_a, new_a = func.buffer_map[func.params[0]], copy.buffer_map[copy.params[0]]
    assert not old_a.same_as(new_a) and not old_a.data.same_as(new_a.data)
    # The shape's variables are the copy's own: n is the new parameter, m a new variable.
    assert new_a.shape[0].same_as(copy.params[1])
    assert not new_a.shape[1].same_as(old_a.shape[1])
    old_root, new_root = func.body.block, copy.body.block
    assert not old_root.alloc_buffers[0].same_as(new_root.alloc_buffers[0])
    old_loop, new_loop = old_root.body, new_root.body
    assert not old_loop.loop_var.same_as(new_loop.loop_var)
    old_block, new_block = old_loop.body.body.block, new_loop.body.body.block
    assert not old_block.iter_vars[0].var.same_as(new_block.iter_vars[0].var)
    # The store writes the renewed allocation.
    assert new_block.body.buffer.same_as(new_root.alloc_buffers[0])


def test_renew_defs_renews_a_size_first_named_inside_an_expression():
    @T.prim_func(private=True)
    def func(a: T.handle, b: T.handle):
        m = T.int64()
        A = T.match_buffer(a, (m * 2,))
        B = T.match_buffer(b, (m, 2))
        for i, j in T.grid(m, 2):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi * 2 + vj]

    copy = tir.stmt_functor.renew_defs(func)
    assert_structural_equal(copy, func)
    old_m = func.buffer_map[func.params[1]].shape[0]
    new_a, new_b = (copy.buffer_map[p] for p in copy.params)
    # One new m, in both shapes.
    assert new_b.shape[0].same_as(new_a.shape[0].a) and not new_b.shape[0].same_as(old_m)


def test_substitute_rebuilds_the_buffers_over_the_variable():
    @T.prim_func(private=True)
    def before(n: T.int32):
        A_data = T.allocate([n], "float32")
        A = T.decl_buffer(n, "float32", data=A_data)
        for i in range(n + 1):
            A[i] = T.float32(0)

    @T.prim_func(private=True)
    def expected():
        A_data = T.allocate([16], "float32")
        A = T.decl_buffer(16, "float32", data=A_data)
        # substitute does not fold: 16 + 1 stays.
        for i in range(T.Add(16, 1)):
            A[i] = T.float32(0)

    body = tir.stmt_functor.substitute(before.body, {before.params[0]: 16})
    assert_structural_equal(tir.PrimFunc([], body).with_attr("global_symbol", "x"),
                            expected.with_attr("global_symbol", "x"))
