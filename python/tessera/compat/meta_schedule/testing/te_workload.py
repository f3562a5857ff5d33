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


__all__ = ["batch_matmul_nkkm", "conv2d_nhwc", "matmul", "matmul_relu"]
