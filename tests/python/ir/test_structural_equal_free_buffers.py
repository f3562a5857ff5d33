"""ir.structural_equal / assert_structural_equal pair a buffer used without a definition with its
counterpart at first use (TVM's rule: a buffer's data pointer and shape are definitions), one to
one; the core comparison that passes use keeps free buffers over different data apart."""

import pytest

import tessera as ts
from tessera import _core, tir
from tessera.script import tir as T


def _load(buf, i):
    return tir.BufferLoad(buf, [i])


def test_free_buffers_of_the_same_fields_pair_at_first_use():
    i = tir.Var("i", "int32")
    a = tir.decl_buffer((16,), "float32", name="A")
    b = tir.decl_buffer((16,), "float32", name="B")
    assert ts.ir.structural_equal(_load(a, i), _load(b, i))
    ts.ir.assert_structural_equal(_load(a, i) + _load(a, i + 1), _load(b, i) + _load(b, i + 1))
    # The passes' comparison keeps them apart.
    assert not _core.structural_equal(_load(a, i), _load(b, i))


def test_the_pairing_is_one_to_one_and_fields_must_match():
    i = tir.Var("i", "int32")
    a = tir.decl_buffer((16,), "float32", name="A")
    b = tir.decl_buffer((16,), "float32", name="B")
    c = tir.decl_buffer((16,), "float32", name="C")
    # A pairs with B, so A cannot pair with C later, nor B with a second buffer.
    assert not ts.ir.structural_equal(_load(a, i) + _load(a, i), _load(b, i) + _load(c, i))
    assert not ts.ir.structural_equal(_load(a, i) + _load(c, i), _load(b, i) + _load(b, i))
    assert not ts.ir.structural_equal(_load(a, i), _load(tir.decl_buffer((8,), "float32"), i))
    assert not ts.ir.structural_equal(_load(a, i), _load(tir.decl_buffer((16,), "float16"), i))
    with pytest.raises(ValueError, match="StructuralEqual"):
        ts.ir.assert_structural_equal(_load(a, i) + _load(a, i), _load(b, i) + _load(c, i))


def test_a_symbolic_shape_pairs_with_the_buffer():
    i = tir.Var("i", "int32")
    n, m = tir.Var("n", "int32"), tir.Var("m", "int32")
    a = tir.decl_buffer((n,), "float32", name="A")
    b = tir.decl_buffer((m,), "float32", name="B")
    assert ts.ir.structural_equal(_load(a, i), _load(b, i))
    # n pairs with m through the buffers: a later use of n must meet m.
    assert ts.ir.structural_equal(_load(a, n - 1), _load(b, m - 1))
    assert not ts.ir.structural_equal(_load(a, n - 1), _load(b, i - 1))


def test_a_statement_over_a_free_buffer_equals_its_script():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(1)

    other = tir.decl_buffer((8,), "float32", name="B")
    body = tir.For(tir.Var("j", "int32"), 0, 8, tir.ForKind.SERIAL,
                   tir.BufferStore(other, tir.FloatImm("float32", 1.0), [tir.Var("k", "int32")]))
    assert not ts.ir.structural_equal(f.body, body)  # the store index is another free var
    j = tir.Var("j", "int32")
    body = tir.For(j, 0, 8, tir.ForKind.SERIAL,
                   tir.BufferStore(other, tir.FloatImm("float32", 1.0), [j]))
    ts.ir.assert_structural_equal(f.body, body)
