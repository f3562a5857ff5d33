"""Small te computes for the automatic-schedule tests and benchmarks (no schedules)."""

from tessera import te
from tessera.tir import expr_ops


def _exp(x):
    return expr_ops._call(x.dtype, "tir.exp", [x])


def _sqrt(x):
    return expr_ops._call(x.dtype, "tir.sqrt", [x])


def _relu(x):
    return expr_ops.maximum(x, expr_ops.const(0, x.dtype))


def matmul(n, m, k, epilogue=False, dtype="float32"):
    A = te.placeholder((n, k), dtype, name="A")
    B = te.placeholder((k, m), dtype, name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    if not epilogue:
        return te.create_prim_func([A, B, C])
    bias = te.placeholder((m,), dtype, name="bias")
    D = te.compute((n, m), lambda i, j: C[i, j] + bias[j], name="bias_add")
    E = te.compute((n, m), lambda i, j: _relu(D[i, j]), name="relu")
    return te.create_prim_func([A, B, bias, E])


def batch_matmul(b, h, n, k, m):
    A = te.placeholder((b, h, n, k), name="A")
    B = te.placeholder((b, h, k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((b, h, n, m), lambda p, q, i, j: te.sum(A[p, q, i, r] * B[p, q, r, j], axis=r),
                   name="C")
    return te.create_prim_func([A, B, C])


def conv2d_nchw(n, c, h, w, f, kh=3, kw=3, epilogue=False):
    """Valid (unpadded) stride-1 convolution; with ``epilogue``, + bias[f] and relu."""
    X = te.placeholder((n, c, h, w), name="X")
    W = te.placeholder((f, c, kh, kw), name="W")
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    oh, ow = h - kh + 1, w - kw + 1
    Y = te.compute((n, f, oh, ow),
                   lambda b, o, y, x: te.sum(X[b, rc, y + ry, x + rx] * W[o, rc, ry, rx],
                                             axis=[rc, ry, rx]), name="Y")
    if not epilogue:
        return te.create_prim_func([X, W, Y])
    bias = te.placeholder((f,), name="bias")
    Z = te.compute((n, f, oh, ow), lambda b, o, y, x: _relu(Y[b, o, y, x] + bias[o]),
                   name="Z")
    return te.create_prim_func([X, W, bias, Z])


def softmax(rows, cols):
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    mx = te.compute((rows,), lambda i: te.max(A[i, k], axis=k), name="max")
    E = te.compute((rows, cols), lambda i, j: _exp(A[i, j] - mx[i]), name="exp")
    k2 = te.reduce_axis((0, cols), name="k2")
    s = te.compute((rows,), lambda i: te.sum(E[i, k2], axis=k2), name="sum")
    S = te.compute((rows, cols), lambda i, j: E[i, j] / s[i], name="out")
    return te.create_prim_func([A, S])


def layer_norm(rows, cols, eps=1e-5):
    A = te.placeholder((rows, cols), name="A")
    gamma = te.placeholder((cols,), name="gamma")
    beta = te.placeholder((cols,), name="beta")
    k = te.reduce_axis((0, cols), name="k")
    s = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="sum")
    mean = te.compute((rows,), lambda i: s[i] / float(cols), name="mean")
    k2 = te.reduce_axis((0, cols), name="k2")
    sq = te.compute((rows,), lambda i: te.sum((A[i, k2] - mean[i]) * (A[i, k2] - mean[i]), axis=k2),
                    name="sqsum")
    inv = te.compute((rows,), lambda i: 1.0 / _sqrt(sq[i] / float(cols) + eps), name="inv")
    out = te.compute((rows, cols), lambda i, j: (A[i, j] - mean[i]) * inv[i] * gamma[j] + beta[j],
                     name="out")
    return te.create_prim_func([A, gamma, beta, out])


def elementwise_chain(shape):
    """Four elementwise operators: relu(a * b + c) * 0.5."""
    A = te.placeholder(shape, name="A")
    B = te.placeholder(shape, name="B")
    C = te.placeholder(shape, name="C")
    T1 = te.compute(shape, lambda *i: A[i] * B[i], name="mul")
    T2 = te.compute(shape, lambda *i: T1[i] + C[i], name="add")
    T3 = te.compute(shape, lambda *i: _relu(T2[i]), name="relu")
    D = te.compute(shape, lambda *i: T3[i] * 0.5, name="scale")
    return te.create_prim_func([A, B, C, D])


def column_sum(rows, cols):
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, rows), name="k")
    S = te.compute((cols,), lambda j: te.sum(A[k, j], axis=k), name="S")
    return te.create_prim_func([A, S])


def total_sum(n):
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n), name="k")
    S = te.compute((1,), lambda _: te.sum(A[k], axis=k), name="S")
    return te.create_prim_func([A, S])


def conv2d_nchwc(n, ic_o, h, w, ic_i, oc_o, oc_i):
    """3x3 valid convolution on NCHW[ic_i]c data with an OIHW[ic_i]i[oc_i]o kernel."""
    X = te.placeholder((n, ic_o, h, w, ic_i), name="X")
    W = te.placeholder((oc_o, ic_o, 3, 3, ic_i, oc_i), name="W")
    ico = te.reduce_axis((0, ic_o), name="ico")
    ky = te.reduce_axis((0, 3), name="ky")
    kx = te.reduce_axis((0, 3), name="kx")
    ici = te.reduce_axis((0, ic_i), name="ici")
    Y = te.compute((n, oc_o, h - 2, w - 2, oc_i),
                   lambda b, o, y, x, c: te.sum(X[b, ico, y + ky, x + kx, ici] * W[o, ico, ky, kx, ici, c],
                                                axis=[ico, ky, kx, ici]), name="Y")
    return te.create_prim_func([X, W, Y])
