"""te.extern, te.extern_primfunc and te.scan: the functions create_prim_func makes of them,
built and run against numpy, and their errors."""

import numpy as np
import pytest

import tessera
from tessera import te, tir
from tessera.error import TesseraError
from tessera.script import tir as T


def build(args, name="main"):
    func = te.create_prim_func(args)
    return func, tessera.build(func, target="c")


@pytest.fixture
def packed():
    """Register Python functions for one test; unregister them after it."""
    names = []

    def register(name, f):
        tessera.register_func(name, f, override=True)
        names.append(name)

    yield register
    for name in names:
        tessera.runtime.remove_global_func(name)


# ---- te.extern ------------------------------------------------------------------------------


def test_extern_call_packed_equals_its_tvmscript():
    A = te.placeholder((16, 8), name="A")
    B = te.placeholder((16, 8), name="B")
    C = te.extern((16, 8), [A, B],
                  lambda ins, outs: tir.call_packed("test.matmul", ins[0], ins[1], outs[0], 0, 0),
                  name="C")
    func = te.create_prim_func([A, B, C])

    @T.prim_func
    def expected(var_A: T.handle, var_B: T.handle, var_C: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        off_a = T.int32()
        off_b = T.int32()
        off_c = T.int32()
        A = T.match_buffer(var_A, (16, 8), elem_offset=off_a)
        B = T.match_buffer(var_B, (16, 8), elem_offset=off_b)
        C = T.match_buffer(var_C, (16, 8), elem_offset=off_c)
        # As TVM's: the lone extern block is the root block, which lists no regions.
        with T.block("C"):
            T.reads()
            T.writes()
            T.call_packed("test.matmul",
                          T.tvm_stack_make_array(A.data, T.tvm_stack_make_shape(16, 8), 0, 2,
                                                 T.float32(0), off_a),
                          T.tvm_stack_make_array(B.data, T.tvm_stack_make_shape(16, 8), 0, 2,
                                                 T.float32(0), off_b),
                          T.tvm_stack_make_array(C.data, T.tvm_stack_make_shape(16, 8), 0, 2,
                                                 T.float32(0), off_c),
                          0, 0)

    tessera.ir.assert_structural_equal(func, expected)
    tessera.ir.assert_structural_equal(func, tessera.script.from_source(func.script()))


def test_extern_op_fields():
    m = te.size_var("m")
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 10, name="B")
    res = te.extern([A.shape, A.shape], [A, B],
                    lambda ins, outs: tir.call_packed("f", ins[0].data, outs[0].data, outs[1].data, m))
    assert len(res) == 2
    assert res[0].value_index == 0 and res[1].value_index == 1
    op = res[0].op
    assert isinstance(op, te.ExternOp) and op.num_outputs == 2
    assert [t.name for t in op.input_tensors] == ["A", "B"]
    assert [b.name for b in op.output_placeholders] == ["extern", "extern"]
    assert str(res[1].dtype) == "float32" and tuple(res[1].shape)[0].same_as(m)


def test_extern_calls_a_registered_python_function(packed):
    seen = {}

    def add_one(x, y, k):
        seen["shape"], seen["k"] = x.shape, k
        y.copyfrom(x.numpy() + k)

    packed("test.add_k", add_one)
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.extern((n,), [A], lambda ins, outs: tir.call_packed("test.add_k", ins[0], outs[0], 3),
                  name="B")
    C = te.compute((n,), lambda i: B[i] * 2.0, name="C")
    _, lib = build([A, C])
    a = np.random.default_rng(0).standard_normal(37).astype("float32")
    c = tessera.nd.empty((37,), "float32")
    lib(tessera.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), (a + 3) * 2, rtol=1e-6)
    assert seen == {"shape": (37,), "k": 3}


