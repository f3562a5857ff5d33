"""te.create_prim_func: te programs against the TVMScript they must equal, and round trips."""

import pytest

import tessera
from tessera import te, tir
from tessera.script import tir as T


def check(func, expected):
    """`func` equals `expected` and survives printing and parsing back."""
    tessera.ir.assert_structural_equal(func, expected)
    reparsed = tessera.script.from_source(func.script())
    tessera.ir.assert_structural_equal(func, reparsed)


def blocks(func):
    """The names of the blocks of `func`, in program order (the root block first)."""
    names = []

    def walk(node):
        if isinstance(node, tir.BlockRealize):
            names.append(node.block.name_hint)
            walk(node.block.body)
        elif isinstance(node, tir.SeqStmt):
            for s in node.seq:
                walk(s)
        elif isinstance(node, tir.For):
            walk(node.body)

    walk(func.body)
    return names


def test_matmul_relu_of_the_spec():
    A = te.placeholder((128, 128), "float32", name="A")
    B = te.placeholder((128, 128), "float32", name="B")
    k = te.reduce_axis((0, 128), name="k")
    Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((128, 128), lambda i, j: te.max(Y[i, j], te.const(0, "float32")), name="C")
    func = te.create_prim_func([A, B, C])

    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"tir.noalias": True})
        Y = T.alloc_buffer((128, 128))
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    check(func, main)
    assert blocks(func) == ["root", "Y", "C"]
    assert func.attrs["global_symbol"].value == "main"
    assert func.attrs["tir.noalias"].value == 1
    # The intermediate tensor is allocated by the root block; parameters follow the list.
    assert [b.name for b in func.body.block.alloc_buffers] == ["Y"]
    assert [b.name for _, b in func.buffer_map] == ["A", "B", "C"]


