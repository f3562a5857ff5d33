"""AKG's CPU operator cases: the conv2d NCHWc, depthwise conv2d NCHWc, layout_transform, pool2d
and global pool shapes of AKG's CPU operator tests (mindspore-ai/akg, tests/st/ops/cpu), each
built with tessera.topi and NO schedule (ts.build, target "c"), checked against numpy, and
timed beside two same-run references:

* numpy's best equivalent on the same layout: a convolution as im2col (one strided view per
  filter tap) and one BLAS GEMM against the filter packed once into a matrix (the packing is
  not timed: a filter is packed once per model), a depthwise convolution as one
  multiply-add per tap over strided views, a pool as a reshape and max/mean where the window
  tiles the input (else one maximum/add per tap), a layout transform as a reshape, one
  transpose copy into the output and a reshape;
* Apache TVM's default scheduling (no schedule: ``create_prim_func`` and ``compile`` for
  ``llvm -mcpu=native``) of the same operator from tvm.topi (the depthwise NCHWc sum written
  out in TVM's te: tvm.topi's generic depthwise_conv2d_NCHWc has no default compute), when
  TVM is importable here or in the Python named by $TESSERA_TVM_PYTHON (default
  /work/benchvenv/bin/python); else the TVM column gives the reason. TVM's results are
  checked against numpy too.

    PYTHONPATH=python .venv/bin/python bench/bench_akg_cpu.py            # table + bench/akg_cpu.png
    BENCH_TIMER=cpu PYTHONPATH=python .venv/bin/python bench/bench_akg_cpu.py   # shared machine
    ... bench/bench_akg_cpu.py --quick              # fewer repeats
    ... bench/bench_akg_cpu.py --only conv2d_NCHWc,pool2d_003   # kinds or case names
    ... bench/bench_akg_cpu.py --no-tvm --no-plot

Everything runs on one thread (OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=TVM_NUM_THREADS=1: an
unscheduled TVM build is single-threaded too). With BENCH_TIMER=cpu the figures are thread CPU
time, tessera and numpy timed in turn, the best of many repeats. Ratios > 1: tessera faster.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TVM_PYTHON = "/work/benchvenv/bin/python"

# ------------------------------------------------------------------------------------ cases
# (name, kind, parameters). Shapes, strides, paddings, dilations and layouts of AKG's CPU
# operator tests; float32 throughout, as there.


def _conv(i, data, kernel, stride, dilation):
    return (f"conv2d_NCHWc_{i:03d}", "conv2d_NCHWc",
            {"data": data, "kernel": kernel, "stride": stride, "padding": (0, 0, 0, 0),
             "dilation": dilation})


def _dw(i, data, kernel, stride):
    return (f"depthwise_NCHWc_{i:03d}", "depthwise_conv2d_NCHWc",
            {"data": data, "kernel": kernel, "stride": stride, "padding": (0, 0, 0, 0),
             "dilation": (1, 1)})


def _lt(i, shape, src, dst):
    return (f"layout_transform_{i:03d}", "layout_transform", {"shape": shape, "src": src, "dst": dst})


def _pool(i, shape, kernel, stride, pool_type, ceil_mode, layout):
    return (f"pool2d_{i:03d}", "pool2d",
            {"shape": shape, "kernel": kernel, "stride": stride, "padding": (0, 0, 0, 0),
             "pool_type": pool_type, "ceil_mode": ceil_mode, "layout": layout})


def _gpool(i, shape, pool_type, layout):
    return (f"global_pool_{i:03d}", "global_pool", {"shape": shape, "pool_type": pool_type,
                                                    "layout": layout})


CASES = [
    _conv(0, (1, 4, 28, 28, 8), (8, 4, 3, 3, 8, 8), (1, 1), (1, 1)),
    _conv(1, (1, 32, 56, 56, 8), (8, 32, 1, 1, 8, 8), (1, 1), (1, 1)),
    _conv(2, (1, 16, 28, 28, 8), (64, 16, 1, 1, 8, 8), (1, 1), (1, 1)),
    _conv(3, (1, 32, 14, 14, 8), (64, 32, 1, 1, 8, 8), (2, 2), (1, 1)),
    _conv(4, (1, 32, 7, 7, 8), (64, 32, 1, 1, 8, 8), (1, 1), (1, 1)),
    _conv(5, (1, 4, 28, 28, 8), (8, 4, 3, 3, 8, 8), (1, 1), (1, 1)),
    _conv(6, (1, 4, 28, 28, 8), (8, 4, 3, 3, 8, 8), (1, 1), (2, 2)),
    _conv(7, (1, 120, 1, 1, 8), (16, 120, 1, 1, 8, 8), (1, 1), (1, 1)),
    _conv(8, (1, 30, 7, 7, 8), (16, 30, 1, 1, 8, 8), (1, 1), (1, 1)),
    _conv(9, (1, 1, 7, 7, 1), (16, 1, 1, 1, 1, 8), (1, 1), (1, 1)),
    _conv(10, (1, 2, 7, 7, 8), (1, 2, 1, 1, 8, 1), (1, 1), (1, 1)),
    _dw(0, (1, 4, 114, 114, 8), (4, 1, 3, 3, 1, 8), (1, 1)),
    _dw(1, (1, 8, 114, 114, 8), (8, 1, 3, 3, 1, 8), (2, 2)),
    _dw(2, (1, 16, 58, 58, 8), (16, 1, 3, 3, 1, 8), (1, 1)),
    _dw(3, (1, 16, 58, 58, 8), (16, 1, 3, 3, 1, 8), (2, 2)),
    _dw(4, (1, 32, 30, 30, 8), (32, 1, 3, 3, 1, 8), (1, 1)),
    _dw(5, (1, 32, 30, 30, 8), (32, 1, 3, 3, 1, 8), (2, 2)),
    _dw(6, (1, 64, 16, 16, 8), (64, 1, 3, 3, 1, 8), (1, 1)),
    _dw(7, (1, 64, 16, 16, 8), (64, 1, 3, 3, 1, 8), (2, 2)),
    _dw(8, (1, 128, 9, 9, 8), (128, 1, 3, 3, 1, 8), (1, 1)),
    _lt(0, (4, 32, 56, 56, 8), "NCHW8c", "NCHW"),
    _lt(1, (8, 32, 56, 56, 8), "NCHW8c", "NCHW4c"),
    _lt(2, (16, 32, 56, 56, 8), "NCHW8c", "NHWC"),
    _lt(3, (128, 32, 7, 7), "OHWI", "OIHW"),
    _lt(4, (128, 7, 7, 32), "OHWI", "OIHW8i4o"),
    _lt(5, (16, 4, 7, 7, 8, 8), "OIHW8i8o", "OHWI"),
    _lt(6, (12, 32, 56, 56), "NCHW", "NHWC"),
    _pool(0, (1, 256, 32, 32), (2, 2), (2, 2), "avg", False, "NCHW"),
    _pool(1, (1, 256, 32, 32), (2, 2), (2, 2), "max", False, "NCHW"),
    _pool(2, (1, 256, 31, 31), (3, 3), (3, 3), "avg", False, "NCHW"),
    _pool(3, (1, 256, 31, 31), (3, 3), (3, 3), "max", False, "NCHW"),
    _pool(4, (1, 16, 31, 31, 8), (3, 3), (3, 3), "max", False, "NCHW8c"),
    _pool(5, (1, 16, 31, 31, 8), (3, 3), (3, 3), "avg", False, "NCHW8c"),
    _pool(6, (1, 16, 31, 31, 8), (3, 3), (3, 3), "max", True, "NCHW8c"),
    _gpool(7, (4, 1024, 7, 7), "max", "NCHW"),
    _gpool(8, (4, 1024, 7, 7), "avg", "NCHW"),
    _gpool(9, (4, 128, 7, 7, 8), "max", "NCHW8c"),
    _gpool(10, (4, 128, 7, 7, 8), "avg", "NCHW8c"),
]
KINDS = ("conv2d_NCHWc", "depthwise_conv2d_NCHWc", "layout_transform", "pool2d", "global_pool")


def describe(kind, p):
    if kind in ("conv2d_NCHWc", "depthwise_conv2d_NCHWc"):
        s, d = p["stride"], p["dilation"]
        k = p["kernel"]
        extra = (f" s{s[0]}" if s != (1, 1) else "") + (f" d{d[0]}" if d != (1, 1) else "")
        return f"{tuple(p['data'])} k{k[2]}x{k[3]} oc{k[0]}x{k[5]}{extra}"
    if kind == "layout_transform":
        return f"{tuple(p['shape'])} {p['src']}->{p['dst']}"
    if kind == "pool2d":
        k, s = p["kernel"], p["stride"]
        return (f"{p['pool_type']} {k[0]}x{k[1]}/{s[0]} {tuple(p['shape'])} {p['layout']}"
                + (" ceil" if p["ceil_mode"] else ""))
    return f"{p['pool_type']} {tuple(p['shape'])} {p['layout']}"


def out_geometry(p):
    (_, _, ih, iw, _), k = p["data"], p["kernel"]
    (sh, sw), (dh, dw) = p["stride"], p["dilation"]
    oh = (ih - (k[2] - 1) * dh - 1) // sh + 1
    ow = (iw - (k[3] - 1) * dw - 1) // sw + 1
    return oh, ow


# ------------------------------------------------------------------------ numpy equivalents
# Each returns (prepare, run): prepare(arrays) -> state built once (untimed: packed filters,
# output buffers), run(arrays, state) -> the result in the operator's layout.


def _tap(x, ky, kx, oh, ow, stride, dilation):
    """The strided view of an NCHWc tensor that filter tap (ky, kx) reads."""
    (sh, sw), (dh, dw) = stride, dilation
    y0, x0 = ky * dh, kx * dw
    return x[:, :, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw, :]


def numpy_conv2d_nchwc(p):
    import numpy as np

    n, icc, _, _, icb = p["data"]
    occ, _, kh, kw, _, ocb = p["kernel"]
    oh, ow = out_geometry(p)

    def prepare(arrays):
        w = arrays[1]  # [occ, icc, kh, kw, icb, ocb] -> [(kh, kw, icc, icb), (occ, ocb)]
        wmat = np.ascontiguousarray(w.transpose(2, 3, 1, 4, 0, 5).reshape(kh * kw * icc * icb,
                                                                          occ * ocb))
        cols = np.empty((n, oh, ow, kh, kw, icc, icb), "float32")
        out = np.empty((n, occ, oh, ow, ocb), "float32")
        return wmat, cols, out

    def run(arrays, state):
        x = arrays[0]
        wmat, cols, out = state
        for ky in range(kh):
            for kx in range(kw):
                v = _tap(x, ky, kx, oh, ow, p["stride"], p["dilation"])  # [n, icc, oh, ow, icb]
                np.copyto(cols[:, :, :, ky, kx], v.transpose(0, 2, 3, 1, 4))
        prod = cols.reshape(n * oh * ow, -1) @ wmat  # [(n, oh, ow), (occ, ocb)]
        np.copyto(out, prod.reshape(n, oh, ow, occ, ocb).transpose(0, 3, 1, 2, 4))
        return out

    return prepare, run


def numpy_depthwise_nchwc(p):
    import numpy as np

    n, icc, _, _, icb = p["data"]
    occ, _, kh, kw, _, ocb = p["kernel"]
    oh, ow = out_geometry(p)
    m = occ * ocb // (icc * icb)

    def prepare(arrays):
        w = arrays[1]  # [occ, 1, kh, kw, 1, ocb] -> per tap [1, occ, 1, ow, ocb] (repeated
        # along the output row, so that numpy's inner loop runs over whole rows, not 8 values)
        taps = [np.ascontiguousarray(np.broadcast_to(
            w[:, 0, ky, kx, 0, :].reshape(1, occ, 1, 1, ocb), (1, occ, 1, ow, ocb)))
            for ky in range(kh) for kx in range(kw)]
        out = np.empty((n, occ, oh, ow, ocb), "float32")
        tmp = np.empty_like(out)
        return taps, out, tmp

    def run(arrays, state):
        x = arrays[0]
        if m != 1 or icb != ocb:  # output channel c reads input channel c // m
            c = np.arange(occ * ocb) // m
            x = x[:, c // icb, :, :, c % icb].transpose(1, 0, 2, 3).reshape(
                n, occ * ocb, *x.shape[2:4]).reshape(n, occ, ocb, *x.shape[2:4]).transpose(
                0, 1, 3, 4, 2)
        taps, out, tmp = state
        k = 0
        for ky in range(kh):
            for kx in range(kw):
                v = _tap(x, ky, kx, oh, ow, p["stride"], p["dilation"])
                if k == 0:
                    np.multiply(v, taps[k], out=out)
                else:
                    np.multiply(v, taps[k], out=tmp)
                    np.add(out, tmp, out=out)
                k += 1
        return out

    return prepare, run


def _parse_layout(layout):
    """[(letter, block or None)]: "NCHW8c" -> N, C, H, W, (c, 8)."""
    out, num = [], ""
    for ch in layout:
        if ch.isdigit():
            num += ch
        else:
            out.append((ch, int(num) if num else None))
            num = ""
    return out


def layout_plan(shape, src, dst):
    """A reshape of the source into its finest sub-axes, a transpose and a reshape into the
    destination: (atoms shape, permutation, destination shape)."""
    s, d = _parse_layout(src), _parse_layout(dst)
    block_s = {c.upper(): b for c, b in s if b}
    block_d = {c.upper(): b for c, b in d if b}
    full = {}
    for (c, b), n in zip(s, shape):
        if b is None:
            full[c] = n * block_s.get(c, 1)
    # the finest split of each primal axis: outer, middle, inner (big block, small block)
    atoms = {}
    for c, f in full.items():
        b1, b2 = sorted((block_s.get(c, 1), block_d.get(c, 1)), reverse=True)
        if b1 % b2:
            raise ValueError(f"blocks {b1} and {b2} of {c} do not nest")
        atoms[c] = [(c, 0, f // b1), (c, 1, b1 // b2), (c, 2, b2)]

    def pieces(layout, blocks):
        order = []
        for c, b in layout:
            P = c.upper()
            outer, mid, inner = atoms[P]
            blk = blocks.get(P, 1)
            # the big block holds the middle and inner atoms, a smaller one the inner only
            sub = [] if blk == 1 else ([mid, inner] if blk == mid[2] * inner[2] else [inner])
            order += sub if b else [a for a in atoms[P] if a not in sub]
        return order

    keep = lambda order: [a for a in order if a[2] > 1]  # noqa: E731
    src_atoms, dst_atoms = keep(pieces(s, block_s)), keep(pieces(d, block_d))
    perm = [src_atoms.index(a) for a in dst_atoms]
    dst_shape = [b if b else full[c] // block_d.get(c, 1) for c, b in d]
    return [a[2] for a in src_atoms], perm, dst_shape


def numpy_layout_transform(p):
    import numpy as np

    atoms, perm, dst_shape = layout_plan(p["shape"], p["src"], p["dst"])

    def prepare(arrays):
        out = np.empty(dst_shape, "float32")
        return out, out.reshape([atoms[k] for k in perm])

    def run(arrays, state):
        out, view = state
        np.copyto(view, arrays[0].reshape(atoms).transpose(perm))
        return out

    return prepare, run


def _pool_axes(layout):
    return layout.index("H"), layout.index("W")


def numpy_pool2d(p):
    """The faster (timed once, untimed in the table) of a reshape + max/mean where the windows
    tile the input, and one maximum/add per window tap over strided views into a buffer."""
    import numpy as np

    shape, (kh, kw), (sh, sw) = p["shape"], p["kernel"], p["stride"]
    ah, aw = _pool_axes(p["layout"])
    ih, iw = shape[ah], shape[aw]
    extra = (sh - 1, sw - 1) if p["ceil_mode"] else (0, 0)
    oh = (ih + extra[0] - kh) // sh + 1
    ow = (iw + extra[1] - kw) // sw + 1
    if p["ceil_mode"]:  # a last window must start inside the input
        oh -= (oh - 1) * sh >= ih
        ow -= (ow - 1) * sw >= iw
    is_max = p["pool_type"] == "max"
    if p["ceil_mode"] and not is_max:
        raise NotImplementedError("average pooling with ceil_mode")
    if any(p["padding"]):
        raise NotImplementedError("padded pooling")
    out_shape = list(shape)
    out_shape[ah], out_shape[aw] = oh, ow

    def spot(y, x):
        idx = [slice(None)] * len(shape)
        idx[ah], idx[aw] = y, x
        return tuple(idx)

    def prepare(arrays):
        acc = np.empty(out_shape, "float32")
        variants = [taps] + ([tiled] if (kh, kw) == (sh, sw) and not p["ceil_mode"] else [])
        state = [acc, None]
        cost = []
        for v in variants:
            t0 = time.perf_counter()
            for _ in range(3):
                v(arrays, state)
            cost.append(time.perf_counter() - t0)
        state[1] = variants[cost.index(min(cost))]
        return state

    def tiled(arrays, state):
        x = arrays[0]
        v = x[spot(slice(0, oh * sh), slice(0, ow * sw))]
        rs = list(shape[:ah]) + [oh, kh] + list(shape[ah + 1:aw]) + [ow, kw] + list(shape[aw + 1:])
        v = v.reshape(rs)
        axes = (ah + 1, aw + 2)
        return v.max(axis=axes) if is_max else v.mean(axis=axes, dtype="float32")

    def taps(arrays, state):
        x, acc = arrays[0], state[0]
        for ky in range(kh):
            for kx in range(kw):
                # windows that reach past the input (ceil_mode) leave out the taps beyond it
                ny = min(oh, (ih - 1 - ky) // sh + 1)
                nx = min(ow, (iw - 1 - kx) // sw + 1)
                v = x[spot(slice(ky, ky + (ny - 1) * sh + 1, sh),
                           slice(kx, kx + (nx - 1) * sw + 1, sw))]
                a = acc[spot(slice(0, ny), slice(0, nx))]
                if ky == 0 and kx == 0:
                    np.copyto(a, v)
                elif is_max:
                    np.maximum(a, v, out=a)
                else:
                    np.add(a, v, out=a)
        if not is_max:
            np.multiply(acc, np.float32(1.0 / (kh * kw)), out=acc)
        return acc

    def run(arrays, state):
        return state[1](arrays, state)

    return prepare, run


def numpy_global_pool(p):
    ah, aw = _pool_axes(p["layout"])
    is_max = p["pool_type"] == "max"

    def prepare(arrays):
        return None

    def run(arrays, state):
        x = arrays[0]
        if is_max:
            return x.max(axis=(ah, aw), keepdims=True)
        return x.mean(axis=(ah, aw), keepdims=True, dtype="float32")

    return prepare, run


NUMPY = {"conv2d_NCHWc": numpy_conv2d_nchwc, "depthwise_conv2d_NCHWc": numpy_depthwise_nchwc,
         "layout_transform": numpy_layout_transform, "pool2d": numpy_pool2d,
         "global_pool": numpy_global_pool}


def inputs(kind, p):
    import numpy as np

    rng = np.random.default_rng(0)
    if kind in ("conv2d_NCHWc", "depthwise_conv2d_NCHWc"):
        return [rng.standard_normal(p["data"], dtype="float32"),
                rng.standard_normal(p["kernel"], dtype="float32")]
    return [rng.standard_normal(p["shape"], dtype="float32")]


def reference(kind, p, arrays):
    """A plain (slow, obviously right) numpy result to check the fast equivalents against."""
    import numpy as np

    if kind == "conv2d_NCHWc":
        x, w = (a.astype("float64") for a in arrays)
        oh, ow = out_geometry(p)
        out = 0.0
        for ky in range(w.shape[2]):
            for kx in range(w.shape[3]):
                v = _tap(x, ky, kx, oh, ow, p["stride"], p["dilation"])
                out = out + np.einsum("nchwi,ocib->nohwb", v, w[:, :, ky, kx])
        return out
    if kind == "depthwise_conv2d_NCHWc":
        x, w = (a.astype("float64") for a in arrays)
        n, icc, ih, iw, icb = x.shape
        occ, _, kh, kw, _, ocb = w.shape
        m = occ * ocb // (icc * icb)
        flat = x.transpose(0, 1, 4, 2, 3).reshape(n, icc * icb, ih, iw)
        flat = flat[:, np.arange(occ * ocb) // m]
        xx = flat.reshape(n, occ, ocb, ih, iw).transpose(0, 1, 3, 4, 2)
        oh, ow = out_geometry(p)
        out = 0.0
        for ky in range(kh):
            for kx in range(kw):
                out = out + _tap(xx, ky, kx, oh, ow, p["stride"], p["dilation"]) * \
                    w[:, 0, ky, kx, 0, :][None, :, None, None, :]
        return out
    prepare, run = NUMPY[kind](p)
    return run(arrays, prepare(arrays)).copy()


# ----------------------------------------------------------------------------------- tessera

def tessera_func(kind, p):
    from tessera import te, topi

    if kind in ("conv2d_NCHWc", "depthwise_conv2d_NCHWc"):
        X = te.placeholder(p["data"], name="data", dtype="float32")
        W = te.placeholder(p["kernel"], name="kernel", dtype="float32")
        blk = f"NCHW{p['data'][4]}c"
        oblk = f"NCHW{p['kernel'][5]}c"
        op = topi.nn.conv2d_NCHWc if kind == "conv2d_NCHWc" else topi.nn.depthwise_conv2d_NCHWc
        Y = op(X, W, p["stride"], p["padding"], p["dilation"], blk, oblk, "float32")
        return te.create_prim_func([X, W, Y])
    X = te.placeholder(p["shape"], name="data", dtype="float32")
    if kind == "layout_transform":
        Y = topi.layout_transform(X, p["src"], p["dst"])
    elif kind == "pool2d":
        Y = topi.nn.pool2d(X, p["kernel"], p["stride"], (1, 1), p["padding"], p["pool_type"],
                           p["ceil_mode"], p["layout"], True)
    else:
        Y = topi.nn.global_pool(X, p["pool_type"], p["layout"])
    return te.create_prim_func([X, Y])


def timer_is_cpu():
    return os.environ.get("BENCH_TIMER", "wall") == "cpu"


def time_pair(fa, fb, rounds):
    """The best time of each of two calls, timed in turn ``rounds`` times (thread CPU time with
    BENCH_TIMER=cpu, else wall-clock time)."""
    clock = time.thread_time if timer_is_cpu() else time.perf_counter
    fa(), fb()
    best = [float("inf"), float("inf")]
    for r in range(rounds):
        order = ((0, fa), (1, fb)) if r % 2 == 0 else ((1, fb), (0, fa))
        for k, fn in order:
            t0 = clock()
            fn()
            best[k] = min(best[k], clock() - t0)
    return best


def time_one(fn, rounds):
    clock = time.thread_time if timer_is_cpu() else time.perf_counter
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def run_tessera(name, kind, p, rounds):
    import numpy as np
    import tessera as ts

    arrays = inputs(kind, p)
    want = reference(kind, p, arrays)
    lib = ts.build(tessera_func(kind, p), target="c")
    out = np.empty(want.shape, "float32")
    lib(*arrays, out)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4,
                               err_msg=f"{name}: tessera differs from numpy")
    prepare, run = NUMPY[kind](p)
    state = prepare(arrays)
    np.testing.assert_allclose(run(arrays, state), want, rtol=1e-4, atol=1e-4,
                               err_msg=f"{name}: the numpy equivalent differs")
    return time_pair(lambda: lib(*arrays, out), lambda: run(arrays, state), rounds)


# --------------------------------------------------------------------------------------- TVM

def tvm_func(tvm, kind, p):
    from tvm import te, topi

    if kind in ("conv2d_NCHWc", "depthwise_conv2d_NCHWc"):
        X = te.placeholder(p["data"], name="data", dtype="float32")
        W = te.placeholder(p["kernel"], name="kernel", dtype="float32")
        blk = f"NCHW{p['data'][4]}c"
        oblk = f"NCHW{p['kernel'][5]}c"
        if kind == "conv2d_NCHWc":
            Y = topi.nn.conv2d_NCHWc(X, W, p["stride"], p["padding"], p["dilation"], blk, oblk,
                                     "float32")
        else:  # tvm.topi's generic depthwise NCHWc has no default compute: the same sum here
            Y = _tvm_depthwise(te, X, W, p)
        args = [X, W, Y]
    else:
        X = te.placeholder(p["shape"], name="data", dtype="float32")
        if kind == "layout_transform":
            Y = topi.layout_transform(X, p["src"], p["dst"])
        elif kind == "pool2d":
            Y = topi.nn.pool2d(X, p["kernel"], p["stride"], (1, 1), p["padding"], p["pool_type"],
                               p["ceil_mode"], p["layout"], True)
        else:
            Y = topi.nn.global_pool(X, p["pool_type"], p["layout"])
        args = [X, Y]
    return te.create_prim_func(args)


def _tvm_depthwise(te, X, W, p):
    _, icc, _, _, icb = p["data"]
    occ, _, kh, kw, _, ocb = p["kernel"]
    (sh, sw), (dh, dw) = p["stride"], p["dilation"]
    oh, ow = out_geometry(p)
    m = occ * ocb // (icc * icb)
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def f(b, oc, y, x, ob):
        c = (oc * ocb + ob) // m
        return te.sum(X[b, c // icb, y * sh + ry * dh, x * sw + rx * dw, c % icb]
                      * W[oc, 0, ry, rx, 0, ob], axis=[ry, rx])

    return te.compute((p["data"][0], occ, oh, ow, ocb), f, name="depthwise")


def tvm_child(names, rounds):
    """Run in a Python that has TVM: print one JSON line {case: seconds or a reason}."""
    import numpy as np

    res = {}
    try:
        import tvm
    except Exception as e:  # noqa: BLE001
        print("TVM " + json.dumps({n: f"apache-tvm not importable ({type(e).__name__})"
                                   for n in names}))
        return
    build = getattr(tvm, "compile", None) or tvm.build
    make = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    try:
        target = tvm.target.Target("llvm -mcpu=native")
    except ValueError:  # newer TVM takes targets as dicts
        target = tvm.target.Target({"kind": "llvm", "mcpu": "native"})
    for name, kind, p in CASES:
        if name not in names:
            continue
        try:
            with target:  # tvm.topi's x86 computes ask for the target
                func = tvm_func(tvm, kind, p)
            lib = build(tvm.IRModule({"main": func}), target=target)
            arrays = inputs(kind, p)
            want = reference(kind, p, arrays)
            targs = [make(a) for a in arrays] + [make(np.empty(want.shape, "float32"))]
            fn = lib["main"]
            fn(*targs)
            np.testing.assert_allclose(targs[-1].numpy(), want, rtol=1e-4, atol=1e-4)
            res[name] = time_one(lambda: fn(*targs), rounds)
        except Exception as e:  # noqa: BLE001
            res[name] = f"TVM failed ({type(e).__name__}: {str(e).splitlines()[0][:60]})"
    print("TVM " + json.dumps(res))


def tvm_times(names, rounds):
    """{case: seconds or a reason} from TVM here or in $TESSERA_TVM_PYTHON."""
    try:
        import tvm  # noqa: F401

        python = sys.executable
    except Exception:  # noqa: BLE001
        python = os.environ.get("TESSERA_TVM_PYTHON", TVM_PYTHON)
        if not os.path.exists(python):
            why = f"apache-tvm not importable and no {python} (set TESSERA_TVM_PYTHON)"
            return {n: why for n in names}
    env = dict(os.environ, TVM_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = [python, os.path.abspath(__file__), "--tvm-child", ",".join(names),
           "--rounds", str(rounds)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("TVM "):
            return json.loads(line[4:])
    why = f"TVM child failed: {(out.stderr.strip().splitlines() or ['?'])[-1][:70]}"
    return {n: why for n in names}


# ------------------------------------------------------------------------------------ driver

def select(only):
    want = {s.strip() for s in only.split(",") if s.strip()}
    picked = [c for c in CASES if not want or c[0] in want or c[1] in want]
    unknown = want - {c[0] for c in CASES} - set(KINDS)
    if unknown:
        raise SystemExit(f"unknown case or kind {', '.join(sorted(unknown))}; kinds: "
                         f"{', '.join(KINDS)}; cases: {', '.join(c[0] for c in CASES)}")
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated case names or kinds")
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--no-tvm", action="store_true", help="leave the TVM column out")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--plot", default=os.path.join(HERE, "akg_cpu.png"))
    ap.add_argument("--json", default="", help="also write the rows to this file")
    ap.add_argument("--rounds", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--tvm-child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    rounds = args.rounds or (5 if args.quick else (30 if timer_is_cpu() else 15))
    if args.tvm_child:
        tvm_child(set(args.tvm_child.split(",")), rounds)
        return
    cases = select(args.only)
    load0 = os.getloadavg()[0]
    tvm = ({n: "left out (--no-tvm)" for n, _, _ in cases} if args.no_tvm
           else tvm_times([n for n, _, _ in cases], rounds))
    rows = []
    head = (f"{'case (no schedule)':22} {'shape':42} {'tessera ms':>10} {'numpy ms':>9} "
            f"{'np/ts':>6} {'TVM ms':>8} {'tvm/ts':>6}")
    print(head)
    print("-" * len(head))
    failed = []
    for name, kind, p in cases:
        try:
            ours, ref = run_tessera(name, kind, p, rounds)
        except Exception as e:  # noqa: BLE001
            failed.append(name)
            print(f"{name:22} failed: {type(e).__name__}: {str(e).splitlines()[0][:90]}", flush=True)
            continue
        tv = tvm.get(name)
        tv_s = tv if isinstance(tv, float) else None
        rows.append({"name": name, "kind": kind, "shape": describe(kind, p), "tessera_s": ours,
                     "numpy_s": ref, "tvm_s": tv_s, "tvm_why": None if tv_s else tv})
        tvm_ms = f"{tv_s * 1e3:8.3f}" if tv_s else f"{'-':>8}"
        tvm_ratio = f"{tv_s / ours:6.2f}" if tv_s else f"{'-':>6}"
        print(f"{name:22} {describe(kind, p)[:42]:42} {ours * 1e3:10.3f} {ref * 1e3:9.3f} "
              f"{ref / ours:6.2f} {tvm_ms} {tvm_ratio}", flush=True)
    print("np/ts, tvm/ts > 1: tessera (no schedule) faster than numpy's equivalent / TVM's default")
    slower = [r["name"] for r in rows if r["numpy_s"] / r["tessera_s"] < 1.0]
    print(f"numpy faster on: {', '.join(slower) if slower else 'none'}")
    whys = sorted({r["tvm_why"] for r in rows if r["tvm_why"]})
    for w in whys:
        print(f"TVM column: {w}")
    how = ("thread CPU time, best of %d, tessera and numpy in turn" % rounds if timer_is_cpu()
           else "wall-clock time, best of %d" % rounds)
    print(f"load average before / after: {load0:.2f} / {os.getloadavg()[0]:.2f}; one thread; {how}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not args.no_plot and rows:
        from bench_plot import save_ratio_bars

        bars = []
        for r in rows:
            label = f"{r['name']} {r['shape']}"
            bars.append({"name": label, "threads": 1, "ref": "numpy",
                         "ratio": r["numpy_s"] / r["tessera_s"]})
            if r["tvm_s"]:
                bars.append({"name": label, "threads": 1, "ref": "TVM default",
                             "ratio": r["tvm_s"] / r["tessera_s"]})
        save_ratio_bars(bars, args.plot, "AKG CPU cases, tessera.topi with no schedule",
                        "reference time / tessera time (> 1: tessera faster)", log=True)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS"):
        os.environ[_var] = "1"  # before numpy, tessera and TVM start thread pools
    sys.path.insert(0, HERE)
    main()
