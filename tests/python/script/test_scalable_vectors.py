"""Scalable vectors (TVM's SVE form, vscale * k lanes) and predicated accesses in TVMScript:
the dtype names, T.vscale() lanes of T.Ramp/T.Broadcast, A.vload/A.vstore with dtype= and
predicate=, printing in TVM's form, round trips, and the located refusal of the C and CUDA
code generators (this host has no SVE)."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import DiagnosticError, TesseraError
from tessera.ir import DataType
from tessera.script import tir as T


def assert_same_program(a, b):
    ts.ir.assert_structural_equal(a.with_attr("global_symbol", "f"), b.with_attr("global_symbol", "f"))


def roundtrip(func):
    text = func.script()
    again = ts.script.from_source(text)
    ts.ir.assert_structural_equal(func, again)
    return text


def test_scalable_dtype_names_and_attributes():
    t = DataType("float32xvscalex4")
    assert t == "float32xvscalex4" and t.is_scalable and t.is_scalable_vector
    assert t.is_vector and not t.is_scalar and not t.is_fixed_length_vector
    assert t.vscale_factor == 4 and t.get_lanes_or_vscale_factor() == 4
    assert t.element_of == "float32" and t.bits == 32
    assert t.with_bits(16) == "float16xvscalex4"
    assert DataType("float32").with_scalable_vscale_factor(8) == "float32xvscalex8"
    assert DataType("uint1xvscalex4") == "uint1xvscalex4"
    assert DataType("float32x4") != t
    with pytest.raises(TypeError, match="not known at compile time"):
        t.lanes
    with pytest.raises(TypeError, match="unknown data type"):
        DataType("float32xvscalex1")


def test_ramp_and_broadcast_with_vscale_lanes_through_the_tir_api():
    a = tir.Var("a", "int32")
    ramp = tir.Ramp(a, 1, tir.vscale() * 8)
    assert ramp.dtype == "int32xvscalex8"
    assert ramp.script() == "T.Ramp(a, 1, T.vscale() * 8)"
    # The lanes read back as the expression T.vscale() * 8; 8 * vscale() is the same vector.
    assert ts.ir.structural_equal(ramp.lanes, tir.vscale() * 8)
    ts.ir.assert_structural_equal(ramp, tir.Ramp(a, 1, 8 * tir.vscale()))
    assert not ts.ir.structural_equal(ramp, tir.Ramp(a, 1, 8))
    bc = tir.Broadcast(0, tir.vscale() * 4)
    assert bc.script() == "T.Broadcast(0, T.vscale() * 4)"
    n = tir.Var("n", "int32")
    with pytest.raises(TypeError, match=r"T.vscale\(\) \* k"):
        tir.Ramp(a, 1, n * 4)
    with pytest.raises(TypeError, match=r"T.vscale\(\) \* k"):
        tir.Broadcast(0, tir.vscale() * 1)


@T.prim_func
def scalable_store(a: T.handle):
    A = T.match_buffer(a, (200,), "float32")
    A[T.Ramp(11, 2, 4 * T.vscale())] = T.Broadcast(T.float32(125), 4 * T.vscale())


def test_scalable_store_round_trips():
    text = roundtrip(scalable_store)
    assert "A[T.Ramp(11, 2, T.vscale() * 4)] = T.Broadcast(T.float32(125.0), T.vscale() * 4)" in text


@T.prim_func
def predicated(a: T.handle):
    A = T.match_buffer(a, (128, 128), "float32")
    mask = T.meta_var(T.get_active_lane_mask("uint1xvscalex4", 0, 13))
    A.vstore([0, T.Ramp(0, 2, T.vscale() * 4)], A.vload([0, T.Ramp(0, 4, T.vscale() * 4)], predicate=mask),
             predicate=mask)


def test_predicated_scalable_load_and_store_print_as_vload_vstore():
    text = roundtrip(predicated)
    mask = 'T.get_active_lane_mask("uint1xvscalex4", 0, 13)'
    assert (f"A.vstore([0, T.Ramp(0, 2, T.vscale() * 4)], A.vload([0, T.Ramp(0, 4, T.vscale() * 4)], "
            f"predicate={mask}), predicate={mask})") in text


def test_vload_with_a_scalable_dtype_and_a_scalable_slice():
    @T.prim_func
    def f(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        B[0 : T.vscale() * 4] = A.vload([T.Ramp(0, 1, T.vscale() * 4)], dtype="float32xvscalex4")

    @T.prim_func
    def g(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        B[T.Ramp(0, 1, T.vscale() * 4)] = A[T.Ramp(0, 1, T.vscale() * 4)]

    assert_same_program(f, g)
    assert "B[0:T.vscale() * 4] = A[0:T.vscale() * 4]" in roundtrip(f)


def test_vload_dtype_widens_a_scalar_index_as_tvm():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        B[T.Ramp(4, 1, 4)] = A.vload([4], dtype="float32x4")

    @T.prim_func
    def g(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        B[4:8] = A[4:8]

    assert_same_program(f, g)
    with pytest.raises(DiagnosticError, match="cannot load int32x4 from a buffer of float32"):
        @T.prim_func
        def bad(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32")):
            B[T.Ramp(0, 1, 4)] = A.vload([0], dtype="int32x4")


def test_predicate_must_match_the_scalable_lanes():
    with pytest.raises(DiagnosticError, match="load predicate must be boolxvscalex4, got boolx4"):
        @T.prim_func
        def f(A: T.Buffer((128,), "float32")):
            A[T.Ramp(0, 1, T.vscale() * 4)] = A.vload([T.Ramp(0, 1, T.vscale() * 4)],
                                                       predicate=T.Broadcast(T.bool(True), 4))


def test_code_generators_refuse_scalable_vectors_with_the_line():
    for target in ("c", "cuda"):
        with pytest.raises(TesseraError) as err:
            ts.build(scalable_store, target=target)
        message = str(err.value)
        assert f"scalable vectors are not supported on the {target} target" in message, message
        assert "float32xvscalex4" in message
        assert "test_scalable_vectors.py" in message, message


@T.prim_func
def predicated_fixed(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        B.vstore([T.Ramp(i * 4, 1, 4)],
                 A.vload([T.Ramp(i * 4, 1, 4)], predicate=T.Ramp(0, 1, 4) < T.Broadcast(2, 4)),
                 predicate=T.Ramp(0, 1, 4) < T.Broadcast(3, 4))


def test_predicated_fixed_width_access_round_trips_and_runs_on_the_c_target():
    text = roundtrip(predicated_fixed)
    assert "predicate=T.Ramp(0, 1, 4) < T.Broadcast(2, 4)" in text
    a = np.arange(1, 9, dtype="float32")
    b = np.full(8, -1, dtype="float32")
    ts.build(predicated_fixed, target="c")(a, b)
    # Lanes 0, 1 load and store; lane 2 stores the 0 of a masked-off load; lane 3 is untouched.
    np.testing.assert_array_equal(b, [1, 2, 0, -1, 5, 6, 0, -1])


def test_predicated_gather_is_refused_with_the_line():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), I: T.Buffer((4,), "int32")):
        B[T.Ramp(0, 1, 4)] = A.vload([I[T.Ramp(0, 1, 4)]], predicate=T.Broadcast(T.bool(True), 4))

    with pytest.raises(TesseraError, match="predicated vector load of A other than a Ramp"):
        ts.build(f, target="c")
