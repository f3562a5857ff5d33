"""Host C code of Shuffle (concatenation, extraction and permutation of lanes) and of the
tir.prefetch hint; TVM's constructor spellings of Call and Shuffle (Python numbers and strings
among the arguments). Results against numpy, errors with their messages."""

import numpy as np
import pytest

from tessera import error, tir
from tessera.tir.build import build


def _ramp(base, lanes):
    return tir.Ramp(tir.const(base), tir.const(1), lanes)


def _run_shuffle(vectors_of, indices, n_in, n_out, dtype="int32"):
    A = tir.decl_buffer((n_in,), dtype, name="A")
    B = tir.decl_buffer((n_out,), dtype, name="B")
    shuffle = tir.Shuffle(vectors_of(A), indices)
    store = tir.BufferStore(B, shuffle, [_ramp(0, n_out)] if n_out > 1 else [tir.const(0)])
    lib = build(tir.PrimFunc([A, B], store), "c")
    a = (np.arange(n_in) * 7 + 1).astype(dtype)
    b = np.zeros(n_out, dtype)
    lib(a, b)
    return a, b, lib.get_source()


def test_shuffle_concatenates_scalars():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    z = tir.decl_buffer((1,), "int32x2", name="z")
    func = tir.PrimFunc([x, y, z], z.vstore(0, tir.Shuffle([x, y], [0, 1])))
    lib = build(func, "llvm")
    assert "tessera_shuffle_" in lib.get_source()


def test_shuffle_permutes_and_concatenates_vectors():
    a, b, _ = _run_shuffle(lambda A: [A.vload([_ramp(0, 2)]), A.vload([_ramp(2, 2)])], [3, 2, 1, 0], 4, 4)
    np.testing.assert_array_equal(b, a[[3, 2, 1, 0]])
    a, b, _ = _run_shuffle(lambda A: [A.vload([_ramp(0, 4)]), A[5]], [4, 0, 2, 4], 6, 4, "float32")
    np.testing.assert_array_equal(b, a[[5, 0, 2, 5]])


def test_shuffle_extracts_one_lane():
    a, b, _ = _run_shuffle(lambda A: [A.vload([_ramp(0, 4)])], [2], 4, 1)
    assert b[0] == a[2]


def test_shuffle_indices_are_checked_when_built():
    A = tir.decl_buffer((4,), "int32", name="A")
    with pytest.raises(error.TesseraError, match="Shuffle indices must be constants in range"):
        tir.Shuffle([A.vload([_ramp(0, 4)])], [0, 1, 2, 9])


def _prefetch_func(rw=0, locality=3, cache=1):
    A = tir.decl_buffer((16,), "float32", name="A")
    addr = tir.call_intrin("handle", "tir.address_of", A[4])
    body = tir.Evaluate(tir.Call("void", "tir.prefetch", [addr, rw, locality, cache]))
    return tir.PrimFunc([A], body)


def test_prefetch_becomes_builtin_prefetch():
    lib = build(_prefetch_func(1, 2), "c")
    assert "__builtin_prefetch(" in lib.get_source() and ", 1, 2)" in lib.get_source()
    lib(np.zeros(16, "float32"))  # a hint: runs and changes nothing
    # An instruction-cache prefetch has no C spelling: dropped.
    assert "__builtin_prefetch" not in build(_prefetch_func(cache=0), "c").get_source()


def test_prefetch_arguments_must_be_constants_in_range():
    with pytest.raises(error.TesseraError, match="tir.prefetch: the locality \\(argument 2\\) must be "
                                                 "an integer constant from 0 to 3"):
        build(_prefetch_func(locality=5), "c")
    with pytest.raises(error.TesseraError, match="the rw argument \\(argument 1\\)"):
        build(_prefetch_func(rw=2), "c")


def test_call_takes_python_numbers_and_strings():
    call = tir.Call("float32", "tir.call_extern", ["fabsf", -2.5])
    assert call.args[0].value == "fabsf" and call.args[1].dtype == "float32"
    assert tir.Call("", "tir.call_extern", ["f"]).dtype == "void"
    shuffle = tir.Shuffle([tir.Var("x", "int32"), tir.Var("y", "int32")], [1, 0])
    assert shuffle.dtype == "int32x2" and [int(i) for i in shuffle.indices] == [1, 0]
