"""Passes written in Python (prim_func_pass, module_pass, Sequential), the "tir.add_lower_pass"
phases of the TensorIR pipeline, and the stmt_functor helpers they are written with."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T
from tessera.tir import stmt_functor
from tessera.tir import transform as tt


@T.prim_func
def add_one(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


def kinds(node):
    seen = set()
    stmt_functor.post_order_visit(node, lambda n: seen.add(type(n).__name__))
    return seen


def scale_stores(factor, name="ScaleStores"):
    """A pass multiplying every stored value by `factor`."""

    @tt.prim_func_pass(opt_level=0, name=name)
    def scale(func, mod, ctx):
        def post(node):
            return tir.BufferStore(node.buffer, node.value * T.float32(factor), node.indices)

        return func.with_body(stmt_functor.ir_transform(func.body, None, post, ["tir.BufferStore"]))

    return scale


def run(lib, shape=(4, 8)):
    a = np.random.rand(*shape).astype("float32")
    b = np.zeros(shape, "float32")
    lib(a, b)
    return a, b


def test_phases_run_in_order_on_the_expected_ir():
    seen = []

    def recorder(phase):
        @tt.prim_func_pass(opt_level=0, name=f"Record{phase}")
        def record(func, mod, ctx):
            assert isinstance(ctx, ts.transform.PassContext)
            seen.append((phase, kinds(func.body), [len(b.shape) for _, b in func.buffer_map]))
            return func

        return record

    config = {"tir.add_lower_pass": [(3, recorder(3)), (0, recorder(0)), (2, recorder(2)), (1, recorder(1))]}
    with ts.transform.PassContext(config=config):
        lib = ts.build(add_one, target="c")
    assert [p for p, _, _ in seen] == [0, 1, 2, 3]
    # Phase 0 sees the blocks of the schedulable IR; phase 1 the flattened, block-free loops.
    assert "Block" in seen[0][1] and "BlockRealize" in seen[0][1]
    for phase, node_kinds, _ in seen[1:]:
        assert "Block" not in node_kinds, phase
        assert "For" in node_kinds and "BufferStore" in node_kinds, phase
    a, b = run(lib)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


def test_a_user_pass_changes_what_is_built():
    config = {"tir.add_lower_pass": [(1, scale_stores(3.0))]}
    with ts.transform.PassContext(config=config):
        lib = ts.build(add_one, target="c")
    a, b = run(lib)
    np.testing.assert_allclose(b, (a + 1) * 3, rtol=1e-6)
    # Outside the context the pass is gone.
    a, b = run(ts.build(add_one, target="c"))
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


def test_several_passes_of_one_phase_run_in_the_given_order():
    order = []

    def tag(name):
        @tt.prim_func_pass(opt_level=0, name=name)
        def f(func, mod, ctx):
            order.append(name)
            return func

        return f

    with ts.transform.PassContext(config={"tir.add_lower_pass": [(2, tag("x")), (2, tag("y")), (1, tag("z"))]}):
        ts.lower(add_one, target="c", stage="cleanup")
    assert order == ["z", "x", "y"]


def test_user_pass_shows_in_the_ir_dumps(tmp_path):
    config = {"tir.add_lower_pass": [(1, scale_stores(2.0, name="MyScale"))], "tessera.dump_ir": str(tmp_path)}
    with ts.transform.PassContext(config=config):
        ts.build(add_one, target="c")
    dumps = [p for p in tmp_path.rglob("*_flatten_MyScale.py")]
    assert len(dumps) == 1, sorted(p.name for p in tmp_path.rglob("*"))
    text = dumps[0].read_text()
    assert "* T.float32(2.0)" in text


def test_config_shows_the_passes_and_lists_the_key():
    p = scale_stores(2.0)
    ctx = ts.transform.PassContext(config={"tir.add_lower_pass": [(1, p)], "tir.disable_cse_tir": True})
    cfg = ctx.config
    assert cfg["tir.disable_cse_tir"] is True
    [(phase, got)] = cfg["tir.add_lower_pass"]
    assert phase == 1 and got.name == "ScaleStores"
    assert "tir.add_lower_pass" in ts.transform.PassContext.list_configs()


@pytest.mark.parametrize(
    "value, exc, message",
    [
        ([(4, "p")], ValueError, "phase 4 is not one of 0 (start of normalize)"),
        ([(-1, "p")], ValueError, "phase -1 is not one of"),
        ([("1", "p")], TypeError, "the phase must be an int, not str"),
        ([(1, lambda f, m, c: f)], TypeError, "expected a Pass (e.g. from tessera.tir.transform.prim_func_pass), not function"),
        ([1], TypeError, "item 0 must be a (phase, pass) pair"),
        ({1: 2}, TypeError, "takes a list of (phase, pass) pairs, not dict"),
    ],
)
def test_bad_add_lower_pass_values(value, exc, message):
    value = [(ph, scale_stores(2.0) if p == "p" else p) if isinstance(x, tuple) else x
             for x in value for ph, p in ([x] if isinstance(x, tuple) else [(None, None)])] \
        if isinstance(value, list) else value
    with pytest.raises(exc) as err:
        ts.transform.PassContext(config={"tir.add_lower_pass": value})
    assert message in str(err.value)


def test_pass_returning_the_wrong_type_is_a_type_error():
    @tt.prim_func_pass(opt_level=0)
    def forgets_return(func, mod, ctx):
        func.with_body(func.body)

    with ts.transform.PassContext(config={"tir.add_lower_pass": [(1, forgets_return)]}):
        with pytest.raises(TypeError, match="the prim_func_pass 'forgets_return' returned NoneType; it must return a PrimFunc"):
            ts.build(add_one, target="c")


def test_exception_in_a_user_pass_reaches_the_caller():
    @tt.prim_func_pass(opt_level=0)
    def broken(func, mod, ctx):
        raise RuntimeError("my pass failed on purpose")

    with ts.transform.PassContext(config={"tir.add_lower_pass": [(0, broken)]}):
        with pytest.raises(RuntimeError, match="my pass failed on purpose"):
            ts.build(add_one, target="c")
    # The failure left nothing behind: a build afterwards works.
    a, b = run(ts.build(add_one, target="c"))
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


def test_opt_level_and_required_pass_apply_to_user_passes():
    calls = []

    @tt.prim_func_pass(opt_level=3, name="Expensive")
    def expensive(func, mod, ctx):
        calls.append(ctx.opt_level)
        return func

    with ts.transform.PassContext(opt_level=2, config={"tir.add_lower_pass": [(1, expensive)]}):
        ts.lower(add_one, target="c", stage="flatten")
    assert calls == []
    with ts.transform.PassContext(opt_level=2, required_pass=["Expensive"],
                                  config={"tir.add_lower_pass": [(1, expensive)]}):
        ts.lower(add_one, target="c", stage="flatten")
    assert calls == [2]
    with ts.transform.PassContext(opt_level=3, config={"tir.add_lower_pass": [(1, expensive)]}):
        ts.lower(add_one, target="c", stage="flatten")
    assert calls == [2, 3]


def test_prim_func_pass_called_directly_and_on_a_primfunc():
    mod = scale_stores(5.0)(add_one)
    assert isinstance(mod, ts.ir.IRModule)
    assert "* T.float32(5.0)" in mod.script()
    assert scale_stores(5.0).name == "ScaleStores" and scale_stores(5.0).opt_level == 0


def test_class_decorated_passes_take_constructor_arguments():
    @tt.prim_func_pass(opt_level=1)
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def transform_function(self, func, mod, ctx):
            def post(node):
                return tir.BufferStore(node.buffer, node.value * T.float32(self.factor), node.indices)

            return func.with_body(stmt_functor.ir_transform(func.body, None, post, ["tir.BufferStore"]))

    p = Scale(7.0)
    assert p.name == "Scale" and p.opt_level == 1
    assert "* T.float32(7.0)" in p(add_one).script()
    with pytest.raises(TypeError, match="needs a method 'transform_function'"):
        tt.prim_func_pass(type("NoMethod", (), {}))


def test_module_pass_and_sequential():
    renamed = []

    @ts.transform.module_pass(opt_level=0, name="AddAttr")
    def add_attr(mod, ctx):
        renamed.append(len(mod))
        gv, func = mod.functions[0]
        return ts.ir.IRModule([(gv, func.with_attr("my_attr", 42))], mod.attrs)

    seq = ts.transform.Sequential([scale_stores(2.0), add_attr, tt.Simplify()], name="MySeq")
    assert seq.name == "MySeq"
    out = seq(ts.ir.IRModule.from_func(add_one, "main"))
    assert renamed == [1]
    text = out.script()
    assert "my_attr" in text and "* T.float32(2.0)" in text
    with ts.transform.PassContext(config={"tir.add_lower_pass": [(1, seq)]}):
        lib = ts.build(add_one, target="c")
    a, b = run(lib)
    np.testing.assert_allclose(b, (a + 1) * 2, rtol=1e-6)
    with pytest.raises(TypeError, match="Sequential takes Pass objects, not int"):
        ts.transform.Sequential([1])

    @ts.transform.module_pass
    def bad(mod, ctx):
        return 3

    with pytest.raises(TypeError, match="the module_pass 'bad' returned int; it must return an IRModule"):
        bad(ts.ir.IRModule.from_func(add_one, "main"))


def test_ir_transform_preorder_replaces_without_visiting_children():
    visited = []

    def pre(node):
        if isinstance(node, tir.For):
            return tir.Evaluate(T.int32(0))
        return None

    def post(node):
        visited.append(type(node).__name__)

    out = stmt_functor.ir_transform(add_one.body, pre, post, ["tir.For", "tir.BufferStore"])
    assert "BufferStore" not in visited  # the loop was replaced before its body was visited
    assert "For" not in kinds(out)


def test_ir_transform_keeps_unchanged_nodes_and_rewrites_expressions():
    body = add_one.body
    assert stmt_functor.ir_transform(body, None, lambda n: None).same_as(body)

    def one_to_two(node):
        if isinstance(node, tir.FloatImm) and node.value == 1.0:
            return T.float32(2)
        return None

    out = stmt_functor.ir_transform(body, None, one_to_two, ["FloatImm"])
    assert "T.float32(2.0)" in out.script() and "T.float32(1.0)" not in out.script()


def test_ir_transform_errors():
    with pytest.raises(ValueError, match="only_enable names an unknown node kind 'Loop'"):
        stmt_functor.ir_transform(add_one.body, None, lambda n: None, ["tir.Loop"])
    with pytest.raises(ts.error.TesseraError, match="replaced a statement .BufferStore. with a node of kind IntImm, which is not a statement"):
        stmt_functor.ir_transform(add_one.body, None, lambda n: T.int32(0), ["tir.BufferStore"])
    with pytest.raises(ts.error.TesseraError, match="replaced a float32 expression .FloatImm. with a int32 one"):
        stmt_functor.ir_transform(add_one.body, None, lambda n: T.int32(0), ["tir.FloatImm"])
    with pytest.raises(TypeError, match="must return None or an IR node, not str"):
        stmt_functor.ir_transform(add_one.body, None, lambda n: "x", ["tir.For"])
    with pytest.raises(TypeError, match="postorder must be callable or None"):
        stmt_functor.ir_transform(add_one.body, None, 3)


def test_substitute():
    n = tir.Var("n", "int32")
    e = n * 2 + 1
    out = stmt_functor.substitute(e, {n: 5})
    # Substitution rebuilds the nodes without folding them (as TVM's); `*`/`+` would fold.
    five, two, one = (tir.IntImm("int32", v) for v in (5, 2, 1))
    assert ts.ir.structural_equal(out, tir.Add(tir.Mul(five, two), one))
    with pytest.raises(TypeError, match="n is int32 but its value is float32"):
        stmt_functor.substitute(e, {n: T.float32(1)})


def test_apply_maps_every_function():
    import tessera as ts
    from tessera.script import ir as I
    from tessera.script import tir as T

    @I.ir_module
    class Module:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

        @T.prim_func
        def g(A: T.Buffer((4,), "float32")):
            A[1] = T.float32(2)

    tagged = ts.tir.transform.Apply(lambda func: func.with_attr("tir.noalias", True))(Module)
    assert all(bool(func.attrs["tir.noalias"]) for _, func in tagged.functions)
    with pytest.raises(TypeError, match="function of a PrimFunc"):
        ts.tir.transform.Apply(3)
