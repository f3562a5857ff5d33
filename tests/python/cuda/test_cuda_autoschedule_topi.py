"""Operators of the operator library built for "cuda" with no schedule (the automatic schedule
binds their threads) against numpy, on a GPU or the CPU emulator (TESSERA_CUDA_EMULATOR=1).
The whole library runs for "cuda" with
``TESSERA_CUDA_EMULATOR=1 TESSERA_TOPI_TARGET=cuda pytest tests/python/topi`` (`make test` runs it);
here are the operators that needed a rule of their own."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

from cuda_support import EMULATED, GPU_OK, requires_cuda_build

requires_runtime = pytest.mark.skipif(
    not GPU_OK and not EMULATED, reason="needs a CUDA GPU or the emulator (TESSERA_CUDA_EMULATOR=1)")


def run_cuda(inputs, outputs, arrays):
    lib = ts.build(te.create_prim_func(list(inputs) + list(outputs)), target="cuda")
    dev = ts.cuda(0)
    args = [ts.nd.array(a, device=dev) for a in arrays]
    outs = [ts.nd.empty(tuple(int(s) for s in o.shape), o.dtype, dev) for o in outputs]
    lib(*args, *outs)
    return [o.numpy() for o in outs]


@requires_cuda_build
def test_extern_is_scheduled_and_bound():
    # 300 lines: two blocks of 256 threads, the second guarded; the producer inlined.
    a = te.placeholder((300, 3), "float32", name="A")
    f = te.create_prim_func([a, topi.cumsum(topi.exp(a), axis=1)])
    assert ts.autoschedule.carries_no_schedule(f)[0]
    text = ts.lower(f, target="cuda", stage="split", auto_schedule=True).script()
    assert '"tessera.thread_extents": ["blockIdx.x", 2, "threadIdx.x", 256]' in text
    assert "if blockIdx_x * 256 + threadIdx_x < 300:" in text
    assert "acc_1[0] + T.exp(A_1[" in text


def conv1d_reference(x, w, stride, pad, dilation):
    xp = np.pad(x, ((0, 0), (0, 0), pad))
    k = w.shape[2]
    width = (xp.shape[2] - (k - 1) * dilation - 1) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], width), "float64")
    for t in range(k):
        cols = xp[:, :, t * dilation: t * dilation + stride * (width - 1) + 1: stride]
        out += np.einsum("ncw,oc->now", cols, w[:, :, t])
    return out


@requires_runtime
def test_operators_that_needed_rules_match_numpy():
    # One function, one compile (the emulator compiles slowly): the scans, te.externs whose
    # lines run in a parallel loop, a thread per line (5 lines: fewer threads than a block's;
    # 1 line of 185; 37 lines), beside a block that the rules schedule; a padded convolution
    # (the padding computed per output row in shared memory, ordered by a barrier: in global
    # memory the threads raced); logical reductions and adaptive pooling (updates a cross-thread
    # reduction does not know: a thread per result); a 0-d result; reinterpret and fast_exp
    # (CUDA's bit cast).
    rng = np.random.default_rng(2)
    s = rng.integers(-9, 9, size=(5, 37)).astype("float32")
    x, w = rng.uniform(-2, 2, (2, 3, 13)).astype("float32"), rng.uniform(-2, 2, (4, 3, 3)).astype("float32")
    flags = rng.random((4, 6)) < 0.4
    pool = rng.uniform(-2, 2, (1, 2, 7, 5)).astype("float32")
    ints = (np.arange(24, dtype="int32") * 1000003).reshape(4, 6)
    X, W = te.placeholder(x.shape, "float32", name="X"), te.placeholder(w.shape, "float32", name="W")
    F = te.placeholder(flags.shape, "bool", name="F")
    P = te.placeholder(pool.shape, "float32", name="P")
    N = te.placeholder(ints.shape, "int32", name="N")
    S = te.placeholder(s.shape, "float32", name="S")
    outs = [topi.cumsum(S, axis=1), topi.cumsum(S, axis=None), topi.cumsum(S, axis=0, exclusive=True),
            topi.cumprod(topi.multiply(S, 0.5), axis=0),
            topi.nn.conv1d_ncw(X, W, 2, "SAME", 2), topi.any(F, axis=1), topi.all(F, axis=0),
            topi.nn.adaptive_pool(P, (2, 3), "max"), topi.take(P, 9, mode="wrap"),
            topi.reinterpret(N, "float32"), topi.fast_exp(P)]
    rows, flat, cols, prod, conv, any_, all_, pooled, taken, bits, exp = run_cuda(
        [S, X, W, F, P, N], outs, [s, x, w, flags, pool, ints])
    np.testing.assert_array_equal(rows, np.cumsum(s, axis=1))
    np.testing.assert_array_equal(flat, np.cumsum(s))
    np.testing.assert_array_equal(cols, np.cumsum(s, axis=0) - s)
    np.testing.assert_allclose(prod, np.cumprod(s * 0.5, axis=0), rtol=1e-6)
    np.testing.assert_allclose(conv, conv1d_reference(x, w, 2, (2, 2), 2), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(any_, flags.any(axis=1))
    np.testing.assert_array_equal(all_, flags.all(axis=0))
    expect = np.array([[[pool[0, c, (i * 7) // 2: -(-(i + 1) * 7 // 2), (j * 5) // 3: -(-(j + 1) * 5 // 3)].max()
                         for j in range(3)] for i in range(2)] for c in range(2)])[None]
    np.testing.assert_array_equal(pooled, expect)
    np.testing.assert_array_equal(taken, pool.reshape(-1)[9])
    np.testing.assert_array_equal(bits, ints.view("float32"))
    np.testing.assert_allclose(exp, np.exp(pool), rtol=1e-5)


@requires_cuda_build
def test_row_producers_in_shared_memory_and_fallbacks():
    x = te.placeholder((2, 3, 13), "float32", name="X")
    w = te.placeholder((4, 3, 3), "float32", name="W")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, w, topi.nn.conv1d_ncw(x, w, 2, "SAME", 2)]),
                                      target="cuda").trace.as_python())
    assert 'storage_scope="shared"' in trace and 'thread_axis="threadIdx.x"' in trace
    # A padding of a row larger than a quarter of the shared memory stays a kernel of its own.
    big = te.placeholder((1, 4096, 16), "float32", name="B")
    wb = te.placeholder((2, 4096, 3), "float32", name="WB")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([big, wb, topi.nn.conv1d_ncw(big, wb, 1, 1, 1)]),
                                      target="cuda").trace.as_python())
    assert "compute_at" not in trace and "set_scope" not in trace
    # any: no cross-thread reduction (its `or` update is not one LowerCrossThreadReduction knows).
    f = te.placeholder((8, 64), "bool", name="F")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([f, topi.any(f, axis=1)]), target="cuda")
                      .trace.as_python())
    assert trace.count("sch.bind") == 2
    scalar = te.create_prim_func([f, topi.take(f, 3)])
    assert ts.autoschedule.carries_no_schedule(scalar) == (True, "")


@requires_cuda_build
def test_extern_launching_its_own_threads_is_left_alone():
    from tessera.tir import ir_builder

    a = te.placeholder((64,), "float32", name="A")

    def body(ins, outs):
        ib = ir_builder.create()
        src, out = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        tx = te.thread_axis("threadIdx.x")
        ib.scope_attr(tx, "thread_extent", 64)
        with ib.for_range(0, 2, kind="parallel") as j:  # inside a thread: serial
            out[tx] = src[tx] * 2.0 + j
        return ib.get()

    b = te.extern([(64,)], [a], body, dtype=["float32"], name="ext")
    text = ts.lower(te.create_prim_func([a, b]), target="cuda", stage="split", auto_schedule=True).script()
    assert '"tessera.thread_extents": ["threadIdx.x", 64]' in text and "blockIdx" not in text
    assert "for i in range(2):" in text and "T.parallel" not in text


@requires_cuda_build
def test_adaptive_pool_with_a_fixed_axis_beside_a_window_is_bound():
    # H's windows are all 2 rows (a fixed reduce axis), W's 2 or 3 columns: the outer block
    # stores the identity itself, lists no read of its output, and its loops bind to threads.
    x = te.placeholder((1, 2, 6, 5), "float32", name="x0")
    f = te.create_prim_func([x, topi.nn.adaptive_pool(x, (3, 2), "max")])
    block = f.script().split('T.block("adaptive_pool_max_l1")')[1].split("T.writes")[0]
    assert "T.reads(x0[" in block and "adaptive_pool_max[" not in block
    text = ts.lower(f, target="cuda", stage="split", auto_schedule=True).script()
    assert '"tessera.thread_extents": ["blockIdx.x", 1, "threadIdx.x", 12]' in text