def test_extern_with_several_outputs_and_scalars(packed):
    def split(x, lo, hi, scale):
        v = x.numpy()
        lo.copyfrom(np.minimum(v, 0) * scale)
        hi.copyfrom(np.maximum(v, 0) * scale)

    packed("test.split", split)
    A = te.placeholder((6, 5), "float64", name="A")
    lo, hi = te.extern([(6, 5), (6, 5)], [A],
                       lambda ins, outs: tir.call_packed("test.split", ins[0], outs[0], outs[1], 0.5),
                       name="S")
    _, lib = build([A, lo, hi])
    a = np.random.default_rng(1).standard_normal((6, 5))
    out_lo, out_hi = tessera.nd.empty((6, 5), "float64"), tessera.nd.empty((6, 5), "float64")
    lib(tessera.nd.array(a), out_lo, out_hi)
    np.testing.assert_allclose(out_lo.numpy(), np.minimum(a, 0) * 0.5)
    np.testing.assert_allclose(out_hi.numpy(), np.maximum(a, 0) * 0.5)


def test_extern_of_an_intermediate_tensor(packed):
    # The extern reads a computed tensor (an allocation) and writes one that a compute reads.
    packed("test.reverse", lambda x, y: y.copyfrom(x.numpy()[::-1]))
    A = te.placeholder((10,), "int32", name="A")
    B = te.compute((10,), lambda i: A[i] + 1, name="B")
    C = te.extern((10,), [B], lambda ins, outs: tir.call_packed("test.reverse", ins[0], outs[0]),
                  name="C")
    D = te.compute((10,), lambda i: C[i] * 3, name="D")
    func, lib = build([A, D])
    a = np.arange(10, dtype="int32")
    d = tessera.nd.empty((10,), "int32")
    lib(tessera.nd.array(a), d)
    np.testing.assert_array_equal(d.numpy(), (a + 1)[::-1] * 3)
    assert "C" in func.script() and "T.alloc_buffer" in func.script()
    # Among other blocks the extern block lists the regions it reads and writes.
    block = func.body.block.body.seq[1].block
    assert block.name_hint == "C"
    assert [r.buffer.name for r in block.reads] == ["B"]
    assert [r.buffer.name for r in block.writes] == ["C"]


def test_a_program_variable_bound_to_a_name_is_the_variable_itself():
    # As TVM's parser: `off = te.var(...)` names the variable, with no LetStmt around the body.
    off = te.var("elem_offset")

    @T.prim_func
    def func(a: T.handle):
        n = off
        A = T.match_buffer(a, (8,), elem_offset=n)
        A[0] = T.float32(1)

    assert func.buffer_map[func.params[0]].elem_offset.same_as(off)
    assert "T.let" not in func.script() and ": T.int32 =" not in func.script()


def test_extern_calls_a_c_function_in_an_ir_builder_body():
    # The classic te.extern: a loop built with tir.ir_builder calling a C library function.
    n = 23
    A = te.placeholder((n,), name="A")

    def body(ins, outs):
        ib = tir.ir_builder.create()
        a, b = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        with ib.for_range(0, n, name="i") as i:
            b[i] = tir.call_extern("float32", "expf", a[i]) + 1.0
        return ib.get()

    B = te.extern((n,), [A], body, name="B")
    _, lib = build([A, B])
    a = np.linspace(-2, 2, n).astype("float32")
    b = tessera.nd.empty((n,), "float32")
    lib(tessera.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), np.exp(a) + 1, rtol=1e-6)


def test_extern_with_a_c_call_on_pointers():
    # call_extern with the buffers' data pointers (memcpy from the C library).
    A = te.placeholder((12,), "int64", name="A")
    B = te.extern((12,), [A],
                  lambda ins, outs: tir.call_extern("handle", "memcpy", outs[0].data, ins[0].data,
                                                    12 * 8), name="B")
    C = te.compute((12,), lambda i: B[i] - A[i] * 2, name="C")
    _, lib = build([A, C])
    a = np.arange(12, dtype="int64") * 7
    c = tessera.nd.empty((12,), "int64")
    lib(tessera.nd.array(a), c)
    np.testing.assert_array_equal(c.numpy(), -a)


