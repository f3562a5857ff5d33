"""tir.AnnotateDeviceRegions: device regions of a host+device function are marked with the
device target."""

import pytest

from tessera import tir
from tessera.error import TesseraError
from tessera.ir import IRModule, assert_structural_equal
from tessera.script import tir as T

annotate = tir.transform.AnnotateDeviceRegions


def run(func):
    return annotate()(IRModule({"main": func}))["main"]


def test_launches_and_device_scopes_are_marked():
    @T.prim_func
    def before(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
        T.func_attr({"target": T.target("cuda", host="c")})
        with T.attr(0, "device_scope", 0):
            B[0] = T.float32(2)
        bx = T.launch_thread("blockIdx.x", 2)
        tx = T.launch_thread("threadIdx.x", 16)
        A[bx * 16 + tx] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
        T.func_attr({"target": T.target("cuda", host="c")})
        with T.attr(T.target("cuda"), "target", 0):
            with T.attr(0, "device_scope", 0):
                B[0] = T.float32(2)
        # A marked region is not searched further: the inner launch is inside the outer one.
        with T.attr(T.target("cuda"), "target", 0):
            bx = T.launch_thread("blockIdx.x", 2)
            tx = T.launch_thread("threadIdx.x", 16)
            A[bx * 16 + tx] = T.float32(1)

    after = run(before)
    assert_structural_equal(after.with_attr("global_symbol", "f"), expected.with_attr("global_symbol", "f"))
    # Marked regions are not marked again.
    assert_structural_equal(run(after), after)


def test_target_without_host_is_left_alone_and_no_target_is_an_error():
    @T.prim_func
    def device(A: T.Buffer((16,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        tx = T.launch_thread("threadIdx.x", 16)
        A[tx] = T.float32(1)

    mod = IRModule({"main": device})
    assert annotate()(mod).same_as(mod)

    @T.prim_func
    def bare(A: T.Buffer((16,), "float32")):
        A[0] = T.float32(1)

    with pytest.raises(TesseraError, match="needs the function's \"target\" attribute"):
        run(bare)