def test_elementwise_add():
    A = te.placeholder((16, 32), name="A")
    B = te.placeholder((16, 32), name="B")
    C = te.compute(A.shape, lambda i, j: A[i, j] + B[i, j], name="C")

    @T.prim_func
    def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32"),
             C: T.Buffer((16, 32), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(16, 32):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    check(te.create_prim_func([A, B, C]), main)


def test_broadcast_add():
    A = te.placeholder((8, 4), "float16", name="A")
    bias = te.placeholder((4,), "float16", name="bias")
    C = te.compute((8, 4), lambda i, j: A[i, j] + bias[j], name="C")

    @T.prim_func
    def main(A: T.Buffer((8, 4), "float16"), bias: T.Buffer((4,), "float16"),
             C: T.Buffer((8, 4), "float16")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(8, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + bias[vj]

    check(te.create_prim_func([A, bias, C]), main)


def test_row_sum():
    A = te.placeholder((16, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    B = te.compute((16,), lambda i: te.sum(A[i, k], axis=k), name="B")

    @T.prim_func
    def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(16, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    check(te.create_prim_func([A, B]), main)


def test_max_reduction_starts_from_the_lowest_float():
    A = te.placeholder((16, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    B = te.compute((16,), lambda i: te.max(A[i, k], axis=k), name="B")

    @T.prim_func
    def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(16, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.min_value("float32")
                B[vi] = T.max(B[vi], A[vi, vk])

    func = te.create_prim_func([A, B])
    check(func, main)
    assert "T.float32(-3.4028234663852886e+38)" in func.script()


def test_min_reduction_of_integers_over_two_axes():
    A = te.placeholder((4, 8, 8), "int32", name="A")
    r = te.reduce_axis((0, 8), name="r")
    s = te.reduce_axis((0, 8), name="s")
    B = te.compute((4,), lambda b: te.min(A[b, r, s], axis=[r, s]), name="B")

    @T.prim_func
    def main(A: T.Buffer((4, 8, 8), "int32"), B: T.Buffer((4,), "int32")):
        T.func_attr({"tir.noalias": True})
        for b, r, s in T.grid(4, 8, 8):
            with T.block("B"):
                vb, vr, vs = T.axis.remap("SRR", [b, r, s])
                with T.init():
                    B[vb] = T.max_value("int32")
                B[vb] = T.min(B[vb], A[vb, vr, vs])

    check(te.create_prim_func([A, B]), main)


def test_custom_comm_reducer_product():
    product = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), name="product")
    A = te.placeholder((16, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    P = te.compute((16,), lambda i: product(A[i, k], axis=k), name="P")
    assert P.op.reduce.combiner.name == "product"

    @T.prim_func
    def main(A: T.Buffer((16, 8), "float32"), P: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(16, 8):
            with T.block("P"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    P[vi] = T.float32(1)
                P[vi] = P[vi] * A[vi, vk]

    check(te.create_prim_func([A, P]), main)
    # Without axes a reducer combines its arguments elementwise.
    x, y = tir.Var("x", "float32"), tir.Var("y", "float32")
    assert isinstance(product(x, y), tir.Mul)
    assert isinstance(te.max(x, y), tir.Max) and isinstance(te.min(x, y, x), tir.Min)


def test_reduction_with_where_and_init():
    A = te.placeholder((16, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    B = te.compute((16,), lambda i: te.sum(A[i, k], axis=k, where=k < i, init=te.const(1.0)),
                   name="B")

    @T.prim_func
    def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(16, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(1)
                B[vi] = T.Select(vk < vi, B[vi] + A[vi, vk], B[vi])

    check(te.create_prim_func([A, B]), main)


def test_reduce_axis_with_a_nonzero_start():
    A = te.placeholder((16, 64), name="A")
    k = te.reduce_axis((4, 64), name="k")
    B = te.compute((16,), lambda i: te.sum(A[i, k], axis=k), name="B")

    @T.prim_func
    def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(16, 60):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vk = T.axis.reduce((4, 64), k + 4)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    check(te.create_prim_func([A, B]), main)


def test_symbolic_shapes_become_buffer_shape_vars():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    B = te.placeholder((n, m), name="B")
    C = te.compute((n, m), lambda i, j: A[i, j] * B[i, j], name="C")
    func = te.create_prim_func([A, B, C])

    @T.prim_func
    def main(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (n, m))
        B = T.match_buffer(b, (n, m))
        C = T.match_buffer(c, (n, m))
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * B[vi, vj]

    check(func, main)
    # The shape variables are the ones given to te, shared by all three buffers.
    shapes = [b.shape for _, b in func.buffer_map]
    assert all(s[0].same_as(n) and s[1].same_as(m) for s in shapes)


def test_symbolic_reduction_with_size_vars():
    n = te.size_var("n")
    A = te.placeholder((n, 32), name="A")
    k = te.reduce_axis((0, 32), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k] * A[i, k], axis=k), name="B")

    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int32(is_size_var=True)
        A = T.match_buffer(a, (n, 32))
        B = T.match_buffer(b, (n,))
        for i, k in T.grid(n, 32):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk] * A[vi, vk]

    func = te.create_prim_func([A, B])
    assert isinstance(func.buffer_map[0][1].shape[0], tir.SizeVar)
    check(func, main)


def test_repeated_op_names_get_unique_block_names():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="B")
    D = te.compute((8,), lambda i: C[i] - 1.0, name="B")
    func = te.create_prim_func([A, D])
    assert blocks(func) == ["root", "B", "B_1", "B_2"]
    text = func.script()
    assert 'T.block("B_1")' in text and 'T.block("B_2")' in text

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": True})
        B = T.alloc_buffer((8,))
        C = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)
        for i in range(8):
            with T.block("B_1"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] * T.float32(2)
        for i in range(8):
            with T.block("B_2"):
                vi = T.axis.spatial(8, i)
                D[vi] = C[vi] - T.float32(1)

    check(func, main)


def test_intermediate_tensors_are_root_allocations_in_dependency_order():
    A = te.placeholder((4, 4), name="A")
    T1 = te.compute((4, 4), lambda i, j: A[i, j] * 2.0, name="T1")
    T2 = te.compute((4, 4), lambda i, j: A[j, i] + 1.0, name="T2")
    out = te.compute((4, 4), lambda i, j: T1[i, j] + T2[i, j], name="out")
    func = te.create_prim_func([A, out])
    assert [b.name for b in func.body.block.alloc_buffers] == ["T1", "T2"]
    assert [b.name for _, b in func.buffer_map] == ["A", "out"]
    # Listing an intermediate tensor makes it a parameter instead.
    func2 = te.create_prim_func([A, T1, out])
    assert [b.name for b in func2.body.block.alloc_buffers] == ["T2"]
    assert [b.name for _, b in func2.buffer_map] == ["A", "T1", "out"]


def test_with_attr_renames_the_function():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * A[i], name="B")
    func = te.create_prim_func([A, B]).with_attr("global_symbol", "square")
    assert func.attrs["global_symbol"].value == "square"

    @T.prim_func
    def square(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * A[vi]

    check(func, square)
    assert "def square(" in func.script()


def test_scalar_parameters_and_attrs():
    n = te.var("n")
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] * n.astype("float32"), name="B",
                   attrs={"schedule_rule": "elementwise"})
    func = te.create_prim_func([A, n, B])

    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), n: T.int32, B: T.Buffer((16,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.block_attr({"schedule_rule": "elementwise"})
                B[vi] = A[vi] * T.Cast("float32", n)

    check(func, main)


def test_index_expressions_and_varargs_lambda():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((4, 4), lambda *idx: A[idx[0] * 2, idx[1] + 4], name="B")
    assert [iv.var.name for iv in B.op.axis] == ["i0", "i1"]

    @T.prim_func
    def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((4, 4), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(4, 4):
            with T.block("B"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                B[v0, v1] = A[v0 * 2, v1 + 4]

    check(te.create_prim_func([A, B]), main)


def test_index_values_are_computable():
    B = te.compute((4, 4), lambda i, j: i * 4 + j, name="B")
    assert B.dtype == "int32"

    @T.prim_func
    def main(B: T.Buffer((4, 4), "int32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = vi * 4 + vj

    check(te.create_prim_func([B]), main)


def test_index_dtype_override_int64():
    A = te.placeholder((16, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    B = te.compute((16,), lambda i: te.sum(A[i, k] * te.const(2.0), axis=k), name="B")
    func = te.create_prim_func([A, B], index_dtype_override="int64")

    @T.prim_func
    def main(A: T.Buffer((T.int64(16), T.int64(8)), "float32"), B: T.Buffer((T.int64(16),), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(T.int64(16), T.int64(8)):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk] * T.float32(2)

    check(func, main)


def test_tensor_and_operation_introspection():
    A = te.placeholder((3, 5), "int8", name="A")
    B = te.compute((3,), lambda i: A[i, 0] + A[i, 4], name="B", tag="elemwise")
    assert [int(s.value) for s in A.shape] == [3, 5] and A.dtype == "int8" and A.name == "A"
    assert A.ndim == 2 and isinstance(A.op, te.PlaceholderOp) and A.op.dtype == "int8"
    assert isinstance(B.op, te.ComputeOp) and B.op.tag == "elemwise" and B.op.body is not None
    assert B.op.output(0) is B and B.op.input_tensors == [A]
    load = A[1, 2]
    assert isinstance(load, tir.BufferLoad) and load.buffer is A
    # PrimExpr operators work on tensor reads.
    assert isinstance(A[0, 0] * A[0, 1] + 1, tir.Add)
    k = te.reduce_axis((0, 5), name="k")
    red = te.sum(A[0, k], axis=k)
    assert isinstance(red, te.Reduce) and red.dtype == "int8" and "sum(" in repr(red)
    assert str(te.var("n").dtype) == "int32" and isinstance(te.size_var("m"), tir.SizeVar)
    assert te.const(1.5, "float16").dtype == "float16"


def test_compute_values_are_simplified_as_tvm_does():
    # A padding condition `y >= 1 and y - 1 < 6` is stored as TVM's simplifier writes it.
    A = te.placeholder((6,), name="A")
    P = te.compute((8,), lambda y: tessera.tir.if_then_else(
        tessera.tir.all(y >= 1, y - 1 < 6), A[y - 1], 0.0), name="P")
    func = te.create_prim_func([A, P])

    @T.prim_func
    def expected(A: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for y in range(8):
            with T.block("P"):
                vy = T.axis.spatial(8, y)
                P[vy] = T.if_then_else(1 <= vy and vy < 7, A[vy - 1], T.float32(0))

    tessera.ir.assert_structural_equal(func, expected)


def test_index_dtype_override_rewrites_narrow_index_arithmetic():
    # A reshape of int64 dims to an int32 shape: with int64 indices the flat index is rebuilt in
    # int64 and (f // 4) % 2 takes TVM's canonical form f % 8 // 4.
    A = te.placeholder((tir.IntImm("int64", 2), tir.IntImm("int64", 4)), name="A")
    B = tessera.topi.reshape(A, (4, 2))
    func = te.create_prim_func([A, B], index_dtype_override="int64")

    @T.prim_func
    def expected(A: T.Buffer((T.int64(2), T.int64(4)), "float32"),
                 T_reshape: T.Buffer((T.int64(4), T.int64(2)), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i0, i1 in T.grid(T.int64(4), T.int64(2)):
            with T.block("T_reshape"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T_reshape[v0, v1] = A[(v0 * T.int64(2) + v1) % T.int64(8) // T.int64(4),
                                      (v0 * T.int64(2) + v1) % T.int64(4)]

    tessera.ir.assert_structural_equal(func, expected)
    import numpy as np

    x = tessera.nd.array(np.arange(8, dtype="float32").reshape(2, 4))
    out = tessera.nd.empty((4, 2), "float32")
    tessera.build(func, target="c")(x, out)
    assert (out.numpy() == x.numpy().reshape(4, 2)).all()


def test_floormod_of_floordiv_simplifies_to_tvms_canonical_form():
    i = tir.Var("i", "int32")
    simplified = tessera._core.simplify_expr(tir.floormod(tir.floordiv(i, 4), 2))
    tessera.ir.assert_structural_equal(simplified, tir.floordiv(tir.floormod(i, 8), 4))


def test_let_bound_variables_are_not_parameters():
    import numpy as np

    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    A = te.placeholder((6,), "int32", name="A")
    B = te.placeholder((6,), "int32", name="B")
    C = te.compute((6,), lambda i: tir.Let(y, B[i], tir.Let(x, A[i], tir.floordiv(x, y))),
                   name="C")
    func = te.create_prim_func([A, B, C])
    a = np.array([7, -7, 7, -7, 0, 5], dtype="int32")
    b = np.array([2, 2, -2, -2, 3, 5], dtype="int32")
    out = tessera.nd.empty((6,), "int32")
    tessera.build(func, target="c")(tessera.nd.array(a), tessera.nd.array(b), out)
    np.testing.assert_array_equal(out.numpy(), np.floor_divide(a, b))


def test_variable_outside_its_let_is_still_a_missing_parameter():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    A = te.placeholder((6,), "int32", name="A")
    C = te.compute((6,), lambda i: tir.Let(x, A[i], x) + y, name="C")
    with pytest.raises(tessera.error.TesseraError, match="variable 'y' .* add it to the list"):
        te.create_prim_func([A, C])