def test_an_unregistered_packed_function_fails_the_call():
    A = te.placeholder((4,), name="A")
    B = te.extern((4,), [A], lambda ins, outs: tir.call_packed("test.nowhere", ins[0], outs[0]))
    _, lib = build([A, B])
    with pytest.raises(TesseraError, match="test.nowhere.*not registered"):
        lib(tessera.nd.array(np.zeros(4, "float32")), tessera.nd.empty((4,), "float32"))


def test_an_exception_in_the_packed_function_fails_the_call(packed):
    def boom(x, y):
        raise ValueError("no luck today")

    packed("test.boom", boom)
    A = te.placeholder((4,), name="A")
    B = te.extern((4,), [A], lambda ins, outs: tir.call_packed("test.boom", ins[0], outs[0]))
    _, lib = build([A, B])
    with pytest.raises(TesseraError, match="no luck today"):
        lib(tessera.nd.array(np.zeros(4, "float32")), tessera.nd.empty((4,), "float32"))


def test_register_func_forms():
    @tessera.register_func("test.forms")
    def f(x):
        return x + 1

    try:
        assert tessera.get_global_func("test.forms") is f
        assert "test.forms" in tessera.runtime.list_global_func_names()
        with pytest.raises(TesseraError, match="already registered"):
            tessera.register_func("test.forms", f)
    finally:
        tessera.runtime.remove_global_func("test.forms")
    assert tessera.get_global_func("test.forms", allow_missing=True) is None


def test_extern_errors():
    A = te.placeholder((4,), name="A")
    I = te.placeholder((4,), "int32", name="I")
    with pytest.raises(TesseraError, match="must return a statement"):
        te.extern((4,), [A], lambda ins, outs: "not a statement")
    with pytest.raises(TesseraError, match="cannot infer the output dtype"):
        te.extern((4,), [A, I], lambda ins, outs: tir.call_packed("f", ins[0]))
    with pytest.raises(TesseraError, match="inputs must be te tensors"):
        te.extern((4,), [np.zeros(4)], lambda ins, outs: tir.call_packed("f"))
    with pytest.raises(TesseraError, match="1 inputs but 2 in_buffers"):
        te.extern((4,), [A], lambda ins, outs: tir.call_packed("f"),
                  in_buffers=[tir.decl_buffer((4,)), tir.decl_buffer((4,))])


def test_call_packed_inside_a_parallel_loop_is_refused():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in T.parallel(8):
            T.evaluate(T.call_packed("test.any", A[i]))

    with pytest.raises(TesseraError, match="parallel loop"):
        tessera.build(f, target="c")


# ---- te.extern_primfunc ------------------------------------------------------------------------


def test_extern_primfunc_inlines_a_tensorir_function():
    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (8, 6))
        B = T.match_buffer(b, (8, 6))
        for i, j in T.grid(8, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0

    X = te.placeholder((8, 6), name="X")
    Y = te.extern_primfunc([X], scale, name="Y")
    Z = te.compute((8, 6), lambda i, j: Y[i, j] + 1.0, name="Z")
    _, lib = build([X, Z])
    x = np.random.default_rng(2).standard_normal((8, 6)).astype("float32")
    z = tessera.nd.empty((8, 6), "float32")
    lib(tessera.nd.array(x), z)
    np.testing.assert_allclose(z.numpy(), x * 2 + 1, rtol=1e-6)


def test_extern_primfunc_checks_the_inputs():
    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (8,))
        B = T.match_buffer(b, (8,))
        for i in range(8):
            B[i] = A[i]

    with pytest.raises(TesseraError, match="does not match"):
        te.extern_primfunc([te.placeholder((9,), name="X")], scale)
    with pytest.raises(TesseraError, match="reads 1 buffers"):
        te.extern_primfunc([te.placeholder((8,)), te.placeholder((8,))], scale)


# ---- te.scan ------------------------------------------------------------------------------------


def cumsum_scan():
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n), name="s_state")
    s_init = te.compute((1, n), lambda _, i: X[0, i], name="s_init")
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i], name="s_update")
    return X, te.scan(s_init, s_update, s_state, inputs=[X], name="s_scan")


