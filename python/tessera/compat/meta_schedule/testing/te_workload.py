"""TE workloads as TVM's ``meta_schedule.testing.te_workload`` defines them (same tensors, names
and block names), for running TVM's schedule tests unchanged; each returns the input and output
tensors for ``te.create_prim_func``.

>>> func = te.create_prim_func(matmul(128, 128, 128))
"""

from .... import te, topi


def matmul(n, m, k, in_dtype="float32", out_dtype="float32"):
    """``C[i, j] = sum_k A[i, k] * B[k, j]`` with ``A: (n, k)``, ``B: (k, m)``."""
    a = te.placeholder((n, k), name="A", dtype=in_dtype)
    b = te.placeholder((k, m), name="B", dtype=in_dtype)
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r].astype(out_dtype) * b[r, j].astype(out_dtype), axis=[r]),
                   name="C")
    return (a, b, c)


def matmul_relu(n, m, k, in_dtype="float32", out_dtype="float32"):
    """:func:`matmul` followed by ReLU (``topi.nn.relu``)."""
    a, b, c = matmul(n, m, k, in_dtype, out_dtype)
    return (a, b, topi.nn.relu(c))


def batch_matmul_nkkm(B, N, M, K, in_dtype="float32", out_dtype="float32"):  # noqa: N803 - TVM's names
    """``Z[b, i, j] = sum_k X[b, i, k] * Y[b, k, j]``."""
    x = te.placeholder((B, N, K), name="X", dtype=in_dtype)
    y = te.placeholder((B, K, M), name="Y", dtype=in_dtype)
    r = te.reduce_axis((0, K), name="k")
    z = te.compute((B, N, M),
                   lambda b, i, j: te.sum(x[b][i][r].astype(out_dtype) * y[b][r][j].astype(out_dtype), axis=[r]),
                   name="Z")
    return (x, y, z)


def conv2d_nhwc(N, H, W, CI, CO, kernel_size, stride=1, padding=0, dilation=1, groups=1,  # noqa: N803
                in_dtype="float32", out_dtype="float32"):
    """A grouped 2-D convolution in NHWC layout with an HWIO weight, the input padded by
    ``topi.nn.pad``."""
    inputs = te.placeholder((N, H, W, CI), name="inputs", dtype=in_dtype)
    weight = te.placeholder((kernel_size, kernel_size, CI // groups, CO), name="weight", dtype=in_dtype)
    per_group = CI // groups
    out_per_group = CO // groups
    out_h = (H + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    out_w = (W + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    rh = te.reduce_axis((0, kernel_size), name="rh")
    rw = te.reduce_axis((0, kernel_size), name="rw")
    rc = te.reduce_axis((0, per_group), name="rc")
    padded = topi.nn.pad(inputs, [0, padding, padding, 0])
    output = te.compute(
        (N, out_h, out_w, CO),
        lambda n, h, w, co: te.sum(
            padded[n, h * stride + rh * dilation, w * stride + rw * dilation,
                   co // out_per_group * per_group + rc].astype(out_dtype)
            * weight[rh, rw, rc, co].astype(out_dtype),
            axis=[rh, rw, rc]),
        name="conv2d_nhwc")
    return (inputs, weight, output)


def norm_bmn(B, M, N):  # noqa: N803 - TVM's names
    """The L2 norm of each of ``B`` matrices: ``D[b] = sqrt(sum_ij A[b, i, j]^2)``."""
    a = te.placeholder((B, M, N), name="A")
    i = te.reduce_axis((0, M), name="i")
    j = te.reduce_axis((0, N), name="j")
    squares = te.compute((B,), lambda b: te.sum(a[b, i, j] * a[b, i, j], axis=[i, j]), name="C")
    norm = te.compute((B,), lambda b: te.sqrt(squares[b]), name="D")
    return (a, norm)


def softmax_mn(m, n):
    """``topi.nn.softmax`` of an ``(m, n)`` matrix along its rows."""
    a = te.placeholder((m, n), name="A")
    return (a, topi.nn.softmax(a, axis=1))


def transpose_batch_matmul(batch, seq_len, n_head, n_dim, in_dtype="float32", out_dtype="float32"):
    """Attention scores: ``C[b, h, i, j] = sum_k query[b, i, h, k] * value[b, j, h, k]``, through
    the transposed copies ``query_T`` (b, h, l, d) and ``value_T`` (b, h, d, l)."""
    query = te.placeholder((batch, seq_len, n_head, n_dim), name="query", dtype=in_dtype)
    value = te.placeholder((batch, seq_len, n_head, n_dim), name="value", dtype=in_dtype)
    query_t = te.compute((batch, n_head, seq_len, n_dim), lambda b, h, l, d: query[b, l, h, d],
                         name="query_T")
    value_t = te.compute((batch, n_head, n_dim, seq_len), lambda b, h, d, l: value[b, l, h, d],
                         name="value_T")
    k = te.reduce_axis((0, n_dim), name="k")
    out = te.compute(
        (batch, n_head, seq_len, seq_len),
        lambda b, h, i, j: te.sum(
            query_t[b, h, i, k].astype(out_dtype) * value_t[b, h, k, j].astype(out_dtype), axis=[k]),
        name="C")
    return (query, value, out)


# TVM's workload names with their shapes (ResNet-18's first convolution; square GEMMs), for the
# workloads defined here; TVM's other names (C1D, C3D, CAP, DEP, T2D, CBR) are not provided yet,
# nor SFM: softmax_mn is defined, but topi.nn.softmax here computes its stages differently from
# TVM's (5 operations per element to TVM's 4), so it would not be TVM's workload.
CONFIGS = {
    "C2D": (conv2d_nhwc, [(1, 224, 224, 3, 64, 7, 2, 3), (1, 56, 56, 64, 64, 1, 1, 0)]),
    "GMM": (batch_matmul_nkkm, [(1, 128, 128, 128), (1, 512, 32, 512), (1, 512, 512, 512)]),
    # conv2d_nhwc with groups=4 (GRP) and dilation=2 (DIL)
    "GRP": (conv2d_nhwc, [(1, 56, 56, 64, 128, 3, 2, 1, 1, 4)]),
    "DIL": (conv2d_nhwc, [(1, 224, 224, 3, 64, 7, 2, 3, 2)]),
    "TBG": (transpose_batch_matmul, [(1, 128, 12, 64)]),
    "NRM": (norm_bmn, [(1, 256, 256)]),
}


def create_te_workload(name, idx):
    """The PrimFunc of workload ``name`` (C2D, GMM, GRP, DIL, TBG, NRM) with its ``idx``-th
    shape.

    >>> func = create_te_workload("GMM", 0)  # a 1 x 128 x 128 x 128 batch matmul
    """
    from ....error import TesseraValueError

    if name not in CONFIGS:
        raise TesseraValueError(
            f"te workload {name!r} is not available in tessera (available: {', '.join(sorted(CONFIGS))})"
        )
    func, shapes = CONFIGS[name]
    if not 0 <= idx < len(shapes):
        raise TesseraValueError(f"te workload {name!r} has shapes 0..{len(shapes) - 1}, not {idx}")
    return te.create_prim_func(func(*shapes[idx]))


__all__ = ["CONFIGS", "batch_matmul_nkkm", "conv2d_nhwc", "create_te_workload", "matmul", "matmul_relu",
           "norm_bmn", "softmax_mn", "transpose_batch_matmul"]