def test_scan_op_fields():
    X, res = cumsum_scan()
    assert isinstance(res.op, te.ScanOp)
    assert res.op.num_outputs == 1 and len(res.shape) == 2
    assert res.op.scan_axis.var.name == "s_scan.idx"
    assert [t.name for t in res.op.input_tensors] == ["s_init", "s_update"]


def test_scan_cumsum_equals_its_tvmscript():
    X, res = cumsum_scan()
    func = te.create_prim_func([X, res])

    @T.prim_func
    def expected(var_X: T.handle, var_s_scan: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        m, n = T.int32(), T.int32()
        X = T.match_buffer(var_X, (m, n))
        s_scan = T.match_buffer(var_s_scan, (m, n))
        s_init = T.alloc_buffer((1, n))
        for _, i in T.grid(1, n):
            with T.block("s_init"):
                v__, v_i = T.axis.remap("SS", [_, i])
                s_init[v__, v_i] = X[0, v_i]
        for i0, i1 in T.grid(1, n):
            with T.block("s_scan_init"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                s_scan[v_i0, v_i1] = s_init[v_i0, v_i1]
        for s_scan_idx in range(m - 1):
            for i in range(n):
                with T.block("s_update"):
                    v_t = T.axis.scan(T.Range(1, m), s_scan_idx + 1)
                    v_i = T.axis.spatial(n, i)
                    s_scan[v_t, v_i] = s_scan[v_t - 1, v_i] + X[v_t, v_i]

    tessera.ir.assert_structural_equal(func, expected)
    tessera.ir.assert_structural_equal(func, tessera.script.from_source(func.script()))


@pytest.mark.parametrize("shape", [(1, 3), (7, 5), (12, 1)])
def test_scan_cumsum_against_numpy(shape):
    X, res = cumsum_scan()
    _, lib = build([X, res])
    x = np.random.default_rng(3).standard_normal(shape).astype("float32")
    out = tessera.nd.empty(shape, "float32")
    lib(tessera.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=0), rtol=1e-5, atol=1e-5)


def test_scan_with_two_states_and_a_body_stage():
    # s1[t] = s1[t-1] + s2[t-1] + x1[t]; s2[t] = 2 * s2[t-1] + x2[t], through a body compute.
    m, n = 9, 4
    x1 = te.placeholder((m, n), "float64", name="x1")
    x2 = te.placeholder((m, n), "float64", name="x2")
    s1 = te.placeholder((m, n), "float64", name="s1")
    s2 = te.placeholder((m, n), "float64", name="s2")
    i1 = te.compute((1, n), lambda _, i: x1[0, i], name="i1")
    i2 = te.compute((1, n), lambda _, i: x2[0, i], name="i2")
    twice = te.compute((m, n), lambda t, i: s2[t - 1, i] * 2.0, name="twice")
    u1 = te.compute((m, n), lambda t, i: s1[t - 1, i] + s2[t - 1, i] + x1[t, i], name="u1")
    u2 = te.compute((m, n), lambda t, i: twice[t, i] + x2[t, i], name="u2")
    r1, r2 = te.scan([i1, i2], [u1, u2], [s1, s2], name="rec")
    assert r1.value_index == 0 and r2.value_index == 1
    _, lib = build([x1, x2, r1, r2])
    rng = np.random.default_rng(4)
    a1, a2 = rng.standard_normal((m, n)), rng.standard_normal((m, n))
    e1, e2 = a1.copy(), a2.copy()
    for t in range(1, m):
        e2[t] = 2 * e2[t - 1] + a2[t]
        e1[t] = e1[t - 1] + e2[t - 1] + a1[t]
    o1, o2 = tessera.nd.empty((m, n), "float64"), tessera.nd.empty((m, n), "float64")
    lib(tessera.nd.array(a1), tessera.nd.array(a2), o1, o2)
    np.testing.assert_allclose(o1.numpy(), e1)
    np.testing.assert_allclose(o2.numpy(), e2)


def test_scan_with_a_reduction_and_several_initial_rows():
    # Fibonacci-like rows: s[t] = s[t-1] + s[t-2] summed over a row window; two initial rows.
    m, n = 10, 3
    X = te.placeholder((2, n), "int64", name="X")
    s = te.placeholder((m, n), "int64", name="s")
    init = te.compute((2, n), lambda t, i: X[t, i], name="init")
    k = te.reduce_axis((1, 3), name="k")
    upd = te.compute((m, n), lambda t, i: te.sum(s[t - k, i], axis=k), name="upd")
    res = te.scan(init, upd, s, name="fib")
    _, lib = build([X, res])
    x = np.array([[1, 2, 3], [1, 1, 0]], dtype="int64")
    expect = np.zeros((m, n), "int64")
    expect[:2] = x
    for t in range(2, m):
        expect[t] = expect[t - 1] + expect[t - 2]
    out = tessera.nd.empty((m, n), "int64")
    lib(tessera.nd.array(x), out)
    np.testing.assert_array_equal(out.numpy(), expect)


def test_scan_result_feeds_a_compute():
    X, res = cumsum_scan()
    Y = te.compute(res.shape, lambda t, i: res[t, i] * 2.0, name="Y")
    _, lib = build([X, Y])
    x = np.random.default_rng(5).standard_normal((6, 3)).astype("float32")
    y = tessera.nd.empty((6, 3), "float32")
    lib(tessera.nd.array(x), y)
    np.testing.assert_allclose(y.numpy(), np.cumsum(x, axis=0) * 2, rtol=1e-5, atol=1e-5)


def test_scan_errors():
    m, n = 8, 4
    X = te.placeholder((m, n), name="X")
    s = te.placeholder((m, n), name="s")
    init = te.compute((1, n), lambda _, i: X[0, i], name="init")
    upd = te.compute((m, n), lambda t, i: s[t - 1, i] + X[t, i], name="upd")
    with pytest.raises(TesseraError, match="same length"):
        te.scan([init, init], [upd], [s])
    with pytest.raises(TesseraError, match="must be a te.placeholder"):
        te.scan(init, upd, init)
    with pytest.raises(TesseraError, match="one dtype"):
        te.scan(init, upd, te.placeholder((m, n), "int32", name="si"))
    with pytest.raises(TesseraError, match="dimension 1"):
        te.scan(init, upd, te.placeholder((m, n + 1), name="sw"))
    no_state = te.compute((m, n), lambda t, i: X[t, i], name="no_state")
    with pytest.raises(TesseraError, match="does not read the state"):
        te.create_prim_func([X, te.scan(init, no_state, s)])
    res = te.scan(init, upd, s)
    with pytest.raises(TesseraError, match="computed inside te.scan"):
        te.create_prim_func([X, res, upd])


def test_buffer_map_is_indexed_by_parameter():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    func = te.create_prim_func([A, B])
    a, b = func.params
    assert func.buffer_map[a].name == "A" and func.buffer_map[b].name == "B"
    assert a in func.buffer_map and func.buffer_map.get(b).name == "B"
    assert [buf.name for _, buf in func.buffer_map] == ["A", "B"]  # still the pairs in order
    assert [v.name for v in func.buffer_map.keys()] == ["var_A", "var_B"]
    with pytest.raises(KeyError):
        func.buffer_map[tir.Var("x", "handle")]


def test_extern_with_a_void_c_call_and_an_element_argument():
    A = te.placeholder((8,), name="A")
    P = te.placeholder((1,), name="P")
    C = te.extern((8,), [A, P],
                  lambda ins, outs: tir.call_extern("", "myfunc", ins[0].data, outs[0].data,
                                                    ins[1][0]), name="C")
    func = te.create_prim_func([A, P, C])
    text = func.script()
    assert 'T.call_extern("void", "myfunc", A.data, C.data, P[0])' in text
    tessera.ir.assert_structural_equal(func, tessera.script.from_source(text))
